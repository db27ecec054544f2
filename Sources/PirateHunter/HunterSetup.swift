import Audio
import Game
import GameKey
import Hunt
import ParentPage
import Ranging
import Voice

/// What the hunter runs with, once configuration and flags are resolved.
struct HunterSetup {
    var transport: TransportSpec = .kernel(adapter: nil)
    var regions: [Region] = []
    var ranging = RangingConfiguration.default
    var hunt: HuntDirector.Configuration?
    var voice: VoiceConfiguration?
    var playback: PlaybackConfiguration?
    var json = false
    var record: String?
    /// A press says the current clue again (nil: no button).
    var button: HunterConfiguration.Button?
    /// Stop by itself after this many seconds (the demo); nil runs until a signal.
    var duration: Double?
    /// Stop this long after the treasure is found (the demo).
    var stopAfterFound: Double?
    /// After the treasure is found: read its reward, announce this hunter (nil: neither).
    var announce: HunterConfiguration.Announce?
    /// Write the reward's QR code here as an SVG.
    var rewardSVG: String?
    /// Reloads what SIGHUP reloads (line packs, voice); nil ignores SIGHUP.
    var reload: (() throws(CLIError) -> HunterSetup)?

    /// The game's part: what `HunterCore` runs with.
    /// The game key (`game.key`); nil: unpaired (nothing from the air believed beyond a
    /// plain beacon's presence).
    var key: GameKey?
    /// Where the announcement challenges start; nil: random (the demo and replay fix it, so
    /// a demo capture replays with its rewards: a real hunt's sealed rewards, answering
    /// random challenges, are replays and are refused).
    var challenge: UInt32?
    /// The parent's page (`web`), the tags the parent named and calibrated, the file (the
    /// page saves the trail into it).
    var web = HunterConfiguration.Web()
    var tags: [HunterConfiguration.Tag] = []
    var file: String?
    /// The page's gate from the wait for a mended file (`hunt --wait-for-fix`): the parent
    /// who mended it stays signed in, with the same code.
    var pageGate: AccessGate?

    var game: HunterCore.Configuration {
        var game = HunterCore.Configuration(
            regions: regions, ranging: ranging, hunt: hunt,
            announce: announce,
            stopAfterFinish: stopAfterFound)
        game.calibrations = tags.calibrations
        return game
    }
}

/// A composed line (a clue, a rival's find, the finale), synthesized off the loop.
struct ComposedSpeech: Sendable {
    /// Which line it is: only the latest asked for is played.
    var generation: Int
    var event: LineEvent
    var speech: Synthesized
}

/// What the engine's thread hands back: the sound, or silence and why there is no sound
/// (logged on the loop: a line the child never hears is said in the journal).
struct Synthesized: Sendable {
    var audio: PCMBuffer
    var failure: VoiceError?

    init(_ result: Result<PCMBuffer, VoiceError>, sampleRate: Int) {
        switch result {
        case .success(let audio): (self.audio, failure) = (audio, nil)
        case .failure(let error): (audio, failure) = (PCMBuffer(sampleRate: sampleRate), error)
        }
    }

    init(audio: PCMBuffer) { (self.audio, failure) = (audio, nil) }

    /// The log line of a failure: what was to be said and why it is silent.
    func failureLine(_ what: String) -> String? {
        failure.map { "voice: \(what) is not said: \($0.message)" }
    }
}
