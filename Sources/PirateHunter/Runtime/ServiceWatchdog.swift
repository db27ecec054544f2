#if canImport(Glibc)
import Glibc
#endif
import POSIX
import Radio

/// systemd's service watchdog, through its notification socket (`$NOTIFY_SOCKET`: the
/// datagrams of sd_notify(3), a stable protocol systemd documents for implementations of
/// their own). While the event loop runs, "WATCHDOG=1" goes out every third of the timeout;
/// a loop that hangs sends no more, and systemd kills the service and starts it again
/// (`Restart=on-failure`): days of running never end in a hunter that is up and deaf.
///
/// The timeout is the unit's (`WatchdogSec=`, given as `$WATCHDOG_USEC`) or, without one,
/// `defaultTimeout`, set from here ("WATCHDOG_USEC=") only once the loop runs: the voice's
/// first rendering at start (minutes on a Pi Zero) is never timed. Without `$NOTIFY_SOCKET`
/// (a terminal, a test) nothing happens.
enum ServiceWatchdog {
    /// Seconds; a reload that renders the voice's lines anew blocks the loop for a while.
    static let defaultTimeout = 120.0

    /// Starts the pings on `loop` (call it as the loop starts); false when there is no
    /// notification socket to ping.
    @discardableResult
    static func start(on loop: EventLoop) -> Bool {
        guard let socket = NotifySocket(environment: getenv("NOTIFY_SOCKET").map { String(cString: $0) }) else { return false }
        // $WATCHDOG_USEC is this process's only when $WATCHDOG_PID (if any) names it.
        let forUs = getenv("WATCHDOG_PID").map { Int32(String(cString: $0)) == getpid() } ?? true
        let unitTimeout = forUs ? getenv("WATCHDOG_USEC").flatMap { Double(String(cString: $0)) }.map { $0 / 1e6 } : nil
        let timeout: Double
        if let unitTimeout, unitTimeout > 0 {
            timeout = unitTimeout
        } else {
            timeout = defaultTimeout
            socket.send("WATCHDOG_USEC=\(Int(defaultTimeout * 1e6))")
        }
        loop.repeatEvery(timeout / 3) { _ in
            socket.send("WATCHDOG=1")
            return true
        }
        return true
    }
}

/// The datagram socket to `$NOTIFY_SOCKET`: a path, or `@name` in the abstract namespace.
final class NotifySocket {
    private let fd: Int32
    private var address = sockaddr_un()
    private let length: socklen_t
    private var failureLogged = false

    init?(environment path: String?) {
        guard let path, path.hasPrefix("/") || path.hasPrefix("@") else { return nil }
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        // A path needs its terminating zero; an abstract name is exactly its bytes.
        guard bytes.count + (abstract ? 0 : 1) <= capacity else { return nil }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let offset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path) ?? 2
        length = socklen_t(offset + bytes.count + (abstract ? 0 : 1))
        let made = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard made >= 0 else { return nil }
        fd = made
    }

    deinit { close(fd) }

    /// One datagram, never blocking; a failure is logged once (the service then goes on
    /// without the watchdog's pings, and systemd restarts it if it asked for them).
    func send(_ text: String) {
        var bytes = Array(text.utf8)
        let sent = try? retryingOnInterrupt("sendto NOTIFY_SOCKET") { () -> Int in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                    sendto(fd, &bytes, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), sa, length)
                }
            }
        }
        if sent == nil, !failureLogged {
            failureLogged = true
            Log.warning("systemd's notification socket: \(text) not sent (\(String(cString: strerror(errno))))")
        }
    }
}
