import Bluetooth
import Foundation
import Radio
import Testing

private let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0") ?? UUID()

private func box(reward: String = "ARRR-GOLD", minor: UInt16 = 7) throws -> ControllerSettings {
    let beacon = IBeacon(uuid: uuid, major: 1, minor: minor, measuredPower: -59)
    return ControllerSettings(
        scanning: .passive,
        advertisement: Advertisement(data: beacon.advertisingData, scanResponse: try TreasureSignals.scanResponse(reward: reward)))
}

private func advertisingSession(_ loop: EventLoop, _ settings: ControllerSettings, _ factory: @escaping ControllerSession.TransportFactory) -> ControllerSession {
    var options = ControllerSession.Options()
    options.advertises = true
    return ControllerSession(loop: loop, settings: settings, options: options, transport: factory)
}

private func spin(_ loop: EventLoop, _ air: SimulatedAir, for seconds: Double, until done: () -> Bool = { false }) throws {
    try spin(loop, advancing: { air.advance(to: $0) }, for: seconds, until: done)
}

@Suite struct AdvertisingSessionTests {
    @Test(arguments: [CommandFamily.legacy, .extended])
    func advertisesTheTreasureAndSwitchesItOffOnStop(_ family: CommandFamily) throws {
        let loop = try virtualLoop()
        let sim = try SimulatedController(family: family, startTime: 0)
        let settings = try box()
        let session = advertisingSession(loop, settings) { sim }
        session.start()
        try spin(loop, sim, for: 2) { session.state == .ready(family) }
        #expect(session.state == .ready(family))
        #expect(sim.advertising && sim.scanning && sim.scannable)
        #expect(sim.advertisingData == settings.advertisement?.data)
        #expect(sim.scanResponseData == settings.advertisement?.scanResponse)
        #expect(abs(sim.advertisingInterval - 0.1) < 0.001)
        #expect(session.stop() == nil)
        #expect(!sim.advertising && !sim.scanning, "advertising and scanning off on exit")
    }

    @Test func aNewRewardIsAdvertisedWithoutTouchingScanning() throws {
        let loop = try virtualLoop()
        let sim = try SimulatedController(startTime: 0)
        let session = advertisingSession(loop, try box()) { sim }
        session.start()
        try spin(loop, sim, for: 2) { session.state == .ready(.legacy) }
        let before = sim.commandLog.count
        session.apply(try box(reward: "NEW-LOOT"))
        try spin(loop, sim, for: 2) { session.applied == (try? box(reward: "NEW-LOOT")) }
        #expect(TreasureSignals.reward(inScanResponse: sim.scanResponseData[...]) == "NEW-LOOT")
        let sent = sim.commandLog.dropFirst(before).map(\.opcode)
        #expect(sent == [.leSetAdvertisingEnable, .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData, .leSetAdvertisingEnable])
        session.stop()
    }

    @Test func readvertisesAfterTheAdapterComesBack() throws {
        let loop = try virtualLoop()
        let sim = try SimulatedController(startTime: 0)
        var present = true
        let session = advertisingSession(loop, try box()) { () throws(TransportError) -> HCITransport in
            guard present else { throw .adapterDown("hci1") }
            return sim
        }
        session.start()
        try spin(loop, sim, for: 2) { session.state == .ready(.legacy) }
        #expect(sim.advertising)
        // The adapter goes down: a fresh controller comes back with advertising off.
        sim.unplugged = true
        present = false
        try spin(loop, sim, for: 1)
        #expect({ if case .lost = session.state { return true } else { return false } }())
        sim.unplugged = false
        try sim.send(HCIPacket(type: .command, bytes: try HCICommand.leSetAdvertisingEnable(false).encoded()))
        _ = try sim.receive()
        #expect(!sim.advertising)
        present = true
        try spin(loop, sim, for: 3) { sim.advertising }
        #expect(sim.advertising, "advertising again once the adapter is back")
        session.stop()
    }

    @Test func anotherProgramSwitchingAdvertisingOffIsUndone() throws {
        let loop = try virtualLoop()
        let sim = try SimulatedController(startTime: 0)
        let session = advertisingSession(loop, try box()) { sim }
        session.start()
        try spin(loop, sim, for: 2) { session.state == .ready(.legacy) }
        try sim.runForeignCommand(.leSetAdvertisingEnable(false))
        #expect(!sim.advertising)
        try spin(loop, sim, for: 1) { sim.advertising }
        #expect(sim.advertising)
        session.stop()
    }

    /// A controller reset by another program (`hciconfig hci0 reset`: no adapter down) or our
    /// advertising sets cleared: the box advertises (and scans) again at once. Only the scan
    /// came back before, by the report watchdog, and the box stayed silent for good.
    @Test(arguments: [HCICommand.reset, .leClearAdvertisingSets])
    func aResetOrClearedSetsByAnotherProgramIsUndone(command: HCICommand) throws {
        let loop = try virtualLoop()
        let sim = try SimulatedController(startTime: 0)
        let session = advertisingSession(loop, try box()) { sim }
        session.start()
        try spin(loop, sim, for: 2) { session.state == .ready(.legacy) }
        let scanned = sim.scanning
        try sim.runForeignCommand(command)
        #expect(!sim.advertising)
        try spin(loop, sim, for: 1) { sim.advertising && sim.scanning == scanned }
        #expect(sim.advertising, "advertising again after \(command.opcode)")
        #expect(sim.scanning == scanned)
        session.stop()
    }

    /// A refusal is the controller answering, not the adapter gone: scanning stays up, the
    /// refusal is reported once per attempt, and the advertisement is tried again later.
    @Test func aRefusedAdvertisementKeepsScanningAndIsRetried() throws {
        let loop = try virtualLoop()
        let sim = try SimulatedController(beacons: [try treasureBeacon()], startTime: 0)
        sim.refusals[.leSetAdvertisingParameters] = .commandDisallowed
        var options = ControllerSession.Options()
        options.advertises = true
        options.advertisingRetry = 0.5
        let session = ControllerSession(loop: loop, settings: try box(), options: options) { sim }
        var refusals: [String] = []
        var states: [ControllerState] = []
        var sightings = 0
        session.onAdvertisingRefused = { refusals.append($0.description) }
        session.onStateChange = { states.append($0) }
        session.onSighting = { _ in sightings += 1 }
        session.start()
        try spin(loop, sim, for: 1.2)
        #expect(refusals.first?.hasPrefix("LE Set Advertising Parameters (0x2006) failed: command disallowed (0x0c)") == true)
        #expect(refusals.count >= 2, "tried again after advertisingRetry")
        #expect(session.state == .ready(.legacy) && sim.scanning && !sim.advertising)
        #expect(sightings > 0, "the scan goes on")
        #expect(!states.contains { if case .lost = $0 { return true } else { return false } }, "not an adapter loss")
        sim.refusals = [:]
        try spin(loop, sim, for: 2) { session.applied == (try? box()) }
        #expect(sim.advertising)
        #expect(session.applied == (try? box()))
        session.stop()
    }

    @Test func anActiveScannerHearsTheRewardAndAPassiveOneDoesNot() throws {
        let start = 0.0
        let air = SimulatedAir(startTime: start) { _, _, _, _ in -55 }
        let boxAddress = try #require(BDAddress("C0:FF:EE:15:60:1D"))
        let boxController = try SimulatedController(family: .extended, address: boxAddress, startTime: start)
        let hunterController = try SimulatedController(family: .legacy, address: try #require(BDAddress("C0:A7:7E:00:00:07")), startTime: start)
        air.join(boxController)
        air.join(hunterController)
        let loop = try virtualLoop()
        let boxSession = advertisingSession(loop, try box()) { boxController }
        let hunterSession = advertisingSession(loop, ControllerSettings(scanning: .passive)) { hunterController }
        var rewards: [String] = []
        var sightings: [BeaconSighting] = []
        hunterSession.onReport = { report, _ in
            if report.isScanResponse, report.address == boxAddress, let r = TreasureSignals.reward(inScanResponse: report.data) { rewards.append(r) }
        }
        hunterSession.onSighting = { sightings.append($0) }
        boxSession.start()
        hunterSession.start()
        try spin(loop, air, for: 1)
        #expect(sightings.count >= 5 && sightings.allSatisfy { $0.address == boxAddress && $0.rssi == -55 })
        #expect(rewards.isEmpty, "a passive scanner sends no scan requests")
        hunterSession.apply(ControllerSettings(scanning: .active))
        try spin(loop, air, for: 1) { !rewards.isEmpty }
        #expect(rewards.first == "ARRR-GOLD")
        // The hunter announces itself; the box hears it.
        var announced: [UInt16] = []
        boxSession.onSighting = {
            if case let .iBeacon(b) = $0.beacon, let h = TreasureSignals.hunter(in: b) { announced.append(h.id) }
        }
        let treasure = IBeacon(uuid: uuid, major: 1, minor: 7, measuredPower: -59)
        hunterSession.apply(ControllerSettings(
            scanning: .passive, advertisement: Advertisement(data: TreasureSignals.announcement(hunterID: 7, treasure: treasure).advertisingData)))
        try spin(loop, air, for: 1) { !announced.isEmpty }
        #expect(announced.first == 7)
        boxSession.stop()
        hunterSession.stop()
        #expect(!boxController.advertising && !hunterController.advertising)
    }
}
