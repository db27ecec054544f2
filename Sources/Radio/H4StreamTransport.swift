#if canImport(Glibc)
import Glibc
#endif
import Bluetooth
import CLinux

/// A controller at the other end of a byte stream speaking H4: a UART (`serial:/dev/ttyAMA0@115200`)
/// or a unix socket (`unix:/path`). The stream delivers packets in arbitrary pieces; `H4Framer`
/// puts them back together.
public final class H4StreamTransport: HCITransport {
    public let fileDescriptor: Int32
    public let name: String
    private var framer = H4Framer()
    private var closed = false
    /// Packets dropped because the stream lost framing (a garbage type byte).
    public private(set) var framingErrors = 0

    init(fd: Int32, name: String) {
        self.fileDescriptor = fd
        self.name = name
    }

    /// Connects to a unix stream socket.
    public static func unixSocket(path: String) throws(TransportError) -> H4StreamTransport {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(SystemError("socket", errno: errno)) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            Glibc.close(fd)
            throw .notFound("unix socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if result != 0 {
            let code = errno
            Glibc.close(fd)
            switch code {
            case ENOENT, ECONNREFUSED: throw .notFound("unix:\(path)")
            case EACCES, EPERM: throw .permission("unix:\(path)", fix: "give this user access to the socket")
            default: throw .system(SystemError("connect unix:\(path)", errno: code))
            }
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
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
        guard let speed = speeds[baud] else { throw .notFound("unsupported baud rate \(baud)") }
        let fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            switch code {
            case ENOENT, ENODEV: throw .notFound(path)
            case EACCES, EPERM: throw .permission(path, fix: "add the user to the dialout group")
            default: throw .system(SystemError("open \(path)", errno: code))
            }
        }
        var tio = termios()
        if tcgetattr(fd, &tio) == 0 {
            cfmakeraw(&tio)
            cfsetispeed(&tio, speed)
            cfsetospeed(&tio, speed)
            tio.c_cflag |= tcflag_t(CLOCAL) | tcflag_t(CREAD) | tcflag_t(CRTSCTS)
            _ = tcsetattr(fd, TCSANOW, &tio)
            _ = tcflush(fd, TCIOFLUSH)
        }
        return H4StreamTransport(fd: fd, name: "serial:\(path)@\(baud)")
    }

    public func send(_ packet: HCIPacket) throws(TransportError) {
        let bytes = packet.h4Bytes
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in Glibc.write(fileDescriptor, raw.baseAddress.map { $0 + offset }, raw.count - offset) }
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN {
                    var p = pollfd(fd: fileDescriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&p, 1, 100)
                    continue
                }
                throw Self.mapped(code, name)
            }
            offset += n
        }
    }

    public func receive() throws(TransportError) -> [HCIPacket] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { raw in Glibc.read(fileDescriptor, raw.baseAddress, raw.count) }
            if n > 0 {
                framer.append(buffer[0..<n])
                if n < buffer.count { break }
                continue
            }
            if n == 0 { throw .adapterGone("\(name) closed the stream") }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN { break }
            throw Self.mapped(code, name)
        }
        var packets: [HCIPacket] = []
        while true {
            do {
                guard let p = try framer.nextPacket() else { break }
                packets.append(p)
            } catch {
                framingErrors += 1
            }
        }
        return packets
    }

    static func mapped(_ code: Int32, _ name: String) -> TransportError {
        switch code {
        case EPIPE, ECONNRESET, ENODEV, EIO, ENXIO: return .adapterGone(name)
        default: return .system(SystemError(name, errno: code))
        }
    }

    public func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fileDescriptor)
    }

    deinit { close() }
}
