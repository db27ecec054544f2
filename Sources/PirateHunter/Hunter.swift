#if canImport(Glibc)
import Glibc
#endif
import Audio
import Bluetooth
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
}

/// The tags (what a finder announces, `TreasureSignals.tag`) of a trail's steps that name
/// one beacon (`UUID:MAJOR:MINOR`): tag -> step (0-based).
enum TrailTags {
    static func named(_ trail: [TrailStep]) -> [UInt16: Int] {
        var tags: [UInt16: Int] = [:]
        for (i, step) in trail.enumerated() {
            guard let major = step.region.major, let minor = step.region.minor else { continue }
            tags[TreasureSignals.tag(of: IBeacon(uuid: step.region.uuid, major: major, minor: minor, measuredPower: -59))] = i
        }
        return tags
    }
}

/// A composed line (a clue, a rival's find, the finale), synthesized off the loop.
struct ComposedSpeech: Sendable {
    /// Which line it is: only the latest asked for is played.
    var generation: Int
    var audio: PCMBuffer
}

/// The hunter: radio -> sightings -> ranging -> hunt rules -> voice and sound, on an
/// `ApplianceRuntime` (its loop's thread; the PCM has its own).
final class Hunter {
    private var setup: HunterSetup
    private let runtime: ApplianceRuntime
    private var loop: EventLoop { runtime.loop }
    private var session: ControllerSession?
    private var controllerLog = ControllerLog(doing: "scanning")
    /// Says a lost radio only when it stays lost (a flaky adapter must not chatter).
    private var outage = OutageAnnouncer()
    private var handoff: RewardHandoff?
    /// Finds handed to the reward handoff so far (the director counts them).
    private var handledFinds = 0
    /// The trail's lines made when said: the latest asked for, and what comes back.
    private var lineGeneration = 0
    private let composedMailbox: Mailbox<ComposedSpeech>
    /// The parents' recorded clues, read at start (and on reload).
    private var recordings: [String: PCMBuffer] = [:]
    /// Each hunted region's nearest beacon, as the ranging engine says (one per region).
    private var nearestByRegion: [String: BeaconKey] = [:]
    /// Which trail step a treasure's tag names (the tag is what a hunter announces): from
    /// the steps naming one beacon, and from the beacons heard. Bounded: tags come from the air.
    private var stepOfTag = RecentlyHeardTable<UInt16, Int>(capacity: 64)
    /// Who found what: this hunter's finds and the rivals' it hears.
    private var standings = Standings()
    /// The beacons of the hunted region heard: where each advertises from, what it
    /// advertises. Anyone can advertise the region's UUID with made-up ids: bounded, the
    /// least recently heard out first, the nearest and the last heard kept.
    private var heard = RecentlyHeardTable<BeaconKey, (address: BDAddress, beacon: IBeacon)>(capacity: 64)
    private var lastHeard: BeaconKey?
    /// The treasure that was found (the nearest when it was): its reward is read from its
    /// address only, and the announcement names it.
    private var foundTreasure: (address: BDAddress, beacon: IBeacon)?
    /// The reward read out slowly, synthesized on the engine's thread and passed back here.
    private var rewardSpeech: PCMBuffer?
    /// The tags of the steps that name one beacon (UUID:MAJOR:MINOR), kept in `stepOfTag` for good.
    private var namedTags: [UInt16: Int] = [:]
    private let rewardSpeechMailbox: Mailbox<PCMBuffer>
    private var announcementRefused = false
    private var engine: RangingEngine
    private var director: HuntDirector?
    private var voice: PirateVoice?
    private var arrr: PCMBuffer?
    private var audio: ALSAPlayback?
    private var speechTimer: Int?
    private var foundAt: Double?
    private var startupSaid = false
    private var cacheWarnings: Set<String> = []
    /// A line said on the way out (the radio that cannot be used): the exit waits for it.
    private var lastWords = false

    /// The runtime is made first: it blocks signals before the PCM's thread starts here.
    init(setup: HunterSetup, runtime: ApplianceRuntime) throws(CLIError) {
        self.setup = setup
        self.runtime = runtime
        do {
            rewardSpeechMailbox = try Mailbox()
            composedMailbox = try Mailbox()
        } catch {
            throw CLIError(.software, "event loop: \(error)")
        }
        handoff = setup.announce.map {
            RewardHandoff(configuration: RewardHandoff.Configuration(rewardTimeout: $0.rewardTimeout, announceSeconds: $0.seconds))
        }
        engine = RangingEngine(configuration: setup.ranging, regions: setup.regions)
        director = setup.hunt.map(HuntDirector.init(configuration:))
        heard.isProtected = { [unowned self] key in key == lastHeard || nearestByRegion.values.contains(key) }
        stepOfTag.isProtected = { [unowned self] tag in namedTags[tag] != nil }
        namedTags = Self.namedTags(setup.hunt)
        for (tag, step) in namedTags { stepOfTag.set(tag, step, at: 0) }
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
            arrr = sound
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

    static func namedTags(_ hunt: HuntDirector.Configuration?) -> [UInt16: Int] { TrailTags.named(hunt?.trail ?? []) }

    /// Nothing is being said and nothing waits to be (the end of a replay waits for this).
    var isQuiet: Bool { speechTimer == nil && !loop.isAwaitingAnswer }

    /// The capture being replayed is over: its end is not a silence of the beacons, so the
    /// ranging stops judging silence (no made-up exits while the last line finishes).
    func radioEnded() { rangingStopped = true }
    private var rangingStopped = false

    /// Joins the runtime: the controller session on `source`, the hunt's timers, reload.
    func start(on source: ControllerSource) {
        loop.watch(rewardSpeechMailbox.fd) { [unowned self] in
            for audio in rewardSpeechMailbox.drain() {
                loop.expectationMet()
                rewardSpeech = audio
                say(.rewardHeard)
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
        session.onSighting = { [unowned self] sighting in self.sighting(sighting) }
        session.onReport = { [unowned self] report, _ in self.report(report) }
        session.onAdvertisingRefused = { [unowned self] failure in
            guard !announcementRefused else { return }
            announcementRefused = true
            Log.warning("the controller refuses the announcement (\(failure)); the hunt goes on, trying again every \(Int(options.advertisingRetry)) s")
        }
        session.onStateChange = { [unowned self] state in self.scanner(state) }
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
            say(.adapterMissing)
        }
        // The start-up line waits for the radio: "the hunt begins" is true only once scanning.
        schedulePeriodic()
    }

    private func schedulePeriodic() {
        // Silence-based decisions (exit, unknown, initial state) and the found timer.
        loop.schedule(after: 0.25) { [unowned self] in
            let t = now
            if !rangingStopped { emit(engine.advance(to: t), at: t) }
            if outage.tick(at: t) == .missing { say(.adapterMissing) }
            if var d = director {
                perform(d.tick(at: t))
                director = d
                if d.findCount > handledFinds {
                    handledFinds = d.findCount
                    found(step: d.lastFoundStep, at: t)
                }
                if director?.huntOver == true, foundAt == nil { foundAt = t }
            }
            if var h = handoff {
                let actions = h.tick(at: t)
                handoff = h
                perform(actions)
            }
            if let after = setup.stopAfterFound, let foundAt, t - foundAt >= after {
                runtime.stop(.ok)
                return
            }
            schedulePeriodic()
        }
    }

    /// The director found a treasure (step `step` of the trail, or the chest): the treasure
    /// is the found region's nearest beacon; its reward is read, this hunter announced, the
    /// standings updated.
    private func found(step: Int?, at t: Double) {
        let region = step.flatMap { s in setup.hunt?.trail.indices.contains(s) == true ? setup.hunt?.trail[s].region : nil }
            ?? setup.regions.first
        let previous = foundTreasure?.address
        if let key = region.flatMap({ nearestByRegion[$0.name] }) ?? lastHeard.flatMap({ k in region?.contains(k) == true ? k : nil }) {
            foundTreasure = heard[key]
        }
        if let id = setup.announce?.hunterID, standings.record(hunter: id, treasure: (step ?? 0) + 1, at: t) { printStandings() }
        guard var h = handoff else {
            say(.rewardAbsent)
            return
        }
        // Another treasure of the trail: its own reward, and the announcement names it.
        if step != nil, foundTreasure?.address != previous { h = RewardHandoff(configuration: h.configuration) }
        let actions = h.found(at: t)
        handoff = h
        perform(actions)
        if !actions.contains(.scanActively(true)) { say(.rewardAbsent) }
    }

    private func printStandings() {
        guard setup.json else { return }
        runtime.out.line(JSONLine.standings(standings, at: now))
        runtime.out.flush()
    }

    /// Another hunter's announcement: it found the treasure its tag names.
    private func rival(_ id: UInt16, tag: UInt16, at t: Double) {
        guard id != setup.announce?.hunterID, let step = stepOfTag[tag] else { return }
        if standings.record(hunter: id, treasure: step + 1, at: t) {
            Log.info("hunter \(id) found treasure \(step + 1)")
            printStandings()
        }
        say(.rivalFound(hunter: id, step: step))
    }

    private func sighting(_ sighting: BeaconSighting) {
        if case let .iBeacon(beacon) = sighting.beacon {
            let key = BeaconKey(uuid: beacon.uuid, major: beacon.major, minor: beacon.minor)
            if setup.regions.contains(where: { $0.contains(key) }) {
                heard.set(key, (sighting.address, beacon), at: sighting.time)
                lastHeard = key
                if let trail = setup.hunt?.trail, let step = trail.firstIndex(where: { $0.region.contains(key) }) {
                    let tag = TreasureSignals.tag(of: beacon)
                    if namedTags[tag] == nil { stepOfTag.set(tag, step, at: sighting.time) }
                }
            } else if let (id, tag) = TreasureSignals.hunter(in: beacon) {
                rival(id, tag: tag, at: sighting.time - runtime.start)
            }
        }
        var s = sighting
        s.time = sighting.time - runtime.start
        guard let sample = RangingOutput.sample(s) else { return }
        emit(engine.ingest(sample), at: s.time)
    }

    private func emit(_ events: [RangingEvent], at time: Double) {
        for event in events {
            if setup.json { runtime.out.line(RangingOutput.json(event)) }
            // The director hunts the first region: another region's beacons are not its news.
            let otherRegion: Bool
            if case let .proximity(_, key, _, _) = event {
                // Without a trail the first region is hunted; a trail hunts all its steps'.
                let hunted = setup.hunt?.trail.isEmpty == false ? setup.regions : Array(setup.regions.prefix(1))
                otherRegion = !hunted.contains { $0.contains(key) }
            } else {
                otherRegion = false
            }
            if !otherRegion, var d = director {
                perform(d.handle(.ranging(event), at: time))
                director = d
            }
            switch event {
            case let .nearest(_, region, key):
                if setup.regions.contains(where: { $0.name == region }) { nearestByRegion[region] = key }
            case let .regionEnter(_, region): Log.info("entered region \(region)")
            case let .regionExit(_, region): Log.info("left region \(region)")
            case let .regionState(_, region, state): Log.info("region \(region) is \(state.rawValue)")
            default: break
            }
        }
        if setup.json { runtime.out.flush() }
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
                guard let voice else { continue }
                // On virtual time the clock waits for the answer.
                loop.expectAnswer()
                voice.speak(untrusted: RewardReading.text(for: SpeechText.sanitize(text)), rateFactor: 0.7) { result in
                    mailbox.post((try? result.get()) ?? PCMBuffer(sampleRate: rate))
                }
            case .noReward:
                Log.warning("no reward heard from the treasure (it may have none)")
                say(.rewardAbsent)
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
            runtime.out.line(line.line)
        } else {
            runtime.out.line("reward: \(text)")
            if isatty(1) == 1, let code {
                for row in code.terminalLines(inverted: true) { runtime.out.line(row) }
            }
        }
        runtime.out.flush()
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
        switch controllerLog.update(state, transport: session?.transport?.name ?? "?", at: now) {
        case .ready(afterOutage: true): if outage.back(at: now) == .back { say(.adapterBack) }
        case .lost: outage.lost(at: now)
        case .ready(afterOutage: false), .none: break
        }
        if case .ready = state, !startupSaid {
            startupSaid = true
            say(.started)
        }
    }

    private func say(_ input: HuntInput) {
        guard var d = director else { return }
        perform(d.handle(input, at: now))
        director = d
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
                    runtime.out.line(line.line)
                }
                if let arrr, name == "arrr" { audio?.play(arrr, slot: .effect) }
            case let .tell(event, detail, _):
                guard let voice else { continue }
                if let text = composedText(event, detail, voice: voice) {
                    sayComposed(event, text: text, recording: detail.recording.flatMap { recordings[$0] }, voice: voice)
                } else {
                    speak(event, voice: voice)
                }
            case let .say(event, _):
                guard let voice else { continue }
                speak(event, voice: voice)
            }
        }
        if setup.json { runtime.out.flush() }
    }

    /// The words of a trail line: the parent's (a hint, a found line), or the pack's line
    /// with its placeholders filled (a clue's lead-in, then the parent's clue); nil: a
    /// pre-rendered line of the pack says it.
    private func composedText(_ event: LineEvent, _ detail: LineDetail, voice: PirateVoice) -> String? {
        switch event {
        case .treasureFound, .hint:
            if let text = detail.text { return text }
        case .clue:
            return detail.fill(voice.line(event).text) + (detail.text.map { " " + $0 } ?? "")
        default:
            break
        }
        return event.isComposed ? detail.fill(voice.line(event).text) : nil
    }

    /// Says a composed line: printed and logged now, synthesized off the loop, played when back
    /// (then a breath and the parent's recording, if any).
    private func sayComposed(_ event: LineEvent, text: String, recording: PCMBuffer?, voice: PirateVoice) {
        lineGeneration += 1
        if setup.json {
            var line = JSONLine()
            line.add("t", now)
            line.add("event", "say")
            line.add("event_name", event.rawValue)
            line.add("text", SpeechText.sanitize(text, maxCharacters: Self.composedLimit))
            runtime.out.line(line.line)
        }
        Log.info("say [\(event.rawValue)] \(SpeechText.sanitize(text, maxCharacters: Self.composedLimit))")
        // The line before it is over as far as the director knows: its timer must not end this one.
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

    /// Plays a line and tells the director when it is over (from its length).
    private func play(_ sound: PCMBuffer) {
        audio?.play(sound, slot: .speech)
        if let speechTimer { loop.cancel(speechTimer) }
        speechTimer = loop.schedule(after: sound.durationSeconds + 0.05) { [unowned self] in
            speechTimer = nil
            say(.speechFinished)
        }
    }

    /// A pre-rendered line of the pack (the reward's with the reward itself after it).
    private func speak(_ event: LineEvent, voice: PirateVoice) {
        lineGeneration += 1
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
            runtime.out.line(line.line)
        }
        Log.info("say [\(event.rawValue)] \(spoken.text)")
        // The director learns when the line is over from its length.
        play(spoken.audio)
    }

    /// The file again (the flags still win): everything a file change can change is applied
    /// (voice and line pack, volume, regions and ranging thresholds, hunt rules, the
    /// announcement), and the log says what was and what waits for a restart, and why.
    private func reload() {
        guard let reload = setup.reload else { return }
        var next: HunterSetup
        do {
            next = try reload()
            next.reload = reload
            next.rewardSVG = setup.rewardSVG
            next.stopAfterFound = setup.stopAfterFound
        } catch {
            Log.error("reload refused, keeping the running configuration: \(error.message)")
            return
        }
        var applied: [String] = []
        var waiting: [String] = []
        if next.voice != nil {
            do {
                try loadVoice(next)
                applied.append("voice")
            } catch {
                Log.error("reload refused, keeping the running configuration: \(error.message)")
                return
            }
        }
        if let volume = next.playback?.volumeDB, volume != setup.playback?.volumeDB {
            audio?.setVolume(dB: volume)
            applied.append("audio.volume_db")
        }
        if next.playback?.device != setup.playback?.device {
            waiting.append("audio.device (the sound card is opened at start)")
        }
        if next.transport != setup.transport {
            waiting.append("transport (the controller is opened at start)")
        }
        // New hunt rules start a new director, which must hear the region's state again: the
        // ranging starts over with it.
        if next.regions != setup.regions || next.ranging != setup.ranging || next.hunt != setup.hunt {
            // New regions or thresholds: the engine starts over (its filters and states
            // belong to the old ones); what it says next comes from the new ones.
            engine = RangingEngine(configuration: next.ranging, regions: next.regions)
            nearestByRegion = [:]
            lastHeard = nil
            heard.removeHeard(before: .infinity)
            applied.append(next.regions != setup.regions ? "regions (ranging starts over)" : next.ranging != setup.ranging ? "ranging (it starts over)" : "ranging starts over")
        }
        if next.hunt != setup.hunt || next.regions != setup.regions {
            director = next.hunt.map(HuntDirector.init(configuration:))
            handledFinds = 0
            namedTags = Self.namedTags(next.hunt)
            stepOfTag.removeHeard(before: .infinity)
            for (tag, step) in namedTags { stepOfTag.set(tag, step, at: now) }
            standings = Standings()
            applied.append(next.hunt?.trail.isEmpty == false ? "hunt (the trail starts over)" : "hunt")
        }
        if next.announce != setup.announce {
            handoff = next.announce.map {
                RewardHandoff(configuration: RewardHandoff.Configuration(rewardTimeout: $0.rewardTimeout, announceSeconds: $0.seconds))
            }
            applied.append("announce")
        }
        let restartTrail = director?.progress != nil && (next.hunt != setup.hunt || next.regions != setup.regions)
        setup = next
        // A new trail begins as a hunt does: the start-up line, then its first clue.
        if restartTrail, startupSaid { say(.started) }
        let what = applied.isEmpty ? "nothing changed" : applied.joined(separator: ", ")
        let rest = waiting.isEmpty ? "" : "; not until a restart: " + waiting.joined(separator: ", ")
        Log.info("configuration reloaded: \(what)\(rest)")
    }
}
