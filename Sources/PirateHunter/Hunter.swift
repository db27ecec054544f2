#if canImport(Glibc)
import Glibc
#endif
import Audio
import Bluetooth
import Game
import Hunt
import QRCode
import Radio
import Ranging
import Simulation
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
    var game: HunterCore.Configuration {
        HunterCore.Configuration(
            regions: regions, ranging: ranging, hunt: hunt,
            announce: announce.map { HunterCore.Announcement(hunterID: $0.hunterID, seconds: $0.seconds, rewardTimeout: $0.rewardTimeout) },
            stopAfterFinish: stopAfterFound)
    }
}

/// A composed line (a clue, a rival's find, the finale), synthesized off the loop.
struct ComposedSpeech: Sendable {
    /// Which line it is: only the latest asked for is played.
    var generation: Int
    var audio: PCMBuffer
}

/// The hunter: carries out what `HunterCore` (the game's rules) decides, on an
/// `ApplianceRuntime` (its loop's thread; the PCM has its own): the controller session in,
/// eSpeak NG and ALSA out, the JSON lines and the log.
final class Hunter {
    private var setup: HunterSetup
    private var core: HunterCore
    private let runtime: ApplianceRuntime
    private var loop: EventLoop { runtime.loop }
    private var session: ControllerSession?
    private var controllerLog = ControllerLog(doing: "scanning")
    /// The trail's lines made when said: the latest asked for, and what comes back.
    private var lineGeneration = 0
    private let composedMailbox: Mailbox<ComposedSpeech>
    /// The reward read out slowly, synthesized on the engine's thread and passed back here.
    private let rewardSpeechMailbox: Mailbox<PCMBuffer>
    private var rewardSpeech: PCMBuffer?
    /// The parents' recorded clues, read at start (and on reload).
    private var recordings: [String: PCMBuffer] = [:]
    private var voice: PirateVoice?
    private var sounds: [Sound: PCMBuffer] = [:]
    private var audio: ALSAPlayback?
    private var speechTimer: Int?
    private var announcementRefused = false
    private var stopping = false
    private var cacheWarnings: Set<String> = []
    /// A line said on the way out (the radio that cannot be used): the exit waits for it.
    private var lastWords = false

    /// The runtime is made first: it blocks signals before the PCM's thread starts here.
    init(setup: HunterSetup, runtime: ApplianceRuntime) throws(CLIError) {
        self.setup = setup
        self.runtime = runtime
        core = HunterCore(configuration: setup.game)
        do {
            rewardSpeechMailbox = try Mailbox()
            composedMailbox = try Mailbox()
        } catch {
            throw CLIError(.software, "event loop: \(error)")
        }
        try loadVoice(setup)
        if let playback = setup.playback {
            var configuration = playback
            configuration.sampleRate = voice?.synthesizer.sampleRate ?? configuration.sampleRate
            configuration.log = { Log.warning("audio: " + $0) }
            if runtime.loop.isVirtual {
                // Virtual time: the loop says how far the clock moved, the PCM writes that much.
                configuration.pacedByCaller = true
            } else if configuration.device.hasPrefix("file:") || configuration.device == "null" {
                // Devices without a clock of their own are paced as a card would be.
                configuration.emulateClock = true
            }
            let audio = ALSAPlayback(configuration: configuration)
            self.audio = audio
            if runtime.loop.isVirtual {
                let start = runtime.start
                runtime.loop.onVirtualAdvance = { audio.advance(toSeconds: $0 - start) }
            }
        }
    }

    private func loadVoice(_ setup: HunterSetup) throws(CLIError) {
        guard let configuration = setup.voice else { return }
        do {
            // On virtual time every run is the same run: the lines too are picked from a seed.
            // Both are loaded before either is used: a reload that fails changes nothing.
            let loaded = runtime.loop.isVirtual
                ? try PirateVoice.load(configuration, random: SplitMix64(seed: 0x50_49_52_41_54_45))
                : try PirateVoice.load(configuration)
            let sound = try PirateVoice.loadArrr(voicesDirectory: configuration.voicesDirectory, sampleRate: loaded.synthesizer.sampleRate)
            let clues = try Self.loadRecordings(setup.hunt, sampleRate: loaded.synthesizer.sampleRate)
            voice = loaded
            sounds = [.arrr: sound]
            recordings = clues
        } catch {
            switch error.kind {
            case .missingFile: throw CLIError(.noInput, error.message)
            case .badData: throw CLIError(.config, error.message)
            case .engine: throw CLIError(.unavailable, error.message)
            }
        }
        if let report = voice?.report {
            Log.info("voice ready: \(report.lines) lines (\(report.fromCache) from cache, \(report.synthesized) synthesized)")
            // Only once per cause: a reload that meets the same cache problem does not repeat it.
            for warning in report.warnings where !cacheWarnings.contains(warning) {
                cacheWarnings.insert(warning)
                Log.warning(warning)
            }
        }
    }

    private var now: Double { runtime.now }

    /// The trail's recorded clues, as the mixer wants them; a file that cannot be read or is
    /// not a WAV is a configuration error naming the step.
    static func loadRecordings(_ hunt: HuntDirector.Configuration?, sampleRate: Int) throws(VoiceError) -> [String: PCMBuffer] {
        var loaded: [String: PCMBuffer] = [:]
        for (i, step) in (hunt?.trail ?? []).enumerated() {
            guard case let .recording(path)? = step.clue, loaded[path] == nil else { continue }
            do {
                loaded[path] = try WAVFile.readForMixer(path: path, rate: sampleRate)
            } catch {
                let missing = error.message.contains(": cannot read")
                throw VoiceError("hunt.trail[\(i)].clue_wav: \(error.message)", kind: missing ? .missingFile : .badData)
            }
        }
        return loaded
    }

    /// Nothing is being said and nothing waits to be (the end of a replay waits for this).
    var isQuiet: Bool { speechTimer == nil && !loop.isAwaitingAnswer }

    /// The capture being replayed is over (the ranging stops judging silence).
    func radioEnded() { run(.radioEnded) }

    private func run(_ input: HunterCore.Input) {
        carryOut(core.handle(input, at: now))
    }

    /// Joins the runtime: the controller session on `source`, the hunt's timers, reload.
    func start(on source: ControllerSource) {
        loop.watch(rewardSpeechMailbox.fd) { [unowned self] in
            for audio in rewardSpeechMailbox.drain() {
                loop.expectationMet()
                rewardSpeech = audio
                run(.rewardReady)
            }
        }
        loop.watch(composedMailbox.fd) { [unowned self] in
            for speech in composedMailbox.drain() {
                loop.expectationMet()
                // A newer line was said meanwhile: this one is stale.
                guard speech.generation == lineGeneration else { continue }
                play(speech.audio)
            }
        }
        var options = ControllerSession.Options()
        options.advertises = (setup.announce?.seconds ?? 0) > 0
        let session = runtime.session(source, settings: ControllerSettings(scanning: .passive), options: options) { report in
            if let failure = report.failure { Log.warning("stopping the controller: \(failure)") }
        }
        self.session = session
        session.onSighting = { [unowned self] sighting in
            var s = sighting
            s.time -= runtime.start
            carryOut(core.handle(.sighting(s), at: s.time))
        }
        session.onReport = { [unowned self] report, _ in run(.report(report)) }
        session.onAdvertisingRefused = { [unowned self] failure in
            guard !announcementRefused else { return }
            announcementRefused = true
            Log.warning("the controller refuses the announcement (\(failure)); the hunt goes on, trying again every \(Int(options.advertisingRetry)) s")
        }
        session.onStateChange = { [unowned self] state in
            let change = controllerLog.update(state, transport: self.session?.transport?.name ?? "?", at: now)
            if case .ready = state {
                run(.radioReady(afterOutage: change == .ready(afterOutage: true)))
            } else if case .lost = change {
                run(.radioLost)
            }
        }
        runtime.onReload = { [unowned self] in reload() }
        runtime.onStop { [unowned self] in
            if let audio {
                // A last line (the radio that cannot be used) is let finish.
                _ = audio.waitUntilIdle(timeout: lastWords ? .seconds(10) : .milliseconds(500))
                audio.shutdown()
            }
        }
        // A radio that cannot be used at all (no Bluetooth, no permission) ends the hunt, and
        // systemd starts it again: the child hears it once per cause and boot, not per restart.
        runtime.onFatal = { [unowned self] error in
            guard BootMemory.firstTime("\(error)") else { return }
            lastWords = true
            run(.radioUnusable)
        }
        schedulePeriodic()
    }

    private func schedulePeriodic() {
        loop.schedule(after: HunterCore.tickInterval) { [unowned self] in
            run(.tick)
            if !stopping { schedulePeriodic() }
        }
    }

    /// What the core decided, done in its order.
    private func carryOut(_ effects: [HunterCore.Effect]) {
        for effect in effects {
            switch effect {
            case let .output(event):
                if setup.json, let line = event.jsonLine { runtime.out.line(line) }
            case let .log(level, message):
                // What was printed before it comes first where both streams meet (a terminal).
                runtime.out.flush()
                switch level {
                case .info: Log.info(message)
                case .warning: Log.warning(message)
                case .error: Log.error(message)
                }
            case let .sound(sound):
                if setup.json, let line = OutputEvent.sound(time: now, sound).jsonLine { runtime.out.line(line) }
                if let buffer = sounds[sound] { audio?.play(buffer, slot: .effect) }
            case let .say(event):
                guard let voice else { continue }
                speak(event, voice: voice)
            case let .tell(event, detail):
                guard let voice else { continue }
                if let text = detail.text(of: event, template: voice.line(event).text) {
                    sayComposed(event, text: text, recording: detail.recording.flatMap { recordings[$0] }, voice: voice)
                } else {
                    speak(event, voice: voice)
                }
            case let .scanActively(active):
                guard var settings = session?.settings else { continue }
                settings.scanning = active ? .active : .passive
                session?.apply(settings)
            case let .advertise(advertisement):
                guard var settings = session?.settings else { continue }
                settings.advertisement = advertisement
                session?.apply(settings)
            case let .reward(text, address):
                showReward(text, address: address)
                readSlowly(text)
            case .stop:
                stopping = true
                runtime.stop(.ok)
            }
        }
        runtime.out.flush()
    }

    /// The reward synthesized slowly off the loop; said once it is back (and the found line is over).
    private func readSlowly(_ text: String) {
        guard let voice else { return }
        let mailbox = rewardSpeechMailbox
        let rate = voice.synthesizer.sampleRate
        // On virtual time the clock waits for the answer.
        loop.expectAnswer()
        voice.speak(untrusted: RewardReading.text(for: SpeechText.sanitize(text)), rateFactor: 0.7) { result in
            mailbox.post((try? result.get()) ?? PCMBuffer(sampleRate: rate))
        }
    }

    /// The reward on stdout (a JSON line, or the text and its QR code on a terminal), in the
    /// log, and as an SVG when asked.
    private func showReward(_ text: String, address: BDAddress?) {
        Log.info("reward: \(text)")
        let code = try? QRCode(encoding: text)
        if setup.json {
            if let line = OutputEvent.reward(time: now, address: address, reward: text).jsonLine { runtime.out.line(line) }
        } else {
            runtime.out.line("reward: \(text)")
            if isatty(1) == 1, let code {
                for row in code.terminalLines(inverted: true) { runtime.out.line(row) }
            }
        }
        runtime.out.flush()
        guard let path = setup.rewardSVG else { return }
        guard let code else { return Log.error("--reward-svg \(path): the reward does not fit a QR code") }
        do {
            try AtomicFile.write(Array(code.svg().utf8), to: path)
            Log.info("reward QR code written to \(path)")
        } catch {
            Log.error("--reward-svg \(path): \(error)")
        }
    }

    /// Says a composed line: printed and logged now, synthesized off the loop, played when back
    /// (then a breath and the parent's recording, if any).
    private func sayComposed(_ event: LineEvent, text: String, recording: PCMBuffer?, voice: PirateVoice) {
        lineGeneration += 1
        let shown = SpeechText.sanitize(text, maxCharacters: Self.composedLimit)
        announce(event, text: shown)
        // The line before it is over as far as the core knows: its timer must not end this one.
        if let speechTimer { loop.cancel(speechTimer) }
        speechTimer = nil
        let mailbox = composedMailbox
        let generation = lineGeneration
        let rate = voice.synthesizer.sampleRate
        loop.expectAnswer()
        voice.speak(untrusted: text, maxCharacters: Self.composedLimit) { result in
            var audio = (try? result.get()) ?? PCMBuffer(sampleRate: rate)
            if let recording, recording.channels == audio.channels {
                audio.samples += [Int16](repeating: 0, count: audio.sampleRate * audio.channels * 4 / 10)
                audio.samples += recording.samples
            }
            mailbox.post(ComposedSpeech(generation: generation, audio: audio))
        }
    }

    /// A parent's clue (400 characters) after the pack's lead-in.
    static let composedLimit = 600

    /// The `say` line and the log line of a line said.
    private func announce(_ event: LineEvent, text: String) {
        if setup.json, let line = OutputEvent.say(time: now, event: event, text: text).jsonLine { runtime.out.line(line) }
        Log.info("say [\(event.rawValue)] \(text)")
    }

    /// Plays a line and tells the core when it is over (from its length).
    private func play(_ sound: PCMBuffer) {
        audio?.play(sound, slot: .speech)
        if let speechTimer { loop.cancel(speechTimer) }
        speechTimer = loop.schedule(after: sound.durationSeconds + 0.05) { [unowned self] in
            speechTimer = nil
            run(.speechFinished)
        }
    }

    /// A pre-rendered line of the pack (the reward's with the reward itself after it).
    private func speak(_ event: LineEvent, voice: PirateVoice) {
        lineGeneration += 1
        var spoken = voice.line(event)
        if event == .reward, let reward = core.reward, let text = rewardSpeech {
            // The pack's lead-in, a breath, then the reward itself, slowly, as plain text.
            var audio = spoken.audio
            audio.samples += [Int16](repeating: 0, count: audio.sampleRate * audio.channels * 4 / 10)
            audio.samples += text.channels == audio.channels ? text.samples : []
            spoken = SpokenLine(event: event, index: spoken.index, text: spoken.text + " " + SpeechText.sanitize(reward), audio: audio)
        }
        announce(event, text: spoken.text)
        play(spoken.audio)
    }

    /// The file again (the flags still win): everything a file change can change is applied
    /// (voice and line pack, volume, and through the core regions, ranging, hunt rules and
    /// the announcement), and the log says what was and what waits for a restart, and why.
    private func reload() {
        guard let reload = setup.reload else { return }
        var next: HunterSetup
        do {
            next = try reload()
            next.reload = reload
            next.rewardSVG = setup.rewardSVG
            next.stopAfterFound = setup.stopAfterFound
            if next.voice != nil { try loadVoice(next) }
        } catch {
            Log.error("reload refused, keeping the running configuration: \(error.message)")
            return
        }
        var applied = next.voice != nil ? ["voice"] : []
        var waiting: [String] = []
        if let volume = next.playback?.volumeDB, volume != setup.playback?.volumeDB {
            audio?.setVolume(dB: volume)
            applied.append("audio.volume_db")
        }
        if next.playback?.device != setup.playback?.device { waiting.append("audio.device (the sound card is opened at start)") }
        if next.transport != setup.transport { waiting.append("transport (the controller is opened at start)") }
        let (game, effects) = core.reconfigure(next.game, at: now)
        setup = next
        carryOut(effects)
        let what = applied + game
        let rest = waiting.isEmpty ? "" : "; not until a restart: " + waiting.joined(separator: ", ")
        Log.info("configuration reloaded: \(what.isEmpty ? "nothing changed" : what.joined(separator: ", "))\(rest)")
    }
}
