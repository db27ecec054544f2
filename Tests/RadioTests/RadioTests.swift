import Bluetooth
import Foundation
import Glibc
import Radio
import Testing

func treasureBeacon(major: UInt16 = 1, rssi: Int8 = -60) throws -> VirtualBeacon {
    let beacon = IBeacon(uuid: try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")), major: major, minor: 7, measuredPower: -59)
    return VirtualBeacon(
        address: try #require(BDAddress("C0:FF:EE:00:00:0\(major)")), advertisingData: beacon.advertisingData, interval: 0.1
    ) { _, _ in rssi }
}

/// Runs the loop for `seconds` on its own clock, the simulated world moving with it: on
/// virtual time as fast as it computes, on the monotonic clock in real time.
func spin(_ loop: EventLoop, advancing world: @escaping (Double) -> Void, for seconds: Double, until done: () -> Bool = { false }) throws {
    let end = loop.now + seconds
    var running = true
    loop.repeatEvery(0.02) { t in
        if running { world(t) }
        return running
    }
    defer { running = false }
    while loop.now < end && !done() {
        try loop.runOnce(timeout: 10)
    }
}

func spin(_ loop: EventLoop, _ sim: SimulatedController?, for seconds: Double, until done: () -> Bool = { false }) throws {
    try spin(loop, advancing: { sim?.advance(to: $0) }, for: seconds, until: done)
}

/// A loop on virtual time starting at 0 (deterministic; a simulated minute takes milliseconds).
func virtualLoop() throws -> EventLoop { try EventLoop(clock: .virtual(start: 0)) }

@Suite struct EventLoopTests {
    /// A timer as far out as a flag allows (`--duration 1e19`), infinite or NaN, as the
    /// earliest: armed as one that never fires, and the loop runs on (the conversion of its
    /// deadline to the kernel's seconds trapped: a crash of the appliance).
    @Test(arguments: [1e19, Double.infinity, Double.nan])
    func aTimerBeyondWhatTheKernelCountsNeverFiresAndNeverTraps(after: Double) throws {
        let loop = try EventLoop()
        var fired = false
        loop.schedule(after: after) { fired = true }
        try loop.runOnce(timeout: 10)
        let now = monotonicSeconds()
        var soon = false
        loop.schedule(at: now + 0.01) { soon = true }
        let end = monotonicSeconds() + 10
        while !soon && monotonicSeconds() < end { try loop.runOnce(timeout: 100) }
        #expect(soon, "the later timer never ran")
        #expect(!fired)
    }

    @Test func timersRunInDeadlineOrder() throws {
        let loop = try EventLoop()
        var order: [Int] = []
        let now = monotonicSeconds()
        loop.schedule(at: now + 0.03) { order.append(3) }
        loop.schedule(at: now + 0.01) { order.append(1) }
        let cancelled = loop.schedule(at: now + 0.015) { order.append(99) }
        loop.schedule(at: now + 0.02) {
            order.append(2)
        }
        loop.cancel(cancelled)
        let end = monotonicSeconds() + 10
        while order.count < 3 && monotonicSeconds() < end { try loop.runOnce(timeout: 100) }
        #expect(order == [1, 2, 3])
        #expect(loop.timerCount == 0)
    }

    /// Two timers due in one round (the loop woke late): the first cancels the second, which
    /// must not run. It ran: the hunter's speech-end timer, cancelled by the tick that
    /// interrupted its line, ended the next line instead.
    @Test func aTimerCancelledByAnotherDueInTheSameRoundDoesNotRun() throws {
        let loop = try virtualLoop()
        var ran: [String] = []
        var second = 0
        loop.schedule(at: 1) {
            ran.append("first")
            loop.cancel(second)
        }
        // Due together with the first (as on a loop that woke late): one round runs them.
        second = loop.schedule(at: 1) { ran.append("second") }
        loop.schedule(at: 3) { ran.append("third") }
        let end = monotonicSeconds() + 10
        while loop.timerCount > 0 && monotonicSeconds() < end { try loop.runOnce(timeout: 100) }
        #expect(ran == ["first", "third"])
    }

    @Test func mailboxDeliversFromAnotherThreadInOrder() throws {
        let loop = try EventLoop()
        let mailbox = try Mailbox<Int>()
        var got: [Int] = []
        loop.watch(mailbox.fd) { got += mailbox.drain() }
        let thread = Thread { for i in 0..<1000 { mailbox.post(i) } }
        thread.start()
        let deadline = monotonicSeconds() + 10
        while got.count < 1000 && monotonicSeconds() < deadline { try loop.runOnce(timeout: 100) }
        #expect(got == Array(0..<1000))
    }

    @Test func signalsArriveAsEvents() throws {
        let signals = try SignalSource([SIGUSR1])
        let loop = try EventLoop()
        var got: [Int32] = []
        loop.watch(signals.fd) { got += signals.drain() }
        // Directed at this thread, which blocked it (tests run on many threads).
        pthread_kill(pthread_self(), SIGUSR1)
        let deadline = monotonicSeconds() + 5
        while got.isEmpty && monotonicSeconds() < deadline { try loop.runOnce(timeout: 100) }
        #expect(got == [SIGUSR1])
    }

    @Test func virtualTimeJumpsToTheNextDeadline() throws {
        let loop = try virtualLoop()
        var fired: [Double] = []
        loop.schedule(after: 3600) { fired.append(loop.now) }
        loop.schedule(after: 1) { fired.append(loop.now) }
        let started = monotonicSeconds()
        let end = monotonicSeconds() + 10
        while fired.count < 2 && monotonicSeconds() < end { try loop.runOnce(timeout: 100) }
        #expect(fired == [1, 3600])
        #expect(monotonicSeconds() - started < 1, "an hour of virtual time is not waited for")
    }

    @Test func virtualTimeWaitsForAnAnswerAnotherThreadOwes() throws {
        let loop = try virtualLoop()
        let mailbox = try Mailbox<Int>()
        var got: [(Int, Double)] = []
        loop.watch(mailbox.fd) {
            for m in mailbox.drain() {
                got.append((m, loop.now))
                loop.expectationMet()
            }
        }
        var timerAt: Double?
        loop.schedule(after: 0.5) { timerAt = loop.now }
        loop.expectAnswer()
        let thread = Thread {
            usleep(100_000)
            mailbox.post(7)
        }
        thread.start()
        let end = monotonicSeconds() + 10
        while timerAt == nil && monotonicSeconds() < end { try loop.runOnce(timeout: 100) }
        #expect(got.map(\.0) == [7])
        #expect(got.first?.1 == 0, "the clock stood still until the answer came")
        #expect(timerAt == 0.5)
    }

    @Test func idleLoopBlocksInsteadOfSpinning() throws {
        let loop = try EventLoop()
        var fired = false
        loop.schedule(after: 0.2) { fired = true }
        var rounds = 0
        while !fired {
            try loop.runOnce(timeout: -1)
            rounds += 1
        }
        #expect(rounds <= 2, "a blocked poll wakes only for the timer")
    }
}

@Suite struct ControllerSessionTests {
    /// The one real-time run of the simulator transport: the monotonic clock, a timerfd, poll.
    @Test func realTimeSmoke() throws {
        let loop = try EventLoop()
        let sim = try SimulatedController(beacons: [try treasureBeacon()], startTime: monotonicSeconds())
        let session = ControllerSession(loop: loop) { sim }
        var sightings = 0
        session.onSighting = { _ in sightings += 1 }
        let started = monotonicSeconds()
        session.start()
        try spin(loop, sim, for: 1.0)
        let elapsed = monotonicSeconds() - started
        #expect(session.state == .ready(.legacy))
        #expect(sightings >= 5)
        #expect(elapsed >= 0.99, "real time passes on the monotonic clock")
        session.stop()
    }

    @Test(arguments: [CommandFamily.legacy, .extended])
    func scansAndDeliversSightings(_ family: CommandFamily) throws {
        let loop = try virtualLoop()
        let sim = try SimulatedController(family: family, beacons: [try treasureBeacon()], startTime: 0)
        let session = ControllerSession(loop: loop) { sim }
        var sightings: [BeaconSighting] = []
        session.onSighting = { sightings.append($0) }
        session.start()
        try spin(loop, sim, for: 1.5)
        #expect(session.state == .ready(family))
        #expect(sim.scanning)
        #expect(sightings.count >= 8)
        #expect(sightings.allSatisfy { $0.rssi == -60 && $0.report == (family == .legacy ? .legacy : .extended) })
        let opcodes = sim.commandLog.map(\.opcode)
        #expect(opcodes.first == .readLocalSupportedCommands)
        #expect(!opcodes.contains(family == .legacy ? .leSetExtendedScanEnable : .leSetScanEnable))
        session.stop()
        #expect(!sim.scanning, "scanning is switched off on the controller on exit")
    }

    /// A capture or a yard silent for longer than the report watchdog: the watchdog configures
    /// scanning again and virtual time goes on. It once compared `now - lastReport` with the
    /// limit while its timer was due at `lastReport + limit`: for about one last report in
    /// sixteen the two disagree by a rounding, and the watchdog re-armed itself at the same
    /// moment for ever (`replay --hunt` of a walk with a 32 s silence spun at 100 % CPU).
    @Test func longSilencesRearmTheWatchdogWithoutStoppingTime() throws {
        let loop = try virtualLoop()
        let heard = try treasureBeacon()
        // Heard 3 s of every 40 s: a 37 s silence each time, 100 times.
        let beacon = VirtualBeacon(address: heard.address, advertisingData: heard.advertisingData, interval: 0.1) { t, _ in
            t.truncatingRemainder(dividingBy: 40) < 3 ? -60 : nil
        }
        let sim = try SimulatedController(beacons: [beacon], startTime: 0)
        let session = ControllerSession(loop: loop) { sim }
        var sightings = 0
        session.onSighting = { _ in sightings += 1 }
        session.start()
        var running = true
        loop.repeatEvery(0.02) { t in
            if running { sim.advance(to: t) }
            return running
        }
        defer { running = false }
        var rounds = 0
        while loop.now < 4000, rounds < 3_000_000 {
            try loop.runOnce(timeout: 10)
            rounds += 1
        }
        #expect(loop.now >= 4000, "virtual time stopped at \(loop.now) s")
        #expect(session.state == .ready(.legacy))
        #expect(sightings > 100 * 25)
        session.stop()
    }

    @Test func adapterLostAndBackResumesWithinTwoSeconds() throws {
        let loop = try virtualLoop()
        let sim = try SimulatedController(beacons: [try treasureBeacon()], startTime: 0)
        var present = true
        let session = ControllerSession(loop: loop) { () throws(TransportError) -> HCITransport in
            guard present else { throw .notFound("hci0") }
            return sim
        }
        var states: [ControllerState] = []
        session.onStateChange = { states.append($0) }
        var lastSighting = 0.0
        session.onSighting = { lastSighting = $0.time }
        session.start()
        try spin(loop, sim, for: 1)
        #expect(session.state == .ready(.legacy))
        // Unplugged for 4 s: reads fail, reopening fails.
        sim.unplugged = true
        present = false
        try spin(loop, sim, for: 4)
        #expect({ if case .lost = session.state { return true } else { return false } }())
        sim.unplugged = false
        present = true
        let backAt = loop.now
        try spin(loop, sim, for: 3) { lastSighting > backAt }
        #expect(lastSighting > backAt)
        #expect(lastSighting - backAt <= 2.0, "resumes within 2 s of the adapter returning")
        #expect(states.contains { if case .lost = $0 { return true } else { return false } })
        session.stop()
    }

    @Test func refusedCommandIsReportedAndRetried() throws {
        let loop = try virtualLoop()
        let sim = try SimulatedController(beacons: [try treasureBeacon()], startTime: 0)
        sim.refusals[.leSetScanParameters] = .invalidParameters
        let session = ControllerSession(loop: loop) { sim }
        var reasons: [String] = []
        session.onStateChange = { if case let .lost(r) = $0 { reasons.append(r) } }
        session.start()
        try spin(loop, sim, for: 0.2)
        #expect(reasons.first == "LE Set Scan Parameters (0x200b) failed: invalid HCI command parameters (0x12): the controller refuses these parameters")
        sim.refusals = [:]
        try spin(loop, sim, for: 3) { session.state == .ready(.legacy) }
        #expect(session.state == .ready(.legacy))
        session.stop()
    }

    @Test func anotherProgramStoppingScanIsUndone() throws {
        let loop = try virtualLoop()
        let sim = try SimulatedController(beacons: [try treasureBeacon()], startTime: 0)
        let session = ControllerSession(loop: loop) { sim }
        session.start()
        try spin(loop, sim, for: 0.5)
        #expect(sim.scanning)
        let log = sim.commandLog.count
        // The kernel socket's filter shows us the other program's command going by.
        try sim.runForeignCommand(HCICommand.leSetScanEnable(false, filterDuplicates: false))
        try spin(loop, sim, for: 0.5) { sim.scanning }
        #expect(sim.scanning)
        #expect(sim.commandLog.count > log)
        session.stop()
    }
}

@Suite struct H4StreamTransportTests {
    @Test func packetsCutIntoPiecesOverAUnixSocketComeOutWhole() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("h4-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock").path
        let listener = socket(AF_UNIX, streamSocketType, 0)
        #expect(listener >= 0)
        defer {
            close(listener)
            unlink(path)
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in path.utf8.enumerated() { raw[i] = b } }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        #expect(bound == 0)
        #expect(listen(listener, 1) == 0)

        let transport = try H4StreamTransport.unixSocket(path: path)
        let peer = accept(listener, nil, nil)
        #expect(peer >= 0)
        defer { close(peer) }

        // Our command arrives at the peer as H4 bytes.
        try transport.send(HCICommand.readLocalSupportedCommands)
        var buffer = [UInt8](repeating: 0, count: 16)
        let n = read(peer, &buffer, 16)
        #expect(Array(buffer.prefix(max(0, n))) == [0x01, 0x02, 0x10, 0x00])

        // The peer answers with two events, written in three arbitrary pieces.
        let stream: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x02, 0x10, 0x00, 0x04, 0x0F, 0x04, 0x00, 0x01, 0x0C, 0x20]
        var got: [HCIPacket] = []
        for piece in [stream[0..<3], stream[3..<9], stream[9...]] {
            _ = piece.withUnsafeBytes { write(peer, $0.baseAddress, $0.count) }
            usleep(20_000)
            got += try transport.receive()
        }
        #expect(got.map { try? HCIEvent(decoding: $0.bytes[...]).answeredOpcode } == [.readLocalSupportedCommands, .leSetScanEnable])

        close(peer)
        usleep(20_000)
        #expect(throws: TransportError.self) { _ = try transport.receive() }
    }

    @Test func aPathThatCannotFitIsUnsupportedNotRetried() {
        let path = "/tmp/" + String(repeating: "x", count: 120)
        do {
            _ = try H4StreamTransport.unixSocket(path: path)
            Issue.record("connected")
        } catch {
            guard case .unsupported = error else { Issue.record("\(error)"); return }
            #expect(!error.isTransient)
        }
    }

    @Test func missingSocketIsNotFound() {
        #expect(throws: TransportError.notFound("unix:/nonexistent/ctl.sock")) { _ = try H4StreamTransport.unixSocket(path: "/nonexistent/ctl.sock") }
    }
}

@Suite struct KernelHCISocketTests {
    @Test func withoutBluetoothInTheKernelItSaysSo() {
        // On this build machine the kernel has no AF_BLUETOOTH; in the VM test it has.
        do {
            let adapters = try KernelHCISocket.adapters()
            #expect(adapters.allSatisfy { !$0.name.isEmpty })
        } catch {
            if case .unsupported = error { return }
            if case .permission = error { return }
            Issue.record("unexpected \(error)")
        }
    }
}

@Suite struct CaptureFileTests {
    @Test func recordingWritesAFileThatReadsBack() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rec-\(UUID().uuidString).btsnoop").path
        defer { unlink(path) }
        let sim = try SimulatedController(beacons: [try treasureBeacon()])
        let writer = try CaptureFileWriter(path: path)
        let recording = RecordingTransport(sim, writer: writer)
        try recording.send(HCICommand.leSetScanEnable(true, filterDuplicates: false))
        sim.advance(to: 1)
        let received = try recording.receive()
        #expect(!FileManager.default.fileExists(atPath: path), "the file gets its name only when complete")
        recording.close()
        try writer.close()
        var reader = try CaptureFileReader(path: path)
        var packets: [HCIPacket] = []
        while let record = try reader.next() {
            if let p = try record.packet(datalink: .h4) { packets.append(p) }
        }
        reader.close()
        #expect(packets.count == 1 + received.count)
        #expect(packets.first?.type == .command)
        #expect(Array(packets.dropFirst()) == received)
    }
}
