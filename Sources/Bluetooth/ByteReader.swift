/// Why a packet, an advertisement or a capture was refused. Radio input is hostile:
/// every decoder in this module reports malformed input with one of these, never a trap.
public enum PacketError: Error, Equatable, Sendable {
    /// `what` needed `needed` more bytes but only `available` were left.
    case truncated(what: String, needed: Int, available: Int)
    /// A length field disagrees with the bytes that carry it.
    case lengthMismatch(what: String, declared: Int, actual: Int)
    /// A field holds a value the format does not allow.
    case invalidValue(what: String, value: Int)
    /// Bytes left over after a structure that must fill its container exactly.
    case trailingBytes(what: String, count: Int)
}

extension PacketError: CustomStringConvertible {
    public var description: String {
        switch self {
        case let .truncated(what, needed, available):
            return "\(what): needs \(needed) bytes, only \(available) left"
        case let .lengthMismatch(what, declared, actual):
            return "\(what): length says \(declared), \(actual) bytes present"
        case let .invalidValue(what, value):
            return "\(what): invalid value \(value)"
        case let .trailingBytes(what, count):
            return "\(what): \(count) unexpected trailing bytes"
        }
    }
}

/// A bounds-checked little cursor over bytes. Every read checks the length first.
public struct ByteReader: Sendable {
    public let bytes: ArraySlice<UInt8>
    public private(set) var index: Int

    public init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.index = bytes.startIndex
    }

    public init(_ bytes: [UInt8]) {
        self.init(bytes[...])
    }

    public var remaining: Int { bytes.endIndex - index }
    public var isAtEnd: Bool { index >= bytes.endIndex }

    @inline(__always)
    private func require(_ count: Int, _ what: String) throws(PacketError) {
        guard count >= 0, remaining >= count else {
            throw .truncated(what: what, needed: count, available: remaining)
        }
    }

    public mutating func u8(_ what: String) throws(PacketError) -> UInt8 {
        try require(1, what)
        defer { index += 1 }
        return bytes[index]
    }

    public mutating func i8(_ what: String) throws(PacketError) -> Int8 {
        Int8(bitPattern: try u8(what))
    }

    public mutating func u16le(_ what: String) throws(PacketError) -> UInt16 {
        try require(2, what)
        defer { index += 2 }
        return UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8
    }

    public mutating func u16be(_ what: String) throws(PacketError) -> UInt16 {
        try require(2, what)
        defer { index += 2 }
        return UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
    }

    public mutating func u24le(_ what: String) throws(PacketError) -> UInt32 {
        try require(3, what)
        defer { index += 3 }
        return UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16
    }

    public mutating func u32be(_ what: String) throws(PacketError) -> UInt32 {
        try require(4, what)
        defer { index += 4 }
        var value: UInt32 = 0
        for offset in 0..<4 { value = value << 8 | UInt32(bytes[index + offset]) }
        return value
    }

    public mutating func u32le(_ what: String) throws(PacketError) -> UInt32 {
        try require(4, what)
        defer { index += 4 }
        var value: UInt32 = 0
        for offset in (0..<4).reversed() { value = value << 8 | UInt32(bytes[index + offset]) }
        return value
    }

    public mutating func i64be(_ what: String) throws(PacketError) -> Int64 {
        try require(8, what)
        defer { index += 8 }
        var value: UInt64 = 0
        for offset in 0..<8 { value = value << 8 | UInt64(bytes[index + offset]) }
        return Int64(bitPattern: value)
    }

    public mutating func take(_ count: Int, _ what: String) throws(PacketError) -> ArraySlice<UInt8> {
        try require(count, what)
        defer { index += count }
        return bytes[index..<(index + count)]
    }

    public mutating func rest() -> ArraySlice<UInt8> {
        defer { index = bytes.endIndex }
        return bytes[index...]
    }
}

/// Little-endian and big-endian appends for encoders.
extension Array where Element == UInt8 {
    @inline(__always) mutating func appendLE(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    @inline(__always) mutating func appendBE(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }

    @inline(__always) mutating func appendLE24(_ value: UInt32) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value >> 16))
    }

    @inline(__always) mutating func appendBE(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    @inline(__always) mutating func appendBE(_ value: Int64) {
        let bits = UInt64(bitPattern: value)
        for shift in stride(from: 56, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
    }
}

/// Lowercase hex of bytes, e.g. for Eddystone namespaces and logs.
public func hexString<C: Collection>(_ bytes: C, uppercase: Bool = false) -> String where C.Element == UInt8 {
    let digits: [UInt8] = Array((uppercase ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count * 2)
    for byte in bytes {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: out, as: UTF8.self)
}

/// Bytes from a hex string (whitespace and colons ignored); nil when it is not hex.
public func bytes(fromHex text: String) -> [UInt8]? {
    var out: [UInt8] = []
    var high: UInt8?
    for scalar in text.utf8 {
        let nibble: UInt8
        switch scalar {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = scalar - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = scalar - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = scalar - UInt8(ascii: "A") + 10
        case UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: "\n"), UInt8(ascii: "\t"): continue
        default: return nil
        }
        if let h = high {
            out.append(h << 4 | nibble)
            high = nil
        } else {
            high = nibble
        }
    }
    return high == nil ? out : nil
}
