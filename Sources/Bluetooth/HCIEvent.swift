/// The H4 packet indicator (the byte before every packet on a UART, raw socket or btsnoop 1002).
public enum HCIPacketType: UInt8, Sendable {
    case command = 0x01
    case acl = 0x02
    case sco = 0x03
    case event = 0x04
    case iso = 0x05
}

/// An HCI status or error code (Core spec vol 1 part F).
public struct HCIStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = HCIStatus(rawValue: 0x00)
    public static let unknownCommand = HCIStatus(rawValue: 0x01)
    public static let hardwareFailure = HCIStatus(rawValue: 0x03)
    public static let commandDisallowed = HCIStatus(rawValue: 0x0C)
    public static let invalidParameters = HCIStatus(rawValue: 0x12)
    public static let unsupportedFeature = HCIStatus(rawValue: 0x11)

    public var isSuccess: Bool { rawValue == 0 }

    public var description: String {
        let names: [UInt8: String] = [
            0x00: "success", 0x01: "unknown HCI command", 0x02: "unknown connection identifier",
            0x03: "hardware failure", 0x07: "memory capacity exceeded", 0x0C: "command disallowed",
            0x11: "unsupported feature or parameter value", 0x12: "invalid HCI command parameters",
            0x1F: "unspecified error", 0x3A: "controller busy",
        ]
        let hex = "0x" + hexString([rawValue])
        return names[rawValue].map { "\($0) (\(hex))" } ?? "error \(hex)"
    }
}

/// A Bluetooth device address, stored in wire order (least significant byte first).
public struct BDAddress: Hashable, Sendable, CustomStringConvertible {
    public var bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)

    /// From 6 bytes in wire order (least significant first).
    public init(bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)) { self.bytes = bytes }

    /// From 6 bytes in wire order.
    public init(littleEndian b: ArraySlice<UInt8>) throws(PacketError) {
        guard b.count == 6 else { throw .lengthMismatch(what: "device address", declared: 6, actual: b.count) }
        let s = b.startIndex
        bytes = (b[s], b[s + 1], b[s + 2], b[s + 3], b[s + 4], b[s + 5])
    }

    /// From "AA:BB:CC:DD:EE:FF" (most significant byte first, as people write it).
    public init?(_ text: String) {
        let parts = text.split(separator: ":")
        guard parts.count == 6 else { return nil }
        var values: [UInt8] = []
        for part in parts.reversed() {
            guard part.count == 2, let v = UInt8(part, radix: 16) else { return nil }
            values.append(v)
        }
        bytes = (values[0], values[1], values[2], values[3], values[4], values[5])
    }

    public var wireBytes: [UInt8] { [bytes.0, bytes.1, bytes.2, bytes.3, bytes.4, bytes.5] }

    public var description: String {
        hexString([bytes.5], uppercase: true) + ":" + hexString([bytes.4], uppercase: true) + ":"
            + hexString([bytes.3], uppercase: true) + ":" + hexString([bytes.2], uppercase: true) + ":"
            + hexString([bytes.1], uppercase: true) + ":" + hexString([bytes.0], uppercase: true)
    }

    public static func == (a: BDAddress, b: BDAddress) -> Bool { a.wireBytes == b.wireBytes }
    public func hash(into hasher: inout Hasher) { hasher.combine(wireBytes) }
}

/// One advertisement heard by the controller: from a legacy (0x02) or an extended (0x0D) report.
public struct AdvertisingReport: Equatable, Sendable {
    public enum Format: Equatable, Sendable { case legacy, extended }

    public var format: Format
    /// Legacy: 0 ADV_IND, 1 ADV_DIRECT_IND, 2 ADV_SCAN_IND, 3 ADV_NONCONN_IND, 4 SCAN_RSP.
    /// Extended: the Event_Type bit field (bit 3 scan response, bit 4 legacy PDU, ...).
    public var eventType: UInt16
    public var addressType: UInt8
    public var address: BDAddress
    /// Received signal strength in dBm; nil when the controller says "not available" (127).
    public var rssi: Int8?
    /// TX power the advertiser put in the extended header; nil when absent (127) or legacy.
    public var txPower: Int8?
    public var primaryPHY: UInt8?
    public var secondaryPHY: UInt8?
    public var advertisingSID: UInt8?
    /// The advertising or scan-response data (AD structures).
    public var data: ArraySlice<UInt8>

    public init(
        format: Format, eventType: UInt16, addressType: UInt8, address: BDAddress, rssi: Int8?, txPower: Int8? = nil,
        primaryPHY: UInt8? = nil, secondaryPHY: UInt8? = nil, advertisingSID: UInt8? = nil, data: ArraySlice<UInt8>
    ) {
        self.format = format
        self.eventType = eventType
        self.addressType = addressType
        self.address = address
        self.rssi = rssi
        self.txPower = txPower
        self.primaryPHY = primaryPHY
        self.secondaryPHY = secondaryPHY
        self.advertisingSID = advertisingSID
        self.data = data
    }

    /// Whether this report carries scan-response data rather than the advertisement.
    public var isScanResponse: Bool {
        switch format {
        case .legacy: return eventType == 0x04
        case .extended: return eventType & 0x0008 != 0
        }
    }

    /// Whether the data is whole: an extended report's Data_Status (event type bits 5-6) is
    /// 0 "complete"; 1 "more to come" and 2 "truncated" are fragments of a chained
    /// advertisement, whose data may begin inside an AD structure. Legacy data is whole.
    public var isComplete: Bool {
        switch format {
        case .legacy: return true
        case .extended: return (eventType >> 5) & 0x3 == 0
        }
    }

    /// The beacons in the data, none in a fragment (whose bytes can look like a beacon that
    /// no one sent, or cut one short).
    public var beacons: [Beacon] { isComplete ? Beacon.all(in: data) : [] }

    @inline(__always) static func rssi(_ raw: Int8) -> Int8? { raw == 127 ? nil : raw }
}

/// An HCI event, decoded as far as the hunter and the treasure need.
public enum HCIEvent: Equatable, Sendable {
    /// Command Complete: the opcode it answers and its return parameters (status first, usually).
    case commandComplete(opcode: HCIOpcode, numberOfPackets: UInt8, returnParameters: ArraySlice<UInt8>)
    /// Command Status: accepted (or refused) for later completion.
    case commandStatus(opcode: HCIOpcode, status: HCIStatus, numberOfPackets: UInt8)
    /// LE advertising reports, legacy or extended: every report of the event.
    case advertisingReports([AdvertisingReport])
    /// Hardware Error (0x10): the controller needs attention.
    case hardwareError(code: UInt8)
    /// Any other event, kept with its parameters.
    case other(code: UInt8, parameters: ArraySlice<UInt8>)

    public static let commandCompleteCode: UInt8 = 0x0E
    public static let commandStatusCode: UInt8 = 0x0F
    public static let hardwareErrorCode: UInt8 = 0x10
    public static let leMetaCode: UInt8 = 0x3E
    public static let legacyAdvertisingReportSubevent: UInt8 = 0x02
    public static let extendedAdvertisingReportSubevent: UInt8 = 0x0D

    /// Decodes an event packet without the H4 type byte: event code, length, parameters.
    public init(decoding bytes: ArraySlice<UInt8>) throws(PacketError) {
        var reader = ByteReader(bytes)
        let code = try reader.u8("event code")
        let length = Int(try reader.u8("event length"))
        guard reader.remaining == length else {
            throw .lengthMismatch(what: "event parameters", declared: length, actual: reader.remaining)
        }
        switch code {
        case Self.commandCompleteCode:
            let packets = try reader.u8("Command Complete packets")
            let opcode = HCIOpcode(rawValue: try reader.u16le("Command Complete opcode"))
            self = .commandComplete(opcode: opcode, numberOfPackets: packets, returnParameters: reader.rest())
        case Self.commandStatusCode:
            let status = HCIStatus(rawValue: try reader.u8("Command Status status"))
            let packets = try reader.u8("Command Status packets")
            let opcode = HCIOpcode(rawValue: try reader.u16le("Command Status opcode"))
            guard reader.isAtEnd else { throw .trailingBytes(what: "Command Status", count: reader.remaining) }
            self = .commandStatus(opcode: opcode, status: status, numberOfPackets: packets)
        case Self.hardwareErrorCode:
            self = .hardwareError(code: try reader.u8("Hardware Error code"))
        case Self.leMetaCode:
            let parameters = reader.rest()
            var meta = ByteReader(parameters)
            let subevent = try meta.u8("LE Meta subevent")
            switch subevent {
            case Self.legacyAdvertisingReportSubevent:
                self = .advertisingReports(try Self.legacyReports(&meta))
            case Self.extendedAdvertisingReportSubevent:
                self = .advertisingReports(try Self.extendedReports(&meta))
            default:
                self = .other(code: code, parameters: parameters)
            }
        default:
            self = .other(code: code, parameters: reader.rest())
        }
    }

    public init(decoding bytes: [UInt8]) throws(PacketError) {
        try self.init(decoding: bytes[...])
    }

    /// The status of a Command Complete (first return parameter) or Command Status.
    public var status: HCIStatus? {
        switch self {
        case let .commandComplete(_, _, parameters):
            return parameters.first.map(HCIStatus.init(rawValue:))
        case let .commandStatus(_, status, _):
            return status
        default:
            return nil
        }
    }

    /// The opcode a Command Complete or Command Status answers.
    public var answeredOpcode: HCIOpcode? {
        switch self {
        case let .commandComplete(opcode, _, _), let .commandStatus(opcode, _, _): return opcode
        default: return nil
        }
    }

    // Reports are laid out one after another (the layout every host stack and controller uses;
    // controllers send one report per event in practice).
    static func legacyReports(_ reader: inout ByteReader) throws(PacketError) -> [AdvertisingReport] {
        let count = Int(try reader.u8("number of reports"))
        guard count >= 1 else { throw .invalidValue(what: "number of reports", value: count) }
        var reports: [AdvertisingReport] = []
        reports.reserveCapacity(count)
        for _ in 0..<count {
            let eventType = try reader.u8("report event type")
            guard eventType <= 0x04 else { throw .invalidValue(what: "report event type", value: Int(eventType)) }
            let addressType = try reader.u8("report address type")
            let address = try BDAddress(littleEndian: try reader.take(6, "report address"))
            let dataLength = Int(try reader.u8("report data length"))
            guard dataLength <= 31 else { throw .invalidValue(what: "legacy report data length", value: dataLength) }
            let data = try reader.take(dataLength, "report data")
            let rssi = try reader.i8("report RSSI")
            reports.append(
                AdvertisingReport(
                    format: .legacy, eventType: UInt16(eventType), addressType: addressType, address: address,
                    rssi: AdvertisingReport.rssi(rssi), txPower: nil, primaryPHY: nil, secondaryPHY: nil,
                    advertisingSID: nil, data: data))
        }
        guard reader.isAtEnd else { throw .trailingBytes(what: "advertising report event", count: reader.remaining) }
        return reports
    }

    static func extendedReports(_ reader: inout ByteReader) throws(PacketError) -> [AdvertisingReport] {
        let count = Int(try reader.u8("number of reports"))
        guard count >= 1 else { throw .invalidValue(what: "number of reports", value: count) }
        var reports: [AdvertisingReport] = []
        reports.reserveCapacity(count)
        for _ in 0..<count {
            let eventType = try reader.u16le("report event type")
            let addressType = try reader.u8("report address type")
            let address = try BDAddress(littleEndian: try reader.take(6, "report address"))
            let primaryPHY = try reader.u8("report primary PHY")
            let secondaryPHY = try reader.u8("report secondary PHY")
            let sid = try reader.u8("report advertising SID")
            let txPower = try reader.i8("report TX power")
            let rssi = try reader.i8("report RSSI")
            _ = try reader.u16le("report periodic advertising interval")
            _ = try reader.u8("report direct address type")
            _ = try reader.take(6, "report direct address")
            let dataLength = Int(try reader.u8("report data length"))
            let data = try reader.take(dataLength, "report data")
            reports.append(
                AdvertisingReport(
                    format: .extended, eventType: eventType, addressType: addressType, address: address,
                    rssi: AdvertisingReport.rssi(rssi), txPower: txPower == 127 ? nil : txPower,
                    primaryPHY: primaryPHY, secondaryPHY: secondaryPHY, advertisingSID: sid, data: data))
        }
        guard reader.isAtEnd else { throw .trailingBytes(what: "advertising report event", count: reader.remaining) }
        return reports
    }
}

/// Which LE command families a controller really supports, from Read Local Supported Commands.
/// Never guess from the HCI version: a Pi 4 reports 5.0 and rejects the extended commands.
public struct SupportedCommands: Equatable, Sendable {
    public var octets: [UInt8]

    /// From the Command Complete return parameters (status, then 64 octets).
    public init(returnParameters: ArraySlice<UInt8>) throws(PacketError) {
        var reader = ByteReader(returnParameters)
        let status = HCIStatus(rawValue: try reader.u8("supported commands status"))
        guard status.isSuccess else { throw .invalidValue(what: "supported commands status", value: Int(status.rawValue)) }
        octets = Array(try reader.take(64, "supported commands"))
    }

    public init(octets: [UInt8]) { self.octets = octets }

    private func bit(_ octet: Int, _ mask: UInt8) -> Bool {
        octet < octets.count && octets[octet] & mask != 0
    }

    public var extendedScanning: Bool { bit(37, 0x20) && bit(37, 0x40) }
    public var extendedAdvertising: Bool { bit(36, 0x04) && bit(36, 0x08) && bit(36, 0x20) }
}

extension BDAddress {
    /// From Read BD_ADDR return parameters (status, then the address).
    public init(readBDAddressReturn parameters: ArraySlice<UInt8>) throws(PacketError) {
        var reader = ByteReader(parameters)
        let status = try reader.u8("Read BD_ADDR status")
        guard status == 0 else { throw .invalidValue(what: "Read BD_ADDR status", value: Int(status)) }
        try self.init(littleEndian: try reader.take(6, "BD_ADDR"))
    }
}
