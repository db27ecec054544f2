/// An HCI command opcode: OGF in the top 6 bits, OCF in the low 10 (Core spec vol 4 part E 5.4.1).
public struct HCIOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(ogf: UInt8, ocf: UInt16) { rawValue = UInt16(ogf & 0x3F) << 10 | (ocf & 0x03FF) }

    public var ogf: UInt8 { UInt8(rawValue >> 10) }
    public var ocf: UInt16 { rawValue & 0x03FF }

    public static let reset = HCIOpcode(ogf: 0x03, ocf: 0x0003)
    public static let readLocalSupportedCommands = HCIOpcode(ogf: 0x04, ocf: 0x0002)
    public static let readBDAddress = HCIOpcode(ogf: 0x04, ocf: 0x0009)
    public static let leSetAdvertisingParameters = HCIOpcode(ogf: 0x08, ocf: 0x0006)
    public static let leSetAdvertisingData = HCIOpcode(ogf: 0x08, ocf: 0x0008)
    public static let leSetScanResponseData = HCIOpcode(ogf: 0x08, ocf: 0x0009)
    public static let leSetAdvertisingEnable = HCIOpcode(ogf: 0x08, ocf: 0x000A)
    public static let leSetScanParameters = HCIOpcode(ogf: 0x08, ocf: 0x000B)
    public static let leSetScanEnable = HCIOpcode(ogf: 0x08, ocf: 0x000C)
    public static let leSetExtendedAdvertisingParameters = HCIOpcode(ogf: 0x08, ocf: 0x0036)
    public static let leSetExtendedAdvertisingData = HCIOpcode(ogf: 0x08, ocf: 0x0037)
    public static let leSetExtendedScanResponseData = HCIOpcode(ogf: 0x08, ocf: 0x0038)
    public static let leSetExtendedAdvertisingEnable = HCIOpcode(ogf: 0x08, ocf: 0x0039)
    public static let leRemoveAdvertisingSet = HCIOpcode(ogf: 0x08, ocf: 0x003C)
    public static let leClearAdvertisingSets = HCIOpcode(ogf: 0x08, ocf: 0x003D)
    public static let leSetExtendedScanParameters = HCIOpcode(ogf: 0x08, ocf: 0x0041)
    public static let leSetExtendedScanEnable = HCIOpcode(ogf: 0x08, ocf: 0x0042)

    public var description: String {
        let names: [UInt16: String] = [
            0x0C03: "Reset", 0x1002: "Read Local Supported Commands", 0x1009: "Read BD_ADDR",
            0x2006: "LE Set Advertising Parameters", 0x2008: "LE Set Advertising Data",
            0x2009: "LE Set Scan Response Data", 0x200A: "LE Set Advertising Enable",
            0x200B: "LE Set Scan Parameters", 0x200C: "LE Set Scan Enable",
            0x2036: "LE Set Extended Advertising Parameters", 0x2037: "LE Set Extended Advertising Data",
            0x2038: "LE Set Extended Scan Response Data", 0x2039: "LE Set Extended Advertising Enable",
            0x203C: "LE Remove Advertising Set", 0x203D: "LE Clear Advertising Sets",
            0x2041: "LE Set Extended Scan Parameters", 0x2042: "LE Set Extended Scan Enable",
        ]
        let hex = "0x" + hexString([UInt8(rawValue >> 8), UInt8(rawValue & 0xFF)])
        return names[rawValue].map { "\($0) (\(hex))" } ?? hex
    }
}

/// Device address types used in scan and advertising parameters.
public enum OwnAddressType: UInt8, Sendable {
    case `public` = 0x00
    case random = 0x01
}

/// Legacy advertising PDU types (LE Set Advertising Parameters, Advertising_Type).
public enum LegacyAdvertisingType: UInt8, Sendable {
    case connectableUndirected = 0x00  // ADV_IND
    case scannableUndirected = 0x02  // ADV_SCAN_IND
    case nonConnectableUndirected = 0x03  // ADV_NONCONN_IND

    /// The matching legacy bits of Advertising_Event_Properties for extended advertising.
    var extendedEventProperties: UInt16 {
        switch self {
        case .connectableUndirected: return 0x0013  // legacy | connectable | scannable
        case .scannableUndirected: return 0x0012  // legacy | scannable
        case .nonConnectableUndirected: return 0x0010  // legacy
        }
    }
}

/// The commands the hunter and the treasure send. Never Reset, never event masks:
/// the adapter may be shared with bluetoothd.
public enum HCICommand: Equatable, Sendable {
    /// Never sent by us: what another program (or `hciconfig reset`) may send.
    case reset
    case readLocalSupportedCommands
    case readBDAddress
    /// Legacy scanning. Interval and window in 0.625 ms units.
    case leSetScanParameters(active: Bool, interval: UInt16, window: UInt16, ownAddress: OwnAddressType)
    case leSetScanEnable(Bool, filterDuplicates: Bool)
    /// Extended scanning on the 1M PHY.
    case leSetExtendedScanParameters(active: Bool, interval: UInt16, window: UInt16, ownAddress: OwnAddressType)
    case leSetExtendedScanEnable(Bool, filterDuplicates: Bool)
    /// Legacy advertising. Interval in 0.625 ms units.
    case leSetAdvertisingParameters(intervalMin: UInt16, intervalMax: UInt16, type: LegacyAdvertisingType, ownAddress: OwnAddressType)
    case leSetAdvertisingData([UInt8])
    case leSetScanResponseData([UInt8])
    case leSetAdvertisingEnable(Bool)
    /// Extended advertising with legacy PDUs (so 4.x scanners hear it). Interval in 0.625 ms units.
    case leSetExtendedAdvertisingParameters(handle: UInt8, type: LegacyAdvertisingType, intervalMin: UInt32, intervalMax: UInt32, ownAddress: OwnAddressType, txPower: Int8?)
    case leSetExtendedAdvertisingData(handle: UInt8, [UInt8])
    case leSetExtendedScanResponseData(handle: UInt8, [UInt8])
    case leSetExtendedAdvertisingEnable(Bool, handle: UInt8)
    case leRemoveAdvertisingSet(handle: UInt8)
    /// Never sent by us (we remove our own set): what another program may send.
    case leClearAdvertisingSets

    /// Longest advertising or scan-response payload of a legacy PDU.
    public static let maximumLegacyAdvertisingDataLength = 31

    public var opcode: HCIOpcode {
        switch self {
        case .readLocalSupportedCommands: return .readLocalSupportedCommands
        case .readBDAddress: return .readBDAddress
        case .leSetScanParameters: return .leSetScanParameters
        case .leSetScanEnable: return .leSetScanEnable
        case .leSetExtendedScanParameters: return .leSetExtendedScanParameters
        case .leSetExtendedScanEnable: return .leSetExtendedScanEnable
        case .leSetAdvertisingParameters: return .leSetAdvertisingParameters
        case .leSetAdvertisingData: return .leSetAdvertisingData
        case .leSetScanResponseData: return .leSetScanResponseData
        case .leSetAdvertisingEnable: return .leSetAdvertisingEnable
        case .leSetExtendedAdvertisingParameters: return .leSetExtendedAdvertisingParameters
        case .leSetExtendedAdvertisingData: return .leSetExtendedAdvertisingData
        case .leSetExtendedScanResponseData: return .leSetExtendedScanResponseData
        case .leSetExtendedAdvertisingEnable: return .leSetExtendedAdvertisingEnable
        case .leRemoveAdvertisingSet: return .leRemoveAdvertisingSet
        case .reset: return .reset
        case .leClearAdvertisingSets: return .leClearAdvertisingSets
        }
    }

    /// The command parameters (after opcode and length).
    public func parameters() throws(PacketError) -> [UInt8] {
        var p: [UInt8] = []
        switch self {
        case .readLocalSupportedCommands, .readBDAddress, .reset, .leClearAdvertisingSets:
            break
        case let .leSetScanParameters(active, interval, window, own):
            try Self.checkScanTiming(interval: interval, window: window)
            p.append(active ? 0x01 : 0x00)
            p.appendLE(interval)
            p.appendLE(window)
            p.append(own.rawValue)
            p.append(0x00)  // accept all advertisers
        case let .leSetScanEnable(enable, duplicates):
            p.append(enable ? 0x01 : 0x00)
            p.append(duplicates ? 0x01 : 0x00)
        case let .leSetExtendedScanParameters(active, interval, window, own):
            try Self.checkScanTiming(interval: interval, window: window)
            p.append(own.rawValue)
            p.append(0x00)  // accept all
            p.append(0x01)  // LE 1M PHY only
            p.append(active ? 0x01 : 0x00)
            p.appendLE(interval)
            p.appendLE(window)
        case let .leSetExtendedScanEnable(enable, duplicates):
            p.append(enable ? 0x01 : 0x00)
            p.append(duplicates ? 0x01 : 0x00)
            p.appendLE(UInt16(0))  // duration: until disabled
            p.appendLE(UInt16(0))  // period: continuous
        case let .leSetAdvertisingParameters(minimum, maximum, type, own):
            guard (0x0020...0x4000).contains(minimum), (0x0020...0x4000).contains(maximum), minimum <= maximum else {
                throw .invalidValue(what: "advertising interval", value: Int(minimum))
            }
            p.appendLE(minimum)
            p.appendLE(maximum)
            p.append(type.rawValue)
            p.append(own.rawValue)
            p.append(0x00)  // peer address type
            p.append(contentsOf: [0, 0, 0, 0, 0, 0])  // peer address
            p.append(0x07)  // channels 37, 38, 39
            p.append(0x00)  // no filter
        case let .leSetAdvertisingData(data), let .leSetScanResponseData(data):
            guard data.count <= Self.maximumLegacyAdvertisingDataLength else {
                throw .invalidValue(what: "advertising data length", value: data.count)
            }
            p.append(UInt8(data.count))
            p.append(contentsOf: data)
            p.append(contentsOf: repeatElement(0, count: Self.maximumLegacyAdvertisingDataLength - data.count))
        case let .leSetAdvertisingEnable(enable):
            p.append(enable ? 0x01 : 0x00)
        case let .leSetExtendedAdvertisingParameters(handle, type, minimum, maximum, own, txPower):
            guard (0x20...0xFF_FFFF).contains(minimum), (0x20...0xFF_FFFF).contains(maximum), minimum <= maximum else {
                throw .invalidValue(what: "advertising interval", value: Int(minimum))
            }
            p.append(handle)
            p.appendLE(type.extendedEventProperties)
            p.appendLE24(minimum)
            p.appendLE24(maximum)
            p.append(0x07)  // channels 37, 38, 39
            p.append(own.rawValue)
            p.append(0x00)  // peer address type
            p.append(contentsOf: [0, 0, 0, 0, 0, 0])
            p.append(0x00)  // no filter
            p.append(UInt8(bitPattern: txPower ?? 0x7F))  // 0x7F: host has no preference
            p.append(0x01)  // primary PHY 1M
            p.append(0x00)  // secondary max skip
            p.append(0x01)  // secondary PHY 1M
            p.append(0x00)  // SID
            p.append(0x00)  // no scan request notifications
        case let .leSetExtendedAdvertisingData(handle, data), let .leSetExtendedScanResponseData(handle, data):
            // Legacy PDUs: one complete fragment of at most 31 bytes.
            guard data.count <= Self.maximumLegacyAdvertisingDataLength else {
                throw .invalidValue(what: "advertising data length", value: data.count)
            }
            p.append(handle)
            p.append(0x03)  // complete data
            p.append(0x01)  // controller should not fragment
            p.append(UInt8(data.count))
            p.append(contentsOf: data)
        case let .leRemoveAdvertisingSet(handle):
            p.append(handle)
        case let .leSetExtendedAdvertisingEnable(enable, handle):
            p.append(enable ? 0x01 : 0x00)
            p.append(0x01)  // one set
            p.append(handle)
            p.appendLE(UInt16(0))  // no duration limit
            p.append(0x00)  // no event limit
        }
        return p
    }

    private static func checkScanTiming(interval: UInt16, window: UInt16) throws(PacketError) {
        guard (0x0004...0x4000).contains(interval) else {
            throw .invalidValue(what: "scan interval", value: Int(interval))
        }
        guard (0x0004...0x4000).contains(window), window <= interval else {
            throw .invalidValue(what: "scan window", value: Int(window))
        }
    }

    /// The whole command packet without the H4 type byte: opcode (LE), length, parameters.
    public func encoded() throws(PacketError) -> [UInt8] {
        let parameters = try parameters()
        var out: [UInt8] = []
        out.reserveCapacity(3 + parameters.count)
        out.appendLE(opcode.rawValue)
        out.append(UInt8(parameters.count))
        out.append(contentsOf: parameters)
        return out
    }

    /// The command as an H4 packet (type byte 0x01 first), as written to a UART or raw socket.
    public func h4Encoded() throws(PacketError) -> [UInt8] {
        [HCIPacketType.command.rawValue] + (try encoded())
    }
}

/// A command packet seen on the wire (ours or another program's), decoded only to its opcode.
public struct HCICommandPacket: Equatable, Sendable {
    public var opcode: HCIOpcode
    public var parameters: ArraySlice<UInt8>

    /// Decodes a command packet without the H4 type byte.
    public init(decoding bytes: ArraySlice<UInt8>) throws(PacketError) {
        var reader = ByteReader(bytes)
        opcode = HCIOpcode(rawValue: try reader.u16le("command opcode"))
        let length = Int(try reader.u8("command length"))
        guard reader.remaining == length else {
            throw .lengthMismatch(what: "command parameters", declared: length, actual: reader.remaining)
        }
        parameters = reader.rest()
    }
}
