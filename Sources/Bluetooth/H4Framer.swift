/// One HCI packet with its type: what a raw socket, a UART or a btsnoop record carries.
public struct HCIPacket: Equatable, Sendable {
    public var type: HCIPacketType
    /// The packet after the type byte (header and payload).
    public var bytes: [UInt8]

    public init(type: HCIPacketType, bytes: [UInt8]) {
        self.type = type
        self.bytes = bytes
    }

    /// Splits an H4 packet (type byte first) that arrived whole, e.g. from a raw HCI socket.
    public init(h4: ArraySlice<UInt8>) throws(PacketError) {
        guard let first = h4.first else { throw .truncated(what: "H4 packet type", needed: 1, available: 0) }
        guard let type = HCIPacketType(rawValue: first) else {
            throw .invalidValue(what: "H4 packet type", value: Int(first))
        }
        self.type = type
        self.bytes = Array(h4.dropFirst())
        let expected = try Self.totalLength(type: type, header: self.bytes[...])
        guard let expected else {
            throw .truncated(what: "H4 packet header", needed: Self.headerLength(type), available: bytes.count)
        }
        guard expected == bytes.count else {
            throw .lengthMismatch(what: "H4 packet", declared: expected, actual: bytes.count)
        }
    }

    public var h4Bytes: [UInt8] { [type.rawValue] + bytes }

    static func headerLength(_ type: HCIPacketType) -> Int {
        switch type {
        case .command: return 3  // opcode, length
        case .acl: return 4  // handle, length (2)
        case .sco: return 3  // handle, length
        case .event: return 2  // code, length
        case .iso: return 4  // handle, length (14 bits)
        }
    }

    /// Header plus payload length once the header is there; nil while it is incomplete.
    static func totalLength(type: HCIPacketType, header: ArraySlice<UInt8>) throws(PacketError) -> Int? {
        let headerLength = headerLength(type)
        guard header.count >= headerLength else { return nil }
        let s = header.startIndex
        switch type {
        case .command, .sco:
            return headerLength + Int(header[s + 2])
        case .event:
            return headerLength + Int(header[s + 1])
        case .acl:
            return headerLength + (Int(header[s + 2]) | Int(header[s + 3]) << 8)
        case .iso:
            return headerLength + ((Int(header[s + 2]) | Int(header[s + 3]) << 8) & 0x3FFF)
        }
    }
}

/// Cuts an H4 byte stream (a UART or a unix socket delivers packets in arbitrary pieces)
/// into packets, and finds its way back when the stream is damaged. A stray or lost byte
/// makes a length field lie; a framer that trusts it swallows the packets that follow. So a
/// packet is taken only when its header is plausible (a known type, a length within that
/// type's maximum, an event code that exists with a length it can have, an LE subevent that
/// exists) and, when more bytes are already there, the next one starts a plausible packet
/// too, and an event decodes. Otherwise one byte is dropped and the search goes on from the
/// next: bytes are consumed only when a packet is taken, so a real packet behind a stray byte
/// is found whole. Memory is bounded by the longest legal packet.
public struct H4Framer: Sendable {
    private var queue = ByteQueue()
    /// Times the stream lost its framing (each run of skipped bytes counts once).
    public private(set) var framingErrors = 0
    /// Bytes dropped while finding the framing again.
    public private(set) var skippedBytes = 0

    /// The longest payloads the appliance accepts: an event's length is one byte; ACL data
    /// at most 1021 bytes (a 3-DH5 packet, the largest a controller sends); ISO at most 4095.
    public static let maximumACLLength = 1021
    public static let maximumISOLength = 4095

    /// Which packet types the stream may carry. A controller sends its host events only,
    /// unless a connection is open (ACL, SCO, ISO data); the appliance opens none (it scans
    /// and advertises non-connectably), so by default anything but an event is a framing
    /// error, which makes a stray byte much less likely to pass for a packet.
    public let types: Set<HCIPacketType>

    public init(types: Set<HCIPacketType> = [.event]) {
        self.types = types
    }

    /// Bytes buffered and not yet returned as a packet.
    public var pendingByteCount: Int { queue.count }

    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        queue.append(bytes)
    }

    enum Start: Equatable {
        /// Header and payload length (after the type byte).
        case plausible(Int)
        case implausible
        /// Not enough bytes yet to tell.
        case incomplete
    }

    /// Whether `bytes` (type byte first) can begin a packet.
    func start(_ bytes: ArraySlice<UInt8>) -> Start {
        guard let typeByte = bytes.first else { return .incomplete }
        guard let type = HCIPacketType(rawValue: typeByte), types.contains(type) else { return .implausible }
        let header = bytes.dropFirst()
        let s = header.startIndex
        guard header.count >= HCIPacket.headerLength(type) else { return .incomplete }
        switch type {
        case .event:
            let code = header[s], length = Int(header[s + 1])
            guard Self.eventLengthIsPossible(code: code, length: length) else { return .implausible }
            if code == HCIEvent.leMetaCode {
                guard header.count >= 3 else { return .incomplete }
                let subevent = header[s + 2]
                guard (0x01...0x3F).contains(subevent) else { return .implausible }
            }
            return .plausible(2 + length)
        case .command:
            // OGF 0x01-0x08 (a vendor command, 0x3F, never comes from a controller).
            let ogf = header[s + 1] >> 2
            guard (0x01...0x08).contains(ogf) else { return .implausible }
            return .plausible(3 + Int(header[s + 2]))
        case .acl:
            let handle = (Int(header[s]) | Int(header[s + 1]) << 8) & 0x0FFF
            let length = Int(header[s + 2]) | Int(header[s + 3]) << 8
            guard handle <= 0x0EFF, length <= Self.maximumACLLength else { return .implausible }
            return .plausible(4 + length)
        case .sco:
            let handle = (Int(header[s]) | Int(header[s + 1]) << 8) & 0x0FFF
            guard handle <= 0x0EFF else { return .implausible }
            return .plausible(3 + Int(header[s + 2]))
        case .iso:
            let handle = (Int(header[s]) | Int(header[s + 1]) << 8) & 0x0FFF
            let length = (Int(header[s + 2]) | Int(header[s + 3]) << 8) & 0x3FFF
            guard handle <= 0x0EFF, length <= Self.maximumISOLength else { return .implausible }
            return .plausible(4 + length)
        }
    }

    enum Evidence { case good, bad, waitForMore }

    /// Events a scanner or advertiser gets, checked to the byte by decoding them: one that
    /// decodes is a packet whatever follows (a stray byte after it is the next one's problem).
    static let checkedEventCodes: Set<UInt8> = [
        HCIEvent.commandCompleteCode, HCIEvent.commandStatusCode, HCIEvent.hardwareErrorCode, HCIEvent.leMetaCode,
    ]

    /// Whether a packet of plausible header is one: a checked event must decode; anything
    /// else (ACL, SCO, ISO, other events, commands) is taken only when the bytes after it
    /// start a plausible packet too, so it waits for them.
    func evidence(type: HCIPacketType, body: ArraySlice<UInt8>, after: ArraySlice<UInt8>) -> Evidence {
        if type == .event, let code = body.first, Self.checkedEventCodes.contains(code) {
            guard let event = try? HCIEvent(decoding: body) else { return .bad }
            switch event {
            case .other:
                // An LE subevent we do not decode: only as good as what follows it.
                return followedByAPacket(after)
            case let .advertisingReports(reports):
                // A report shifted by a lost byte can decode, its RSSI then being the next
                // packet's type byte (1-5) or another small positive number. Scanners report
                // negative dBm (or 127, none); the ranging drops 0 and above as impossible,
                // so a report claiming one is taken for damage rather than trusted.
                // Not dropped outright either: the bytes after it decide (skipping into its
                // payload would let the sender's own data pass for a packet).
                return reports.allSatisfy { ($0.rssi ?? -127) < 0 } ? .good : followedByAPacket(after)
            default:
                return .good
            }
        }
        return followedByAPacket(after)
    }

    func followedByAPacket(_ after: ArraySlice<UInt8>) -> Evidence {
        switch start(after) {
        case .plausible: return .good
        case .implausible: return .bad
        case .incomplete: return .waitForMore
        }
    }

    /// Event codes of the Core spec (0x01-0x59, vendor 0xFF) with the lengths they can have.
    static func eventLengthIsPossible(code: UInt8, length: Int) -> Bool {
        switch code {
        case 0x00, 0x5A...0xFE: return false
        case HCIEvent.commandCompleteCode: return length >= 3  // packets, opcode
        case HCIEvent.commandStatusCode: return length == 4
        case HCIEvent.hardwareErrorCode: return length == 1
        case HCIEvent.leMetaCode: return length >= 1
        case 0x01: return length == 1  // Inquiry Complete
        case 0x03: return length == 11  // Connection Complete
        case 0x04: return length == 10  // Connection Request
        case 0x05: return length == 4  // Disconnection Complete
        case 0x06: return length == 3  // Authentication Complete
        case 0x08: return length == 4  // Encryption Change
        case 0x0B: return length == 11  // Read Remote Supported Features Complete
        case 0x0C: return length == 8  // Read Remote Version Information Complete
        case 0x13: return length >= 1  // Number Of Completed Packets
        case 0x1A: return length == 1  // Data Buffer Overflow
        default: return true
        }
    }

    /// The next complete packet, nil when more bytes are needed. When the stream lost its
    /// framing, the bytes that cannot start a packet are dropped and an error is thrown once
    /// for that run (the caller goes on; the next call carries on from the new start).
    public mutating func nextPacket() throws(PacketError) -> HCIPacket? {
        var skipped = 0
        defer {
            if skipped > 0 {
                framingErrors += 1
                skippedBytes += skipped
            }
        }
        while true {
            let pending = queue.pending
            switch start(pending) {
            case .incomplete:
                if skipped > 0 { throw .invalidValue(what: "H4 framing lost: bytes skipped", value: skipped) }
                return nil
            case .implausible:
                queue.consume(1)
                skipped += 1
                continue
            case let .plausible(length):
                guard pending.count >= 1 + length else {
                    if skipped > 0 { throw .invalidValue(what: "H4 framing lost: bytes skipped", value: skipped) }
                    return nil
                }
                let body = pending.dropFirst().prefix(length)
                let type = HCIPacketType(rawValue: pending[pending.startIndex]) ?? .event
                switch evidence(type: type, body: body, after: pending.dropFirst(1 + length)) {
                case .good:
                    break
                case .bad:
                    queue.consume(1)
                    skipped += 1
                    continue
                case .waitForMore:
                    if skipped > 0 { throw .invalidValue(what: "H4 framing lost: bytes skipped", value: skipped) }
                    return nil
                }
                // The error is told first; the good packet, left in front, comes next call.
                if skipped > 0 { throw .invalidValue(what: "H4 framing lost: bytes skipped", value: skipped) }
                queue.consume(1 + length)
                return HCIPacket(type: type, bytes: Array(body))
            }
        }
    }

    /// Forgets everything buffered (after the transport reconnects).
    public mutating func reset() {
        queue.removeAll()
    }
}
