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
/// into packets. Memory is bounded by the longest legal packet.
public struct H4Framer: Sendable {
    private var queue = ByteQueue()

    public init() {}

    /// Bytes buffered and not yet returned as a packet.
    public var pendingByteCount: Int { queue.count }

    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        queue.append(bytes)
    }

    /// The next complete packet, nil when more bytes are needed. An unknown type byte means
    /// the stream lost its framing: that byte is dropped (so the caller can go on and resync)
    /// and the error is thrown.
    public mutating func nextPacket() throws(PacketError) -> HCIPacket? {
        let pending = queue.pending
        guard let typeByte = pending.first else { return nil }
        guard let type = HCIPacketType(rawValue: typeByte) else {
            queue.consume(1)
            throw .invalidValue(what: "H4 packet type", value: Int(typeByte))
        }
        let header = pending.dropFirst()
        guard let length = try HCIPacket.totalLength(type: type, header: header) else { return nil }
        guard header.count >= length else { return nil }
        let packet = HCIPacket(type: type, bytes: Array(header.prefix(length)))
        queue.consume(1 + length)
        return packet
    }

    /// Forgets everything buffered (after the transport reconnects).
    public mutating func reset() {
        queue.removeAll()
    }
}
