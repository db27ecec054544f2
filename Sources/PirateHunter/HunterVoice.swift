#if canImport(Glibc)
import Glibc
#endif
import Audio
import Bluetooth
import Game
import Hunt
import QRCode
import Radio
import Simulation
import Voice

/// What the hunter says and plays with: the pirate voice with its line pack, the sound
/// effects and the parents' recorded clues, loaded together (a reload that fails changes
/// nothing).
struct HunterVoice {
    var voice: PirateVoice
    var sounds: [Sound: PCMBuffer]
    var recordings: [String: PCMBuffer]

    /// Loads the voice of `setup`; on virtual time every run is the same run, so the lines
    /// too are picked from a seed, and every line is rendered afresh whatever the cache holds
    /// (eSpeak NG's output depends on what it rendered before in the process: a warm cache
    /// moved the demo's lines by up to 0.25 s). Warnings of the line cache are logged once per cause.
    static func load(_ setup: HunterSetup, virtual: Bool, warned: inout Set<String>) throws(CLIError) -> HunterVoice? {
        guard let configuration = setup.voice else { return nil }
        let loaded: HunterVoice
        do {
            let voice = virtual
                ? try PirateVoice.load(configuration, random: SplitMix64(seed: 0x50_49_52_41_54_45), fresh: true)
                : try PirateVoice.load(configuration)
            let arrr = try PirateVoice.loadArrr(voicesDirectory: configuration.voicesDirectory, sampleRate: voice.synthesizer.sampleRate)
            let clues = try loadRecordings(setup.hunt, sampleRate: voice.synthesizer.sampleRate)
            loaded = HunterVoice(voice: voice, sounds: [.arrr: arrr], recordings: clues)
        } catch {
            switch error.kind {
            case .missingFile: throw CLIError(.noInput, error.message)
            case .noPermission: throw CLIError(.noPermission, error.message)
            case .badData: throw CLIError(.config, error.message)
            case .engine: throw CLIError(.unavailable, error.message)
            }
        }
        let report = loaded.voice.report
        Log.info("voice ready: \(report.lines) lines (\(report.fromCache) from cache, \(report.synthesized) synthesized)")
        for warning in report.warnings where !warned.contains(warning) {
            warned.insert(warning)
            Log.warning(warning)
        }
        return loaded
    }

    /// The trail's recorded clues, as the mixer wants them; the first problem
    /// `ConfigurationValidator` finds (the hunt's start has already refused any) is a
    /// configuration error naming the step.
    static func loadRecordings(_ hunt: HuntDirector.Configuration?, sampleRate: Int) throws(VoiceError) -> [String: PCMBuffer] {
        let (recordings, problems) = ConfigurationValidator.clueRecordings(hunt?.trail ?? [], sampleRate: sampleRate)
        if let problem = problems.first {
            let kind: VoiceError.Kind = switch problem.code {
            case .noInput: .missingFile
            case .noPermission: .noPermission
            default: .badData
            }
            throw VoiceError(problem.message, kind: kind)
        }
        return recordings
    }

    /// The hunter's ALSA playback for `configuration` at the voice's rate: on virtual time
    /// the loop says how far the clock moved and the PCM writes that much; devices without a
    /// clock of their own (a file, null) are paced as a card would be.
    static func playback(
        _ configuration: PlaybackConfiguration, sampleRate: Int?, on runtime: ApplianceRuntime,
        observer: (@Sendable (PlaybackEvent) -> Void)? = nil
    ) -> ALSAPlayback {
        var configuration = configuration
        configuration.sampleRate = sampleRate ?? configuration.sampleRate
        configuration.log = { Log.warning("audio: " + $0) }
        configuration.observer = observer
        if runtime.loop.isVirtual {
            configuration.pacedByCaller = true
        } else if configuration.device.hasPrefix("file:") || configuration.device == "null" {
            configuration.emulateClock = true
        }
        let audio = ALSAPlayback(configuration: configuration)
        if runtime.loop.isVirtual {
            let start = runtime.start
            runtime.loop.onVirtualAdvance = { audio.advance(toSeconds: $0 - start) }
        }
        return audio
    }
}

/// The treasure's reward shown: on stdout (a JSON line, or the text and its QR code on a
/// terminal), in the log, and as an SVG when asked.
enum RewardDisplay {
    static func show(_ text: String, address: BDAddress?, at time: Double, json: Bool, svg path: String?, out: StandardOutput) {
        Log.info("reward: \(text)")
        let code = try? QRCode(encoding: text)
        if json {
            if let line = OutputEvent.reward(time: time, address: address, reward: text).jsonLine { out.line(line) }
        } else {
            out.line("reward: \(text)")
            if isatty(1) == 1, let code {
                for row in code.terminalLines(inverted: true) { out.line(row) }
            }
        }
        out.flush()
        guard let path else { return }
        guard let code else { return Log.error("--reward-svg \(path): the reward does not fit a QR code") }
        do {
            try AtomicFile.write(Array(code.svg().utf8), to: path)
            Log.info("reward QR code written to \(path)")
        } catch {
            Log.error("--reward-svg \(path): \(error)")
        }
    }
}
