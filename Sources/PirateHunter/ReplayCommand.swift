#if canImport(Glibc)
import Glibc
#endif
import Audio
import Bluetooth
import Game
import Radio
import Ranging

/// `pirate-hunter replay FILE [--json] [--region UUID[:MAJOR[:MINOR]] ...]`: every beacon in
/// every advertising report of a btsnoop capture, in capture order, and what the ranging
/// engine makes of the iBeacons, all on the capture's own clock.
enum ReplayCommand {
    struct Options {
        var path: String
        var json = false
        var regions: [Region] = []
        /// `--hunt`: the whole hunt on the capture's clock (what the hunter would have said).
        var hunt = false
        /// `--out F.wav` (with `--hunt`): what would have been heard.
        var out: String?
        /// The configuration flags (with `--hunt`: voice, regions, file).
        var flags = ConfigurationFlags()
    }

    static func parse(_ arguments: ParsedArguments) throws(CLIError) -> Options {
        var options = Options(path: arguments.operand ?? "")
        options.json = arguments.has(Flags.json)
        options.flags = arguments.flags
        options.regions = options.flags.regions
        options.hunt = arguments.has(Flags.hunt)
        options.out = options.flags.out
        let huntOnly = [Flags.config, Flags.out, Flags.language, Flags.voiceDirectory, Flags.cacheDirectory, Flags.noDetector]
        if !options.hunt, let flag = huntOnly.first(where: arguments.has) { throw CLIError(.usage, "\(flag.name) goes with \(Flags.hunt.name)") }
        return options
    }

    /// The log line of a btmon capture of several adapters: which one was replayed.
    static func otherAdapters(_ filter: MonitorAdapterFilter) -> String {
        "the capture holds several adapters: hci\(filter.adapter ?? 0)'s was replayed, \(filter.skipped) event(s) of the others skipped"
    }

    /// The log's words for a capture whose clock jumped `count` times.
    static func clockJumped(_ count: Int) -> String {
        "the capture's clock jumped \(count) time(s) (back, or more than \(Int(CaptureClock.longestGap)) s): replayed as at most \(Int(CaptureClock.longestGap)) s"
    }

    static func openError(_ path: String, _ error: SystemError) -> CLIError {
        switch error.errno {
        case ENOENT, ENOTDIR: return CLIError(.noInput, "\(path): no such file")
        case EACCES, EPERM: return CLIError(.noPermission, "\(path): permission denied")
        case EISDIR: return CLIError(.noInput, "\(path): is a directory, not a capture")
        default: return CLIError(.noInput, "\(path): \(error)")
        }
    }

    static func run(_ arguments: ParsedArguments) throws(CLIError) -> ExitCode {
        let options = try parse(arguments)
        if options.hunt { return try hunt(options) }
        var reader: CaptureFileReader
        do {
            reader = try CaptureFileReader(path: options.path)
        } catch {
            throw openError(options.path, error)
        }
        defer { reader.close() }

        let out = StandardOutput()
        var printer = SightingPrinter(json: options.json)
        var clock = CaptureClock()
        var malformed = 0
        var firstMalformed: String?
        var adapters = MonitorAdapterFilter()
        var failure: CLIError?
        var engine = RangingEngine(configuration: .default, regions: options.regions)
        var lastTime = 0.0
        func emit(_ events: [RangingEvent]) {
            for e in events { out.line(options.json ? OutputEvent.ranging(e).jsonLine ?? "" : RangingOutput.text(e)) }
        }

        var headerPrinted = options.json
        // A reader that went away (`| head`) ends the replay: exit 0, or 74 for a write error.
        while out.failure == nil {
            let record: BTSnoopRecord
            do {
                guard let next = try reader.next() else { break }
                record = next
                if !headerPrinted {
                    out.line(SightingPrinter.tableHeader)
                    headerPrinted = true
                }
            } catch let error as BTSnoopError {
                if case .notBTSnoop = error {
                    failure = CLIError(.dataError, "\(options.path): \(error)")
                } else {
                    failure = CLIError(.dataError, "\(options.path): \(error) (the \(printer.count) sightings before it were printed)")
                }
                break
            } catch {
                failure = CLIError(.ioError, "\(options.path): \(error)")
                break
            }
            let t = clock.seconds(at: record.timestamp)
            if t > lastTime {
                emit(engine.advance(to: t))
                lastTime = t
            }
            guard let datalink = reader.datalink, adapters.accepts(record, datalink: datalink) else { continue }
            do {
                guard let packet = try record.packet(datalink: datalink), packet.type == .event else { continue }
                let event = try HCIEvent(decoding: packet.bytes[...])
                for sighting in BeaconSighting.all(in: event, at: t) {
                    if let line = printer.line(for: sighting) { out.line(line) }
                    emit(engine.ingest(sighting))
                }
            } catch {
                malformed += 1
                if firstMalformed == nil { firstMalformed = "record \(record.number): \(error)" }
            }
        }
        out.flush()
        if adapters.skipped > 0 { Log.info(Self.otherAdapters(adapters)) }
        if clock.jumps > 0 { Log.warning(Self.clockJumped(clock.jumps)) }
        if malformed > 0, let firstMalformed {
            Log.warning("skipped \(malformed) malformed HCI packet(s); first: \(firstMalformed)")
        }
        if let failure { throw failure }
        try out.finish()
        return .ok
    }
}

extension ReplayCommand {
    /// `replay FILE --hunt`: the capture as the controller of a hunter on virtual time: the
    /// same ranging, hunt rules, lines (rendered, so their lengths are real) and output as
    /// `hunt --json`, as fast as it decodes; no sound unless `--out F.wav`.
    static func hunt(_ options: Options) throws(CLIError) -> ExitCode {
        let configuration = try HunterConfiguration.load(flags: options.flags)
        var setup = configuration.hunterSetup()
        setup.web.enabled = false
        setup.record = nil
        setup.challenge = 0
        var staged: SafeFile.Staged?
        if let out = options.out {
            // ALSA's file plugin writes a temporary we created (exclusively, links not
            // followed); it replaces `out` only once the hunt is over.
            let wav = try ApplianceRuntime.stagedWAV(out)
            staged = wav.staged
            setup.playback = PlaybackConfiguration(device: wav.device)
            setup.playback?.volumeDB = configuration.audio.volumeDB
        } else {
            setup.playback = nil
        }
        var runtimeOptions = RuntimeOptions(clock: .virtual(start: 0))
        runtimeOptions.signals = []
        let runtime = try ApplianceRuntime(runtimeOptions)
        let capture: CaptureReplayTransport
        do {
            capture = try CaptureReplayTransport(path: options.path, startTime: runtime.loop.now)
        } catch {
            throw openError(options.path, error)
        }
        let hunter = try Hunter(setup: setup, runtime: runtime)
        // Each record arrives at its own time, the loop's clock stopped there, as a live
        // controller's reports are stamped when they come: the world's 20 ms steps (below,
        // which only watch for the end) would put them on a grid a few ms late (and at spans
        // the ranging compares exactly, such as 2.5 s, on either side by the grid's rounding).
        func deliverOnTime() {
            capture.advance(to: runtime.loop.now)
            guard let next = capture.nextTime else { return }
            _ = runtime.loop.schedule(at: max(next, runtime.loop.now)) { deliverOnTime() }
        }
        deliverOnTime()
        var endedAt: Double?
        hunter.start(on: .inProcess(capture, world: { [unowned hunter] t in
            // The capture is over: the line being said is let finish (30 s at most), then
            // the hunt ends there.
            guard capture.finished else { return }
            if endedAt == nil { hunter.radioEnded() }
            let ended = endedAt ?? t
            endedAt = ended
            if t - ended >= 0.05, hunter.isQuiet || t - ended > 30 { runtime.stop(.ok) }
        }))
        let code = try ApplianceRuntime.writing(staged) { () throws(CLIError) -> ExitCode in
            try runtime.run(keeping: [hunter, capture])
        }
        if capture.adapters.skipped > 0 { Log.info(otherAdapters(capture.adapters)) }
        if capture.clockJumps > 0 {
            Log.warning(Self.clockJumped(capture.clockJumps))
        }
        if capture.malformed > 0 { Log.warning("skipped \(capture.malformed) malformed HCI packet(s)") }
        if let failure = capture.failure {
            throw CLIError(.dataError, "\(options.path): \(failure) (the hunt up to there was printed)")
        }
        return code
    }
}

/// Formats sightings as the `sighting` JSON contract or as a readable table row.
struct SightingPrinter {
    let json: Bool
    private(set) var count = 0

    init(json: Bool) { self.json = json }

    static let tableHeader = pad("t (s)", 10) + pad("kind", 15) + pad("address", 19) + pad("id", 58) + pad("power", 7) + "rssi"

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    mutating func line(for sighting: BeaconSighting) -> String? {
        guard let line = OutputEvent.sighting(sighting).jsonLine else { return nil }
        count += 1
        if json { return line }
        let id: String
        let power: Int
        switch sighting.beacon {
        case let .iBeacon(b):
            power = Int(b.measuredPower)
            id = "\(b.uuid.uuidString) \(b.major)/\(b.minor)"
        case let .altBeacon(b):
            power = Int(b.referenceRSSI)
            id = "\(b.id1.uuidString) \(b.id2)/\(b.id3)"
        case let .eddystone(.uid(namespace, instance, txPower)):
            power = Int(txPower)
            id = hexString(namespace) + " " + hexString(instance)
        case let .eddystone(.url(url, txPower)):
            power = Int(txPower)
            id = url
        case .eddystone(.tlm), .eddystone(.eid):
            return nil
        }
        let t = fixed(sighting.time, decimals: 3)
        return Self.pad(t, 10) + Self.pad(sighting.beacon.kind, 15) + Self.pad(sighting.address.description, 19)
            + Self.pad(id, 58) + Self.pad(String(power), 7) + (sighting.rssi.map { String(Int($0)) } ?? "n/a")
    }
}
