#if canImport(Glibc)
import Glibc
#endif
import Bluetooth
import Radio
import Ranging

/// `pirate-hunter scan [--hci T] [--active] [--json] [--duration S] [--record FILE]`:
/// every beacon in view, live: kind, ids, RSSI, distance with sigma, proximity, age (and
/// names and treasure rewards from scan responses with --active). The tool a parent uses to place the treasure.
enum ScanCommand {
    struct Row {
        var sighting: BeaconSighting
        var range: RangeReport?
    }

    static func run(_ cursor: inout ArgumentCursor) throws(CLIError) -> ExitCode {
        var transportText = "auto"
        var active = false
        var json = false
        var duration: Double?
        var record: String?
        while let argument = cursor.next() {
            switch argument {
            case "--hci": transportText = try cursor.value(for: argument)
            case "--active": active = true
            case "--json": json = true
            case "--record": record = try cursor.value(for: argument)
            case "--duration":
                let text = try cursor.value(for: argument)
                guard let d = Double(text), d > 0 else { throw CLIError(.usage, "scan: --duration '\(text)' is not a positive number of seconds") }
                duration = d
            default: throw CLIError(.usage, "scan: unknown option '\(argument)'")
            }
        }
        guard let spec = TransportSpec(transportText), spec != .simulator else {
            throw CLIError(.usage, "scan: --hci '\(transportText)': expected \(TransportSpec.help)")
        }
        let signals: SignalSource
        let loop: EventLoop
        do {
            signals = try SignalSource()
            loop = try EventLoop()
        } catch {
            throw CLIError(.software, "event loop: \(error)")
        }
        var recorder: CaptureFileWriter?
        if let record {
            do { recorder = try CaptureFileWriter(path: record) } catch { throw CLIError(.ioError, "--record \(record): \(error)") }
        }
        let session = ControllerSession(
            loop: loop, settings: ControllerSettings(scanning: active ? .active : .passive), transport: spec.factory(recorder: recorder))
        let start = monotonicSeconds()
        var engine = RangingEngine(configuration: .default, regions: [])
        var out = StandardOutput()
        var printer = SightingPrinter(json: true)
        var rows: [String: Row] = [:]
        var names: [BDAddress: String] = [:]
        var rewards: [BDAddress: String] = [:]
        var exitCode = ExitCode.ok
        let terminal = isatty(1) == 1 && !json

        func stop(_ code: ExitCode) {
            exitCode = code
            session.stop(timeout: 0.5)
            try? recorder?.close()
            out.flush()
            loop.stop()
        }
        session.onReport = { report, time in
            if let name = AdvertisingData(parsing: report.data).localName, !name.isEmpty {
                names[report.address] = String(name.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(32))
            }
            // A treasure's reward (scan response): printed once per address and text.
            if report.isScanResponse, let reward = TreasureSignals.reward(inScanResponse: report.data), rewards[report.address] != reward {
                rewards[report.address] = reward
                if json {
                    var line = JSONLine()
                    line.add("t", time - start)
                    line.add("event", "reward")
                    line.add("address", report.address.description)
                    line.add("reward", reward)
                    out.line(line.line)
                    out.flush()
                }
            }
        }
        session.onSighting = { sighting in
            var s = sighting
            s.time -= start
            let key = s.beacon.kind + " " + Self.identity(s.beacon)
            rows[key, default: Row(sighting: s)].sighting = s
            if json, let line = printer.line(for: s) { out.line(line) }
            if let sample = RangingOutput.sample(s) {
                for event in engine.ingest(sample) {
                    if case let .range(r) = event {
                        rows[key]?.range = r
                        if json { out.line(RangingOutput.json(event)) }
                    }
                }
            }
            if json { out.flush() }
        }
        var lost = false
        session.onStateChange = { state in
            switch state {
            case let .ready(family):
                lost = false
                Log.info("scanning on \(session.transport?.name ?? "?") (\(family.rawValue)\(active ? ", active" : ""))")
            case let .lost(reason):
                if !lost { Log.warning("controller unavailable (\(reason)); retrying") }
                lost = true
            default: break
            }
        }
        session.onFatal = { error in
            Log.error("\(error)")
            if case .permission = error { stop(.noPermission) } else { stop(.unavailable) }
        }
        loop.watch(signals.fd) {
            if signals.drain().contains(where: { $0 != SIGHUP }) { stop(.ok) }
        }
        if !json {
            func redraw() {
                let now = monotonicSeconds() - start
                var text = terminal ? "\u{1B}[H\u{1B}[2J" : "\n"
                text += "pirate-hunter scan  \(session.transport?.name ?? "no adapter")  \(rows.count) beacon(s)   (Ctrl-C to stop)\n"
                text += SightingPrinter.pad("kind", 15) + SightingPrinter.pad("id", 58) + SightingPrinter.pad("rssi", 6)
                    + SightingPrinter.pad("distance", 18) + SightingPrinter.pad("proximity", 11) + SightingPrinter.pad("age", 7) + "name / reward\n"
                for row in rows.sorted(by: { $0.key < $1.key }).map(\.value) {
                    let s = row.sighting
                    let d = row.range?.distance.map { "\(fixed($0.meters, decimals: 1)) ± \(fixed($0.sigma, decimals: 1)) m" } ?? "-"
                    text += SightingPrinter.pad(s.beacon.kind, 15) + SightingPrinter.pad(Self.identity(s.beacon), 58)
                        + SightingPrinter.pad(s.rssi.map { String($0) } ?? "n/a", 6) + SightingPrinter.pad(d, 18)
                        + SightingPrinter.pad(row.range?.proximity.rawValue ?? "unknown", 11)
                        + SightingPrinter.pad(fixed(now - s.time, decimals: 1) + "s", 7)
                        + [names[s.address], rewards[s.address].map { "reward: \($0)" }].compactMap { $0 }.joined(separator: " ") + "\n"
                }
                out.line(text)
                out.flush()
                loop.schedule(after: terminal ? 0.5 : 2) { redraw() }
            }
            loop.schedule(after: 0.5) { redraw() }
        }
        loop.schedule(after: 1) {
            func advance() {
                let t = monotonicSeconds() - start
                for event in engine.advance(to: t) {
                    if case let .range(r) = event {
                        for (key, row) in rows where RangingOutput.sample(row.sighting)?.key == r.key { rows[key]?.range = r }
                        if json { out.line(RangingOutput.json(event)) }
                    }
                }
                loop.schedule(after: 0.5) { advance() }
            }
            advance()
        }
        if let duration { loop.schedule(after: duration) { stop(.ok) } }
        session.start()
        do {
            try loop.run()
        } catch {
            throw CLIError(.software, "event loop: \(error)")
        }
        return exitCode
    }

    static func identity(_ beacon: Beacon) -> String {
        switch beacon {
        case let .iBeacon(b): return "\(b.uuid.uuidString) \(b.major)/\(b.minor) power \(b.measuredPower)"
        case let .altBeacon(b): return "\(b.id1.uuidString) \(b.id2)/\(b.id3) power \(b.referenceRSSI)"
        case let .eddystone(.uid(namespace, instance, power)): return hexString(namespace) + " " + hexString(instance) + " power \(power)"
        case let .eddystone(.url(url, power)): return url + " power \(power)"
        case .eddystone(.tlm): return "telemetry"
        case let .eddystone(.eid(id, _)): return hexString(id)
        }
    }
}
