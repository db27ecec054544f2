import Foundation
import Glibc
import Testing
import TestSupport

/// The services ping systemd's watchdog through `$NOTIFY_SOCKET` (sd_notify's datagrams)
/// while their loop runs: heard here on a socket of the test's own, from the real binary.
@Suite struct ServiceWatchdogTests {
    /// A datagram socket bound at `path`: what systemd listens on.
    final class Listener {
        let fd: Int32
        init(_ path: String) throws {
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (i, b) in path.utf8.enumerated() { raw[i] = b }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            try #require(fd >= 0 && bound == 0, "bind \(path): \(String(cString: strerror(errno)))")
        }
        deinit { close(fd) }
        /// Every datagram waiting.
        func drain() -> [String] {
            var got: [String] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if n <= 0 { return got }
                got.append(String(decoding: buffer[0..<n], as: UTF8.self))
            }
        }
    }

    @Test func theHuntPingsTheWatchdogWhileItsLoopRuns() async throws {
        let scratch = try Scratch("watchdog")
        let path = scratch.path + "/notify"
        let listener = try Listener(path)
        // Quiet: no voice to load before the loop runs (an empty line cache took 1.7 s, and
        // the pings begin with the loop while the duration runs from the start).
        let arguments = ["hunt", "--hci", "simulator", "--duration", "6", "--quiet", "--no-web",
                         "--cache-dir", PirateHunterBinary.lineCache]
        // The unit's own timeout (WatchdogSec=2): a ping every 2/3 s.
        let given = try await PirateHunterBinary.run(arguments, environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "2000000"], timeout: 90)
        #expect(given.status == 0, "\(given.stderr)")
        let pings = listener.drain()
        #expect(!pings.contains { $0.hasPrefix("WATCHDOG_USEC=") }, "\(pings)")
        #expect(pings.filter { $0 == "WATCHDOG=1" }.count >= 4, "\(pings)")
        // No timeout given (the unit's NotifyAccess only): the loop sets its own, then pings.
        let own = try await PirateHunterBinary.run(arguments, environment: ["NOTIFY_SOCKET": path], timeout: 90)
        #expect(own.status == 0, "\(own.stderr)")
        let told = listener.drain()
        #expect(told.first == "WATCHDOG_USEC=120000000", "\(told)")
        #expect(told.dropFirst().first == "WATCHDOG=1", "\(told)")
        // Outside systemd (no socket), and for a timeout meant for another process: nothing.
        let other = try await PirateHunterBinary.run(arguments, environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "1"], timeout: 90)
        #expect(other.status == 0, "\(other.stderr)")
        #expect(listener.drain().first == "WATCHDOG_USEC=120000000")
    }
}
