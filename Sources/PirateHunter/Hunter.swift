#if canImport(Glibc)
import Glibc
#endif
import Audio
import Bluetooth
import Hunt
import Radio
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
    /// Stop by itself after this many seconds (the demo); nil runs until a signal.
    var duration: Double?
    /// Stop this long after the treasure is found (the demo).
    var stopAfterFound: Double?
    /// Reloads what SIGHUP reloads (line packs, voice); nil ignores SIGHUP.
    var reload: (() throws(CLIError) -> HunterSetup)?
}

/// The appliance: one thread runs the loop (controller, timers, signals); the PCM has its own.
/// radio -> sightings -> ranging -> hunt rules -> voice and sound.
final class Hunter {
    private var setup: HunterSetup
    private let loop: EventLoop
    private let signals: SignalSource
    private var session: ScannerSession?
    private var simulator: SimulatedController?
    private var engine: RangingEngine
    private var director: HuntDirector?
    private var voice: PirateVoice?
    private var arrr: PCMBuffer?
    private var audio: ALSAPlayback?
    private var recorder: CaptureFileWriter?
    private var out = StandardOutput()
    /// t = 0 of the JSON and of the ranging clock: when the process set out (before the
    /// voice loaded), so times line up with anything that watched the process start.
    private let start: Double
    private var speechTimer: Int?
    private var exitCode: ExitCode = .ok
    private var adapterWasLost = false
    private var foundAt: Double?
    private var firstScanCommandAt: Double?

    /// Signals must be blocked before any other thread (the PCM's) starts.
    init(setup: HunterSetup, simulator: SimulatedController? = nil) throws(CLIError) {
        self.setup = setup
        do {
            signals = try SignalSource()
            loop = try EventLoop()
        } catch {
            throw CLIError(.software, "event loop: \(error)")
        }
        self.simulator = simulator
        engine = RangingEngine(configuration: setup.ranging, regions: setup.regions)
        director = setup.hunt.map(HuntDirector.init(configuration:))
        start = monotonicSeconds()
        try loadVoice(setup)
        if let playback = setup.playback {
            var configuration = playback
            configuration.sampleRate = voice?.synthesizer.sampleRate ?? configuration.sampleRate
            configuration.log = { Log.warning("audio: " + $0) }
            // Devices without a clock of their own are paced as a card would be.
            if configuration.device.hasPrefix("file:") || configuration.device == "null" { configuration.emulateClock = true }
            audio = ALSAPlayback(configuration: configuration)
        }
        if let path = setup.record {
            do {
                recorder = try CaptureFileWriter(path: path)
            } catch {
                throw CLIError(error.errno == EACCES ? .noPermission : .ioError, "--record \(path): \(error)")
            }
        }
    }

    private func loadVoice(_ setup: HunterSetup) throws(CLIError) {
        guard let configuration = setup.voice else { return }
        do {
            voice = try PirateVoice.load(configuration)
            arrr = try PirateVoice.loadArrr(voicesDirectory: configuration.voicesDirectory, sampleRate: voice?.synthesizer.sampleRate ?? 22050)
        } catch {
            switch error.kind {
            case .missingFile: throw CLIError(.noInput, error.message)
            case .badData: throw CLIError(.config, error.message)
            case .engine: throw CLIError(.unavailable, error.message)
            }
        }
        if let report = voice?.report {
            Log.info("voice ready: \(report.lines) lines (\(report.fromCache) from cache, \(report.synthesized) synthesized)")
        }
    }

    private var now: Double { monotonicSeconds() - start }

    func run() throws(CLIError) -> ExitCode {
        loop.watch(signals.fd) { [unowned self] in
            for signal in signals.drain() { self.signal(signal) }
        }
        let factory: ScannerSession.TransportFactory
        if let simulator {
            let recorded: HCITransport = recorder.map { RecordingTransport(simulator, writer: $0) } ?? simulator
            factory = { () throws(TransportError) -> HCITransport in recorded }
            // The virtual world moves with the clock.
            func tick() {
                simulator.advance(to: monotonicSeconds())
                loop.schedule(after: 0.02) { tick() }
            }
            tick()
        } else {
            factory = setup.transport.factory(recorder: recorder)
        }
        let session = ScannerSession(loop: loop, transport: factory)
        self.session = session
        session.onSighting = { [unowned self] sighting in self.sighting(sighting) }
        session.onStateChange = { [unowned self] state in self.scanner(state) }
        session.onFatal = { [unowned self] error in self.fatal(error) }

        if let director {
            var d = director
            perform(d.handle(.started, at: now))
            self.director = d
        }
        session.start()
        schedulePeriodic()
        if let duration = setup.duration {
            loop.schedule(after: duration) { [unowned self] in self.shutdown(.ok) }
        }
        do {
            try loop.run()
        } catch {
            throw CLIError(.software, "event loop: \(error)")
        }
        return exitCode
    }

    private func schedulePeriodic() {
        // Silence-based decisions (exit, unknown, initial state) and the found timer.
        loop.schedule(after: 0.25) { [unowned self] in
            let t = now
            emit(engine.advance(to: t), at: t)
            if var d = director {
                perform(d.tick(at: t))
                director = d
                if d.treasureFound, foundAt == nil { foundAt = t }
            }
            if let after = setup.stopAfterFound, let foundAt, t - foundAt >= after {
                shutdown(.ok)
                return
            }
            schedulePeriodic()
        }
    }

    private func sighting(_ sighting: BeaconSighting) {
        var s = sighting
        s.time = sighting.time - start
        guard let sample = RangingOutput.sample(s) else { return }
        emit(engine.ingest(sample), at: s.time)
    }

    private func emit(_ events: [RangingEvent], at time: Double) {
        for event in events {
            if setup.json { out.line(RangingOutput.json(event)) }
            if var d = director {
                perform(d.handle(.ranging(event), at: time))
                director = d
            }
            switch event {
            case let .regionEnter(_, region): Log.info("entered region \(region)")
            case let .regionExit(_, region): Log.info("left region \(region)")
            case let .regionState(_, region, state): Log.info("region \(region) is \(state.rawValue)")
            default: break
            }
        }
        if setup.json { out.flush() }
    }

    private func scanner(_ state: ScannerState) {
        switch state {
        case let .scanning(family):
            if firstScanCommandAt == nil { firstScanCommandAt = now }
            Log.info("scanning on \(session?.transport?.name ?? "?") (\(family.rawValue) commands)")
            if adapterWasLost {
                adapterWasLost = false
                say(.adapterBack)
            }
        case let .lost(reason):
            if !adapterWasLost {
                Log.warning("controller unavailable (\(reason)); retrying")
                adapterWasLost = true
                say(.adapterMissing)
            }
        case .connecting, .configuring:
            break
        }
    }

    private func say(_ input: HuntInput) {
        guard var d = director else { return }
        perform(d.handle(input, at: now))
        director = d
    }

    private func fatal(_ error: TransportError) {
        Log.error("\(error)")
        if case .permission = error { shutdown(.noPermission) } else { shutdown(.unavailable) }
    }

    private func perform(_ actions: [HuntAction]) {
        for action in actions {
            switch action {
            case let .sound(name):
                if setup.json {
                    var line = JSONLine()
                    line.add("t", now)
                    line.add("event", "sound")
                    line.add("name", name)
                    out.line(line.line)
                }
                if let arrr, name == "arrr" { audio?.play(arrr, slot: .effect) }
            case let .say(event, _):
                guard let voice else { continue }
                let spoken = voice.line(event)
                if setup.json {
                    var line = JSONLine()
                    line.add("t", now)
                    line.add("event", "say")
                    line.add("event_name", event.rawValue)
                    line.add("text", spoken.text)
                    out.line(line.line)
                }
                Log.info("say [\(event.rawValue)] \(spoken.text)")
                audio?.play(spoken.audio, slot: .speech)
                // The director learns when the line is over from its length.
                if let speechTimer { loop.cancel(speechTimer) }
                speechTimer = loop.schedule(after: spoken.audio.durationSeconds + 0.05) { [unowned self] in
                    speechTimer = nil
                    say(.speechFinished)
                }
            }
        }
        if setup.json { out.flush() }
    }

    private func signal(_ signal: Int32) {
        switch signal {
        case SIGHUP:
            guard let reload = setup.reload else { return }
            do {
                var next = try reload()
                next.reload = reload
                try loadVoice(next)
                setup.voice = next.voice
                if let volume = next.playback?.volumeDB { audio?.setVolume(dB: volume) }
                Log.info("configuration reloaded (ranging state kept)")
            } catch {
                Log.error("reload refused, keeping the running configuration: \(error.message)")
            }
        default:
            Log.info("signal \(signal): stopping")
            shutdown(.ok)
        }
    }

    /// Scanning off on the controller, audio drained within 0.5 s, the recording closed.
    private func shutdown(_ code: ExitCode) {
        exitCode = code
        session?.stop(timeout: 0.5)
        if let audio {
            _ = audio.waitUntilIdle(timeout: .milliseconds(500))
            audio.shutdown()
        }
        do {
            try recorder?.close()
        } catch {
            Log.error("recording: \(error)")
        }
        out.flush()
        loop.stop()
    }
}
