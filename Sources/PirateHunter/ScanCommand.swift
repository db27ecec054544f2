#if canImport(Glibc)
import Glibc
#endif
import Bluetooth
import Game
import Radio
import Ranging
import FoundationEssentials

/// `pirate-hunter scan [--hci T] [--active] [--json] [--duration S] [--record FILE]`:
/// every beacon in view, live: kind, ids, RSSI (the last packet's, and the filtered level the
/// distance comes from: what a parent reads at 1 m to calibrate), distance with sigma, proximity, age (and
/// names and treasure rewards from scan responses with --active). The tool a parent uses to place the treasure.
enum ScanCommand {
    struct Row {
        var sighting: BeaconSighting
        var range: RangeReport?
    }

    /// The addresses one ranged identity (what the engine merges) is heard from: two
    /// transmitters sharing it (two boxes left at the same major and minor, tags at their
    /// factory defaults) alternate many times a second, where one device that rotates its
    /// random address changes once.
    struct Transmitters {
        var address: BDAddress
        var previous: BDAddress?
        /// When the address last changed, newest last (at most 4).
        var changes: [Double] = []

        mutating func heard(_ new: BDAddress, at time: Double) {
            guard new != address else { return }
            previous = address
            address = new
            changes = Array((changes + [time]).suffix(4))
        }

        /// Two of the transmitters when two or more are heard: three changes within 10 s.
        func shared(at now: Double) -> (BDAddress, BDAddress)? {
            guard changes.count >= 3, now - changes[changes.count - 3] <= 10, let previous else { return nil }
            return (address, previous)
        }
    }

    /// A row of the table: a beacon by what it advertises, but an Eddystone TLM frame (its
    /// counters change with every frame) by the transmitter that sends it. Keyed by value,
    /// every TLM frame was a row of its own: the table filled with "telemetry" and the
    /// iBeacons a parent looks for were pushed off the screen.
    enum RowKey: Hashable {
        case beacon(Beacon)
        case telemetry(BDAddress)
    }

    static func rowKey(_ sighting: BeaconSighting) -> RowKey {
        if case .eddystone(.tlm) = sighting.beacon { return .telemetry(sighting.address) }
        return .beacon(sighting.beacon)
    }

    static func run(_ arguments: ParsedArguments) throws(CLIError) -> ExitCode {
        let flags = arguments.flags
        let active = arguments.has(Flags.active)
        let duration = flags.duration
        // The hunter's file: its ranging section is what the parent tunes with scan.
        let configuration = try HunterConfiguration.load(flags: flags)
        var options = RuntimeOptions(record: configuration.record, duration: duration)
        options.clock = try arguments.clock(simulated: configuration.transport == .simulator)
        let runtime = try ApplianceRuntime(options)
        let scanner = Scanner(runtime: runtime, ranging: configuration.ranging, calibrations: configuration.tags.calibrations,
                              json: configuration.json, active: active)
        if configuration.transport == .simulator {
            // The demo's treasure walking by, a 10 Hz beacon standing 2 m away and a 1 Hz one 6 m away.
            let world = DemoWorld(origin: runtime.loop.now)
            do {
                let controller = try SimulatedController(family: .legacy, startTime: runtime.loop.now)
                controller.add(world.walkingTreasure(DemoWorld.treasure))
                let near = IBeacon(uuid: HunterConfiguration.defaultUUID, major: 1, minor: 2, measuredPower: -59)
                controller.add(world.standingBeacon(near.advertisingData, address: DemoWorld.hunterAddress, distance: 2, interval: 0.1))
                let far = IBeacon(uuid: HunterConfiguration.defaultUUID, major: 1, minor: 3, measuredPower: -59)
                controller.add(world.standingBeacon(far.advertisingData, address: SimulatedController.defaultAddress, distance: 6, interval: 1))
                scanner.start(on: .inProcess(controller, world: { controller.advance(to: $0) }), transport: configuration.transport)
            } catch {
                throw CLIError(.software, "simulator: \(error)")
            }
        } else {
            scanner.start(on: .spec(configuration.transport), transport: configuration.transport)
        }
        return try runtime.run(keeping: [scanner])
    }

    /// What `scan` keeps and shows: a row per beacon, names and rewards per address.
    final class Scanner {
        private let runtime: ApplianceRuntime
        private let json: Bool
        private let active: Bool
        private var engine: RangingEngine
        private var printer = SightingPrinter(json: true)
        /// A row per beacon, names and rewards per address: bounded (a street of phones with
        /// random addresses), least recently heard out first, and gone after 5 minutes unheard.
        static let capacity = 256
        static let forgetAfter = 300.0
        private var rows = RecentlyHeardTable<RowKey, Row>(capacity: capacity)
        /// The row of each ranged iBeacon/AltBeacon (range events come by key).
        private var rowOfKey = RecentlyHeardTable<BeaconKey, RowKey>(capacity: capacity)
        private var transmitters = RecentlyHeardTable<BeaconKey, Transmitters>(capacity: capacity)
        private var names = RecentlyHeardTable<BDAddress, String>(capacity: capacity)
        private var rewards = RecentlyHeardTable<BDAddress, String>(capacity: capacity)
        private var session: ControllerSession?
        private var controllerLog: ControllerLog
        private let terminal: Bool

        /// The tags calibrated in the hunter's file: ranged from their measured power, as the
        /// hunt ranges them (the rows show what they advertise).
        private let calibrations: [BeaconKey: Int8]

        init(runtime: ApplianceRuntime, ranging: RangingConfiguration, calibrations: [BeaconKey: Int8], json: Bool, active: Bool) {
            self.runtime = runtime
            self.json = json
            self.active = active
            self.calibrations = calibrations
            engine = RangingEngine(configuration: ranging, regions: [], calibratedBeacons: Set(calibrations.keys))
            controllerLog = ControllerLog(doing: active ? "scanning actively" : "scanning")
            terminal = isatty(1) == 1 && !json
        }

        func start(on source: ControllerSource, transport: TransportSpec) {
            session = runtime.session(
                source, settings: ControllerSettings(scanning: active ? .active : .passive),
                onStopped: { report in if let failure = report.failure { Log.warning("switching scanning off: \(failure)") } },
                events: { [unowned self] event in
                    switch event {
                    case let .report(report, time): self.report(report, at: time - runtime.start)
                    case let .sighting(sighting): self.sighting(sighting)
                    case let .state(state):
                        _ = controllerLog.update(state, transport: session?.transport?.name ?? transport.description, at: runtime.now)
                    case .applied, .advertisingRefused, .fatal, .notice: break
                    }
                })
            if !json { runtime.loop.schedule(after: 0.5) { [unowned self] in redraw() } }
            runtime.loop.schedule(after: 1) { [unowned self] in advance() }
        }

        private func report(_ report: AdvertisingReport, at time: Double) {
            // What the air says reaches a terminal: only printable text (no C0, C1 or bidi
            // controls), at most 32 characters.
            if let name = AdvertisingData(parsing: report.data).localName, let clean = TreasureSignals.printable(Array(name.utf8)[...]) {
                names.set(report.address, String(clean.prefix(32)), at: time)
            }
            // A treasure's reward (scan response): printed once per address and text.
            guard report.isScanResponse, let reward = TreasureSignals.reward(inScanResponse: report.data), rewards[report.address] != reward else { return }
            rewards.set(report.address, reward, at: time)
            guard json, let line = OutputEvent.reward(time: time, address: report.address, reward: reward).jsonLine else { return }
            runtime.out.line(line)
            runtime.out.flush()
        }

        private func sighting(_ sighting: BeaconSighting) {
            var s = sighting
            s.time -= runtime.start
            // A row per beacon value (its text, kind and identity, is only made to be shown),
            // telemetry a row per transmitter.
            let key = ScanCommand.rowKey(s)
            rows.update(key, at: s.time, default: { Row(sighting: s) }) { $0.sighting = s }
            if json, let line = printer.line(for: s) { runtime.out.line(line) }
            if let beacon = BeaconKey(s) {
                rowOfKey.set(beacon, key, at: s.time)
                transmitters.update(beacon, at: s.time, default: { Transmitters(address: s.address) }) { $0.heard(s.address, at: s.time) }
                emit(engine.ingest(s.calibrated(by: calibrations)))
            }
            if json { runtime.out.flush() }
        }

        private func emit(_ events: [RangingEvent]) {
            for event in events {
                guard case let .range(r) = event else { continue }
                if let key = rowOfKey[r.key] { rows.modify(key) { $0.range = r } }
                if json, let line = OutputEvent.ranging(event).jsonLine { runtime.out.line(line) }
            }
        }

        private func advance() {
            let now = runtime.now
            emit(engine.advance(to: now))
            let before = now - Self.forgetAfter
            rows.removeHeard(before: before)
            rowOfKey.removeHeard(before: before)
            transmitters.removeHeard(before: before)
            names.removeHeard(before: before)
            rewards.removeHeard(before: before)
            if json { runtime.out.flush() }
            runtime.loop.schedule(after: 0.5) { [unowned self] in advance() }
        }

        private func redraw() {
            let now = runtime.now
            var text = terminal ? "\u{1B}[H\u{1B}[2J" : "\n"
            text += "pirate-hunter scan  \(session?.transport?.name ?? "no adapter")  \(rows.count) beacon(s)   (Ctrl-C to stop)\n"
            let shown = rows.entries.map { (key: $0.value.sighting.beacon.kind + " " + ScanCommand.identity($0.value.sighting.beacon), value: $0.value) }
                .sorted { $0.key < $1.key }.prefix(terminal ? 60 : Self.capacity)
            // The identity column fits the longest shown (five-digit major and minor, a long
            // Eddystone URL), so every row's numbers sit under their header.
            let idWidth = max(58, (shown.map { ScanCommand.identity($0.value.sighting.beacon).count }.max() ?? 0) + 2)
            text += SightingPrinter.pad("kind", 15) + SightingPrinter.pad("region (paste into the trail) / id", idWidth) + SightingPrinter.pad("rssi", 6)
                + SightingPrinter.pad("level", 7) + SightingPrinter.pad("distance", 18) + SightingPrinter.pad("proximity", 11) + SightingPrinter.pad("age", 7) + "name / reward\n"
            for row in shown.map(\.value) {
                let s = row.sighting
                let d = row.range?.distance.map { "\(fixed($0.meters, decimals: 1)) ± \(fixed($0.sigma, decimals: 1)) m" } ?? "-"
                text += SightingPrinter.pad(s.beacon.kind, 15) + SightingPrinter.pad(ScanCommand.identity(s.beacon), idWidth)
                    + SightingPrinter.pad(s.rssi.map { String($0) } ?? "n/a", 6)
                    + SightingPrinter.pad(row.range.flatMap { $0.rssi.isFinite ? String(Int($0.rssi.rounded())) : nil } ?? "-", 7) + SightingPrinter.pad(d, 18)
                    + SightingPrinter.pad(row.range?.proximity.rawValue ?? "unknown", 11)
                    + SightingPrinter.pad(fixed(now - s.time, decimals: 1) + "s", 7)
                let twins = BeaconKey(s).flatMap { transmitters[$0]?.shared(at: now) }
                text += [twins.map { "TWO TRANSMITTERS (\($0.0), \($0.1)) share this identity: give each its own major/minor" },
                       names[s.address], rewards[s.address].map { "reward: \($0)" }].compactMap { $0 }.joined(separator: " ") + "\n"
            }
            runtime.out.line(text)
            runtime.out.flush()
            runtime.loop.schedule(after: terminal ? 0.5 : 2) { [unowned self] in redraw() }
        }
    }

    /// What a parent pastes into `regions` or a trail step to hunt this one beacon:
    /// `UUID:MAJOR:MINOR` (any iBeacon can be a treasure: a tag, a phone's advertiser app).
    static func regionText(uuid: UUID, major: UInt16, minor: UInt16) -> String {
        OutputEvent.regionText(uuid: uuid, major: major, minor: minor)
    }

    static func identity(_ beacon: Beacon) -> String {
        switch beacon {
        case let .iBeacon(b): return regionText(uuid: b.uuid, major: b.major, minor: b.minor) + "  power \(b.measuredPower)"
        case let .altBeacon(b): return regionText(uuid: b.id1, major: b.id2, minor: b.id3) + "  power \(b.referenceRSSI)"
        case let .eddystone(.uid(namespace, instance, power)): return hexString(namespace) + " " + hexString(instance) + " power \(power)"
        case let .eddystone(.url(url, power)): return url + " power \(power)"
        case .eddystone(.tlm): return "telemetry"
        case let .eddystone(.eid(id, _)): return hexString(id)
        }
    }
}
