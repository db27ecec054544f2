import Bluetooth

/// Why talking to the controller failed, in terms a parent can act on.
public enum TransportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The adapter exists but is down (ENETDOWN), or no adapter is up.
    case adapterDown(String)
    /// The adapter is switched off by rfkill (ERFKILL).
    case blocked(String)
    /// The adapter went away (EPIPE, ENODEV: unplugged, btvirt killed, UART closed).
    case adapterGone(String)
    /// No such adapter or path.
    case notFound(String)
    /// The process lacks a capability or file permission; `fix` says how to grant it.
    case permission(String, fix: String)
    /// This kernel has no Bluetooth sockets at all.
    case unsupported(String)
    case system(SystemError)

    public var description: String {
        switch self {
        case let .adapterDown(s): return "adapter down: \(s)"
        case let .blocked(s): return "adapter blocked: \(s)"
        case let .adapterGone(s): return "adapter lost: \(s)"
        case let .notFound(s): return "not found: \(s)"
        case let .permission(s, fix): return "permission denied: \(s); \(fix)"
        case let .unsupported(s): return "unsupported: \(s)"
        case let .system(e): return e.description
        }
    }

    /// Worth retrying later (the adapter may come back), as opposed to a setup mistake.
    public var isTransient: Bool {
        switch self {
        case .adapterDown, .blocked, .adapterGone, .notFound: return true
        case .system: return true
        case .permission, .unsupported: return false
        }
    }
}

/// A way to a controller: HCI packets out, HCI packets in, and an fd for poll().
/// Implementations: the kernel's raw HCI socket, an H4 byte stream (UART or unix socket),
/// and the simulator.
public protocol HCITransport: AnyObject {
    /// Readable when packets may be waiting.
    var fileDescriptor: Int32 { get }
    /// A name for logs ("hci0", "unix:/run/ctl.sock", "simulator").
    var name: String { get }
    /// Damage to the byte stream under it, if there is one.
    var streamDamage: StreamDamage { get }
    func send(_ packet: HCIPacket) throws(TransportError)
    /// Every packet available now (never blocks; empty when none).
    func receive() throws(TransportError) -> [HCIPacket]
    func close()
}

/// How much a byte stream has been damaged so far (an H4 UART or socket): the session
/// logs it, once and then as a rate-limited summary.
public struct StreamDamage: Equatable, Sendable {
    public var framingErrors = 0
    public var skippedBytes = 0
    public init(framingErrors: Int = 0, skippedBytes: Int = 0) {
        self.framingErrors = framingErrors
        self.skippedBytes = skippedBytes
    }
}

extension HCITransport {
    /// Transports whose packets come whole (the kernel's socket, the simulator) are never damaged.
    public var streamDamage: StreamDamage { StreamDamage() }

    public func send(_ command: HCICommand) throws(TransportError) {
        let bytes: [UInt8]
        do {
            bytes = try command.encoded()
        } catch {
            throw .system(SystemError("encode \(command.opcode)", errno: 22))
        }
        try send(HCIPacket(type: .command, bytes: bytes))
    }
}

/// Records every packet crossing a transport, both ways, to a btsnoop file (Wireshark opens it).
/// The writer outlives the transport (one recording spans reconnections): its owner closes it.
public final class RecordingTransport: HCITransport {
    private let inner: HCITransport
    private let writer: CaptureFileWriter
    private let clock: () -> Int64
    public private(set) var writeError: SystemError?

    /// `clock`: each record's timestamp, microseconds since the Unix epoch (the appliance
    /// gives the wall clock at its start, then its loop's monotonic clock, so NTP setting the
    /// clock mid-capture is no jump in it).
    public init(_ inner: HCITransport, writer: CaptureFileWriter, clock: @escaping () -> Int64 = wallClockMicroseconds) {
        self.inner = inner
        self.writer = writer
        self.clock = clock
    }

    public var fileDescriptor: Int32 { inner.fileDescriptor }
    public var name: String { inner.name }
    public var streamDamage: StreamDamage { inner.streamDamage }

    private func record(_ packet: HCIPacket, received: Bool) {
        guard writeError == nil else { return }
        do {
            try writer.write(packet, received: received, unixMicroseconds: clock())
        } catch {
            writeError = error
        }
    }

    public func send(_ packet: HCIPacket) throws(TransportError) {
        try inner.send(packet)
        record(packet, received: false)
    }

    public func receive() throws(TransportError) -> [HCIPacket] {
        let packets = try inner.receive()
        for p in packets { record(p, received: true) }
        return packets
    }

    public func close() {
        inner.close()
    }
}
