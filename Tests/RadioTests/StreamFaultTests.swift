import Bluetooth
import Foundation
import Glibc
import Radio
import Testing

/// A controller on a unix socket that answers every command with success and, once scanning
/// is on, sends `reports` advertising reports with a stray byte before every 20th: what a
/// UART with noise on its line delivers.
final class NoisyController: @unchecked Sendable {
    let path: String
    private let listener: Int32
    private let reports: Int
    private var thread: Thread?

    init(reports: Int) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("noisy-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock").path
        listener = socket(AF_UNIX, streamSocketType, 0)
        self.reports = reports
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in path.utf8.enumerated() { raw[i] = b } }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        guard bound == 0, listen(listener, 1) == 0 else { throw POSIXError(.EADDRINUSE) }
        let thread = Thread { [self] in serve() }
        self.thread = thread
        thread.start()
    }

    deinit {
        close(listener)
        unlink(path)
    }

    static func report(_ n: Int) -> [UInt8] {
        let beacon = IBeacon(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0") ?? UUID(), major: 1, minor: UInt16(n & 0xFFFF), measuredPower: -59)
        let data = beacon.advertisingData
        let parameters: [UInt8] = [0x02, 0x01, 0x03, 0x00, 1, 2, 3, 4, 5, 6, UInt8(data.count)] + data + [0xC0]
        return [0x04, 0x3E, UInt8(parameters.count)] + parameters
    }

    private func serve() {
        let peer = accept(listener, nil, nil)
        guard peer >= 0 else { return }
        defer { close(peer) }
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        var streamed = false
        var random = SystemRandomNumberGenerator()
        while true {
            let n = read(peer, &buffer, buffer.count)
            if n <= 0 { return }
            pending += buffer.prefix(n)
            while pending.count >= 4, pending[0] == 0x01, pending.count >= 4 + Int(pending[3]) {
                let opcode = UInt16(pending[1]) | UInt16(pending[2]) << 8
                let parameters = Array(pending[4..<(4 + Int(pending[3]))])
                pending.removeFirst(4 + Int(pending[3]))
                var extra: [UInt8] = []
                if opcode == HCIOpcode.readLocalSupportedCommands.rawValue { extra = [UInt8](repeating: 0, count: 64) }
                if opcode == HCIOpcode.readBDAddress.rawValue { extra = [1, 2, 3, 4, 5, 6] }
                let answer: [UInt8] = [0x04, 0x0E, UInt8(4 + extra.count), 0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8), 0x00] + extra
                _ = answer.withUnsafeBytes { write(peer, $0.baseAddress, $0.count) }
                if opcode == HCIOpcode.leSetScanEnable.rawValue, parameters.first == 1, !streamed {
                    streamed = true
                    var stream: [UInt8] = []
                    for i in 0..<reports {
                        if i % 20 == 10 { stream.append(UInt8.random(in: 0...255, using: &random)) }
                        stream += Self.report(i)
                    }
                    // In pieces, as a UART delivers them.
                    var offset = 0
                    while offset < stream.count {
                        let end = min(stream.count, offset + 97)
                        _ = stream[offset..<end].withUnsafeBytes { write(peer, $0.baseAddress, $0.count) }
                        offset = end
                        usleep(500)
                    }
                }
            }
        }
    }
}

@Suite struct StreamFaultTests {
    /// One stray byte every 20 reports (every 2 s of a 10 Hz beacon): nearly every report is
    /// still heard, and the damage is logged once, not per byte.
    @Test func aNoisyStreamKeepsItsReportsAndSaysSoOnce() throws {
        let controller = try NoisyController(reports: 600)
        let loop = try EventLoop()
        let session = ControllerSession(loop: loop) { () throws(TransportError) -> HCITransport in
            try H4StreamTransport.unixSocket(path: controller.path)
        }
        var minors = Set<UInt16>()
        var notices: [String] = []
        var lost = 0
        session.onSighting = { if case let .iBeacon(b) = $0.beacon { minors.insert(b.minor) } }
        session.onNotice = { notices.append($0) }
        session.onStateChange = { if case .lost = $0 { lost += 1 } }
        session.start()
        let end = monotonicSeconds() + 20
        while minors.count < 600, monotonicSeconds() < end { try loop.runOnce(timeout: 20) }
        // The last ones may still be on their way.
        let more = monotonicSeconds() + 0.3
        while monotonicSeconds() < more { try loop.runOnce(timeout: 20) }
        #expect(minors.count >= 588, "\(minors.count) of 600 reports heard")
        #expect(notices.count == 1, "\(notices)")
        #expect(notices.first?.contains("lost its framing") == true)
        #expect(lost == 0, "damage is not an adapter loss")
        session.stop()
    }
}

/// A peer that stopped accepting: its listen backlog fills and a blocking connect waits for
/// ever, on the event loop (no lines, no timers, no SIGTERM). Each connect must return or
/// fail at once, the failure a transient one (tried again later).
@Suite struct WedgedPeerTests {
    final class Outcomes: @unchecked Sendable {
        let lock = NSLock()
        var results: [String] = []
        func add(_ s: String) { lock.lock(); results.append(s); lock.unlock() }
        var count: Int { lock.lock(); defer { lock.unlock() }; return results.count }
    }

    @Test func connectingToAPeerThatNeverAcceptsDoesNotBlock() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("wedged-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock").path
        let listener = socket(AF_UNIX, streamSocketType, 0)
        defer { close(listener); unlink(path) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in path.utf8.enumerated() { raw[i] = b } }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        try #require(bound == 0 && listen(listener, 0) == 0)
        let outcomes = Outcomes()
        // On a thread of its own: a connect that blocks must fail the test, not hang it.
        let thread = Thread {
            var held: [H4StreamTransport] = []
            for _ in 0..<6 {
                do {
                    held.append(try H4StreamTransport.unixSocket(path: path))
                    outcomes.add("connected")
                } catch {
                    outcomes.add((error as? TransportError)?.isTransient == true ? "transient" : "fatal: \(error)")
                }
            }
            _ = held
        }
        thread.start()
        let end = Date().addingTimeInterval(10)
        while outcomes.count < 6, Date() < end { usleep(10_000) }
        #expect(outcomes.count == 6, "a connect blocked: \(outcomes.results)")
        #expect(outcomes.results.allSatisfy { $0 == "connected" || $0 == "transient" }, "\(outcomes.results)")
        #expect(outcomes.results.contains("transient"), "the backlog never filled: \(outcomes.results)")
    }
}
