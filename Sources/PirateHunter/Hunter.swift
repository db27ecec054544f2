#if canImport(Glibc)
import Glibc
#endif
import Audio
import Bluetooth
import Hunt
import QRCode
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
    /// After the treasure is found: read its reward, announce this hunter (nil: neither).
    var announce: HunterConfiguration.Announce?
    /// Write the reward's QR code here as an SVG.
    var rewardSVG: String?
    /// Reloads what SIGHUP reloads (line packs, voice); nil ignores SIGHUP.
    var reload: (() throws(CLIError) -> HunterSetup)?
}

/// The appliance: one thread runs the loop (controller, timers, signals); the PCM has its own.
/// radio -> sightings -> ranging -> hunt rules -> voice and sound.
final class Hunter {
    private var setup: HunterSetup
    /// Shared with a simulated treasure box in the demo.
    let loop: EventLoop
    private let signals: SignalSource
    private var session: ControllerSession?
    private var simulator: SimulatedController?
    /// Moves the simulated world (the simulator alone, or the air it shares with a box).
    private var world: ((Double) -> Void)?
    /// Called once when the hunter stops (the demo stops its treasure box with it).
    var onShutdown: () -> Void = {}
    private var handoff: RewardHandoff?
    private var wasFound = false
    /// Every beacon of the hunted region heard: where it advertises from, what it advertises.
    private var heard: [BeaconKey: (address: BDAddress, beacon: IBeacon)] = [:]
    private var lastHeard: BeaconKey?
    /// The region's nearest beacon, as the ranging engine says.
    private var nearestKey: BeaconKey?
    /// The treasure that was found (the nearest when it was): its reward is read from its
    /// address only, and the announcement names it.
    private var foundTreasure: (address: BDAddress, beacon: IBeacon)?
    /// The reward read out slowly, synthesized on the engine's thread and passed back here.
    private var rewardSpeech: PCMBuffer?
    private let rewardSpeechMailbox: Mailbox<PCMBuffer>
    private var announcementRefused = false
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
    init(setup: HunterSetup, simulator: SimulatedController? = nil, air: SimulatedAir? = nil) throws(CLIError) {
        self.setup = setup
        do {
            signals = try SignalSource()
            loop = try EventLoop()
            rewardSpeechMailbox = try Mailbox()
        } catch {
            throw CLIError(.software, "event loop: \(error)")
        }
        self.simulator = simulator
        if let air {
            world = { air.advance(to: $0) }
        } else if let simulator {
            world = { simulator.advance(to: $0) }
        }
        handoff = setup.announce.map {
            RewardHandoff(configuration: RewardHandoff.Configuration(rewardTimeout: $0.rewardTimeout, announceSeconds: $0.seconds))
        }
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
        loop.watch(rewardSpeechMailbox.fd) { [unowned self] in
            for audio in rewardSpeechMailbox.drain() {
                rewardSpeech = audio
                say(.rewardHeard)
            }
        }
        let factory: ControllerSession.TransportFactory
        if let simulator {
            let recorded: HCITransport = recorder.map { RecordingTransport(simulator, writer: $0) } ?? simulator
            factory = { () throws(TransportError) -> HCITransport in recorded }
            // The virtual world moves with the clock.
            if let world { loop.drive(world) }
        } else {
            factory = setup.transport.factory(recorder: recorder)
        }
        var options = ControllerSession.Options()
        options.advertises = (setup.announce?.seconds ?? 0) > 0
        let session = ControllerSession(loop: loop, options: options, transport: factory)
        self.session = session
        session.onSighting = { [unowned self] sighting in self.sighting(sighting) }
        session.onReport = { [unowned self] report, _ in self.report(report) }
        session.onAdvertisingRefused = { [unowned self] failure in
            guard !announcementRefused else { return }
            announcementRefused = true
            Log.warning("the controller refuses the announcement (\(failure)); the hunt goes on, trying again every \(Int(options.advertisingRetry)) s")
        }
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
                if d.treasureFound, !wasFound, var h = handoff {
                    if let key = nearestKey ?? lastHeard { foundTreasure = heard[key] }
                    let actions = h.found(at: t)
                    handoff = h
                    perform(actions)
                }
                wasFound = d.treasureFound
            }
            if var h = handoff {
                let actions = h.tick(at: t)
                handoff = h
                perform(actions)
            }
            if let after = setup.stopAfterFound, let foundAt, t - foundAt >= after {
                shutdown(.ok)
                return
            }
            schedulePeriodic()
        }
    }

    private func sighting(_ sighting: BeaconSighting) {
        if case let .iBeacon(beacon) = sighting.beacon, let region = setup.regions.first {
            let key = BeaconKey(uuid: beacon.uuid, major: beacon.major, minor: beacon.minor)
            if region.contains(key) {
                heard[key] = (sighting.address, beacon)
                lastHeard = key
            }
        }
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
            case let .nearest(_, region, key) where region == setup.regions.first?.name: nearestKey = key
            case let .regionEnter(_, region): Log.info("entered region \(region)")
            case let .regionExit(_, region): Log.info("left region \(region)")
            case let .regionState(_, region, state): Log.info("region \(region) is \(state.rawValue)")
            default: break
            }
        }
        if setup.json { out.flush() }
    }

    /// A scan response from the treasure while listening for its reward.
    private func report(_ report: AdvertisingReport) {
        guard var h = handoff, h.listeningSince != nil, report.isScanResponse, report.address == foundTreasure?.address else { return }
        let actions = h.heard(TreasureSignals.reward(inScanResponse: report.data), at: now)
        handoff = h
        perform(actions)
    }

    private func perform(_ actions: [RewardHandoff.Action]) {
        for action in actions {
            switch action {
            case let .scanActively(active):
                guard var settings = session?.settings else { continue }
                settings.scanning = active ? .active : .passive
                session?.apply(settings)
                Log.info(active ? "treasure found: scanning actively for its reward" : "back to passive scanning")
            case let .announce(on):
                guard var settings = session?.settings, let announce = setup.announce else { continue }
                if on {
                    let treasure = foundTreasure?.beacon ?? IBeacon(uuid: setup.regions.first?.uuid ?? HunterConfiguration.defaultUUID, major: 0, minor: 0, measuredPower: -59)
                    let beacon = TreasureSignals.announcement(hunterID: announce.hunterID, treasure: treasure)
                    settings.advertisement = Advertisement(data: beacon.advertisingData)
                    Log.info("announcing hunter \(announce.hunterID) to the treasure box for \(fixed(announce.seconds, decimals: 0)) s")
                } else {
                    settings.advertisement = nil
                    Log.info("announcement over")
                }
                session?.apply(settings)
            case let .reward(text):
                showReward(text)
                // Synthesized off the loop; said once it is back (and the found line is over).
                let mailbox = rewardSpeechMailbox
                let rate = voice?.synthesizer.sampleRate ?? 22050
                voice?.speak(untrusted: text, rateFactor: 0.7) { result in
                    mailbox.post((try? result.get()) ?? PCMBuffer(sampleRate: rate))
                }
            case .noReward:
                Log.warning("no reward heard from the treasure (it may have none)")
            }
        }
    }

    /// The reward on stdout (a JSON line, or the text and its QR code on a terminal), in the
    /// log, and as an SVG when asked.
    private func showReward(_ text: String) {
        Log.info("reward: \(text)")
        let code = try? QRCode(encoding: text)
        if setup.json {
            var line = JSONLine()
            line.add("t", now)
            line.add("event", "reward")
            if let address = foundTreasure?.address { line.add("address", address.description) }
            line.add("reward", text)
            out.line(line.line)
        } else {
            out.line("reward: \(text)")
            if isatty(1) == 1, let code {
                for row in code.terminalLines(inverted: true) { out.line(row) }
            }
        }
        out.flush()
        if let path = setup.rewardSVG {
            guard let code else {
                Log.error("--reward-svg \(path): the reward does not fit a QR code")
                return
            }
            do {
                try AtomicFile.write(Array(code.svg().utf8), to: path)
                Log.info("reward QR code written to \(path)")
            } catch {
                Log.error("--reward-svg \(path): \(error)")
            }
        }
    }

    private func scanner(_ state: ControllerState) {
        switch state {
        case let .ready(family):
            // Once per connection: not again for each change of scanning mode or announcement.
            guard firstScanCommandAt == nil || adapterWasLost else { break }
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
                var spoken = voice.line(event)
                if event == .reward, let reward = handoff?.reward, let text = rewardSpeech {
                    // The pack's lead-in, a breath, then the reward itself, slowly, as plain text.
                    var audio = spoken.audio
                    audio.samples += [Int16](repeating: 0, count: audio.sampleRate * audio.channels * 4 / 10)
                    audio.samples += text.channels == audio.channels ? text.samples : []
                    spoken = SpokenLine(event: event, index: spoken.index, text: spoken.text + " " + SpeechText.sanitize(reward), audio: audio)
                }
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
        if let failure = session?.stop(timeout: 0.5) { Log.warning("stopping the controller: \(failure)") }
        onShutdown()
        onShutdown = {}
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
