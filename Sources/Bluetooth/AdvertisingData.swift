/// One AD structure: a type and its data (Core Specification Supplement part A).
public struct ADStructure: Equatable, Sendable {
    public var type: UInt8
    public var data: ArraySlice<UInt8>

    public static let flags: UInt8 = 0x01
    public static let incomplete16BitServiceUUIDs: UInt8 = 0x02
    public static let complete16BitServiceUUIDs: UInt8 = 0x03
    public static let incomplete128BitServiceUUIDs: UInt8 = 0x06
    public static let complete128BitServiceUUIDs: UInt8 = 0x07
    public static let shortenedLocalName: UInt8 = 0x08
    public static let completeLocalName: UInt8 = 0x09
    public static let txPowerLevel: UInt8 = 0x0A
    public static let serviceData16BitUUID: UInt8 = 0x16
    public static let manufacturerSpecificData: UInt8 = 0xFF

    public init(type: UInt8, data: ArraySlice<UInt8>) {
        self.type = type
        self.data = data
    }
}

/// Advertising or scan-response data split into AD structures.
///
/// Structures are self-delimiting, so one whose length runs past the end spoils only itself:
/// the complete ones before it are kept and the fault is reported in `malformedTail`.
/// A length byte of 0 is an empty structure (padding) and is skipped: real beacons put
/// structures after such bytes (a RadBeacon names itself after two of them).
public struct AdvertisingData: Equatable, Sendable {
    public private(set) var structures: [ADStructure] = []
    /// Why parsing stopped early, if it did.
    public private(set) var malformedTail: PacketError?

    public init(parsing bytes: ArraySlice<UInt8>) {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let length = Int(bytes[index])
            if length == 0 {
                index += 1
                continue
            }
            let end = index + 1 + length
            guard end <= bytes.endIndex else {
                malformedTail = .truncated(what: "AD structure", needed: length, available: bytes.endIndex - index - 1)
                break
            }
            structures.append(ADStructure(type: bytes[index + 1], data: bytes[(index + 2)..<end]))
            index = end
        }
    }

    public init(parsing bytes: [UInt8]) { self.init(parsing: bytes[...]) }

    /// The strict reading: every byte accounted for.
    public static func strict(_ bytes: ArraySlice<UInt8>) throws(PacketError) -> AdvertisingData {
        let parsed = AdvertisingData(parsing: bytes)
        if let fault = parsed.malformedTail { throw fault }
        return parsed
    }

    public func first(_ type: UInt8) -> ArraySlice<UInt8>? {
        structures.first { $0.type == type }?.data
    }

    /// The Flags AD value, when present.
    public var flags: UInt8? { first(ADStructure.flags)?.first }

    /// Complete or shortened local name, as printable UTF-8 (invalid bytes replaced).
    public var localName: String? {
        guard let name = first(ADStructure.completeLocalName) ?? first(ADStructure.shortenedLocalName) else { return nil }
        return String(decoding: name, as: UTF8.self)
    }

    /// 16-bit service UUIDs listed (complete or incomplete lists).
    public var serviceUUIDs16: [UInt16] {
        var out: [UInt16] = []
        for s in structures where s.type == ADStructure.complete16BitServiceUUIDs || s.type == ADStructure.incomplete16BitServiceUUIDs {
            var reader = ByteReader(s.data)
            while reader.remaining >= 2, let v = try? reader.u16le("service UUID") { out.append(v) }
        }
        return out
    }
}

/// Builds advertising data from AD structures, refusing what does not fit a legacy PDU.
public struct AdvertisingDataBuilder: Sendable {
    public private(set) var bytes: [UInt8] = []
    public let capacity: Int

    public init(capacity: Int = HCICommand.maximumLegacyAdvertisingDataLength) { self.capacity = capacity }

    public mutating func append(type: UInt8, data: [UInt8]) throws(PacketError) {
        let needed = 2 + data.count
        guard data.count <= 254, bytes.count + needed <= capacity else {
            throw .invalidValue(what: "advertising data length", value: bytes.count + needed)
        }
        bytes.append(UInt8(1 + data.count))
        bytes.append(type)
        bytes.append(contentsOf: data)
    }

    public var remainingCapacity: Int { capacity - bytes.count }
}
