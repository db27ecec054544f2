#if canImport(Glibc)
import Glibc
#endif
import Bluetooth
import CLinux
import POSIX

/// A controller at the other end of a byte stream speaking H4: a UART (`serial:/dev/ttyAMA0@115200`)
/// or a unix socket (`unix:/path`). The stream delivers packets in arbitrary pieces; `H4Framer`
/// puts them back together.
public final class H4StreamTransport: HCITransport {
    public var fileDescriptor: Int32 { fd.rawValue }
    public let name: String
    private let fd: FileDescriptor
    private var framer = H4Framer()
    private var closed = false
    /// The framer's count of lost framings and the bytes it skipped to find it again.
    public var streamDamage: StreamDamage { StreamDamage(framingErrors: framer.framingErrors, skippedBytes: framer.skippedBytes) }
    /// How long `send` waits for the peer (or the UART's flow control) to take bytes before
    /// it reports the stream stuck.
    static let sendTimeoutMilliseconds = 1000

    init(fd: FileDescriptor, name: String) {
        self.fd = fd
        self.name = name
    }

    /// Connects to a unix stream socket.
    public static func unixSocket(path: String) throws(TransportError) -> H4StreamTransport {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        // A path that does not fit never will: not worth retrying.
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw .unsupported("unix socket path longer than \(MemoryLayout.size(ofValue: address.sun_path) - 1) bytes: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let fd: FileDescriptor
        do {
            // Non-blocking from the start: a peer that stopped accepting (its backlog full)
            // makes a blocking connect wait for ever, and it runs on the event loop.
            fd = try FileDescriptor.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, name: "AF_UNIX")
        } catch {
            throw .system(error)
        }
        do {
            // A unix stream connect completes at once or fails (EAGAIN: the peer's backlog is
            // full; tried again later as any lost transport): EINTR leaves nothing half done.
            _ = try retryingOnInterrupt("connect unix:\(path)") {
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(fd.rawValue, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
            }
        } catch {
            fd.close()
            switch error.errno {
            case ENOENT, ECONNREFUSED: throw .notFound("unix:\(path)")
            case EACCES, EPERM: throw .permission("unix:\(path)", fix: "give this user access to the socket")
            default: throw .system(error)
            }
        }
        return H4StreamTransport(fd: fd, name: "unix:\(path)")
    }

    /// Opens a UART in raw mode at `baud` with hardware flow control.
    public static func serial(path: String, baud: Int) throws(TransportError) -> H4StreamTransport {
        let speeds: [Int: speed_t] = [
            9600: speed_t(B9600), 19200: speed_t(B19200), 38400: speed_t(B38400), 57600: speed_t(B57600),
            115200: speed_t(B115200), 230400: speed_t(B230400), 460800: speed_t(B460800),
            921600: speed_t(B921600), 1_000_000: speed_t(B1000000), 2_000_000: speed_t(B2000000),
            3_000_000: speed_t(B3000000),
        ]
        // A rate the UART cannot take never will: not worth retrying.
        guard let speed = speeds[baud] else { throw .unsupported("baud rate \(baud) (\(path))") }
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK)
        } catch {
            switch error.errno {
            case ENOENT, ENODEV: throw .notFound(path)
            case EACCES, EPERM: throw .permission(path, fix: "add the user to the dialout group")
            default: throw .system(error)
            }
        }
        do {
            var tio = termios()
            _ = try retryingOnInterrupt("tcgetattr \(path)") { tcgetattr(fd.rawValue, &tio) }
            cfmakeraw(&tio)
            _ = try retryingOnInterrupt("cfsetispeed") { cfsetispeed(&tio, speed) }
            _ = try retryingOnInterrupt("cfsetospeed") { cfsetospeed(&tio, speed) }
            tio.c_cflag |= tcflag_t(CLOCAL) | tcflag_t(CREAD) | tcflag_t(CRTSCTS)
            _ = try retryingOnInterrupt("tcsetattr \(path)") { tcsetattr(fd.rawValue, TCSANOW, &tio) }
            _ = try retryingOnInterrupt("tcflush \(path)") { tcflush(fd.rawValue, TCIOFLUSH) }
        } catch {
            fd.close()
            // ENOTTY: the path is not a UART.
            throw .system(error)
        }
        return H4StreamTransport(fd: fd, name: "serial:\(path)@\(baud)")
    }

    public func send(_ packet: HCIPacket) throws(TransportError) {
        do {
            try fd.writeAll(packet.h4Bytes, timeoutMilliseconds: Self.sendTimeoutMilliseconds)
        } catch {
            throw Self.mapped(error, name)
        }
    }

    public func receive() throws(TransportError) -> [HCIPacket] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        // At most 64 KiB a call: a peer that floods the stream is read in rounds (poll says
        // it is readable again), so the loop serves its timers and the framer stays small.
        for _ in 0..<16 {
            let read: Int?
            do {
                read = try fd.read(into: &buffer)
            } catch {
                throw Self.mapped(error, name)
            }
            guard let n = read else { break }  // EAGAIN: all read
            if n == 0 { throw .adapterGone("\(name) closed the stream") }
            framer.append(buffer[0..<n])
            if n < buffer.count { break }
        }
        var packets: [HCIPacket] = []
        while true {
            do {
                guard let p = try framer.nextPacket() else { break }
                packets.append(p)
            } catch {
                continue  // counted by the framer (`streamDamage`), which resynced
            }
        }
        return packets
    }

    static func mapped(_ error: SystemError, _ name: String) -> TransportError {
        switch error.errno {
        case EPIPE, ECONNRESET, ENODEV, EIO, ENXIO: return .adapterGone(name)
        default: return .system(SystemError("\(name): \(error.call)", errno: error.errno))
        }
    }

    public func close() {
        guard !closed else { return }
        closed = true
        // A UART whose controller holds its flow-control line keeps unsent bytes, and the
        // kernel's close waits for them (up to 30 s, on the event loop): dropped instead.
        // (Not a terminal, as a unix socket: ENOTTY, nothing to drop.)
        if name.hasPrefix("serial:") { _ = tcflush(fd.rawValue, TCOFLUSH) }
        fd.close()
    }

    deinit { close() }
}
