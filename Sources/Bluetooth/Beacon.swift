import FoundationEssentials

/// Apple's company identifier, first in iBeacon manufacturer data.
public let appleCompanyID: UInt16 = 0x004C
/// The 16-bit service UUID of Eddystone frames.
public let eddystoneServiceUUID: UInt16 = 0xFEAA

/// An iBeacon frame: proximity UUID, major, minor and the measured power (RSSI at 1 m).
public struct IBeacon: Hashable, Sendable {
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16
    /// Calibrated RSSI at 1 m in dBm, as advertised (a value >= 0 is suspect).
    public var measuredPower: Int8

    public init(uuid: UUID, major: UInt16, minor: UInt16, measuredPower: Int8) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.measuredPower = measuredPower
    }

    /// Decodes manufacturer data (company id first, little-endian). Nil when it is not an iBeacon.
    public init?(manufacturerData d: ArraySlice<UInt8>) {
        // 4C 00 | 02 15 | uuid(16) | major(2) | minor(2) | power(1)
        guard d.count >= 25 else { return nil }
        let s = d.startIndex
        guard d[s] == 0x4C, d[s + 1] == 0x00, d[s + 2] == 0x02, d[s + 3] == 0x15 else { return nil }
        uuid = uuidFromBytes(d[(s + 4)..<(s + 20)])
        major = UInt16(d[s + 20]) << 8 | UInt16(d[s + 21])
        minor = UInt16(d[s + 22]) << 8 | UInt16(d[s + 23])
        measuredPower = Int8(bitPattern: d[s + 24])
    }

    /// The manufacturer-specific payload (with company id) of this iBeacon.
    public var manufacturerData: [UInt8] {
        var out: [UInt8] = [0x4C, 0x00, 0x02, 0x15]
        out.append(contentsOf: uuidBytes(uuid))
        out.appendBE(major)
        out.appendBE(minor)
        out.append(UInt8(bitPattern: measuredPower))
        return out
    }

    /// Complete advertising data for a treasure: Flags (LE general discoverable, no BR/EDR)
    /// then the iBeacon, 30 bytes.
    public var advertisingData: [UInt8] {
        var out: [UInt8] = [0x02, ADStructure.flags, 0x06, 0x1A, ADStructure.manufacturerSpecificData]
        out.append(contentsOf: manufacturerData)
        return out
    }
}

/// An AltBeacon frame (open specification): 20-byte beacon id, reference RSSI, reserved byte.
public struct AltBeacon: Hashable, Sendable {
    public var manufacturer: UInt16
    /// The first 16 bytes of the id, as a UUID (id1); id2 and id3 are the last 4 bytes.
    public var id1: UUID
    public var id2: UInt16
    public var id3: UInt16
    public var referenceRSSI: Int8
    /// Manufacturer-reserved byte; nil when the beacon left it out.
    public var reserved: UInt8?

    /// Decodes manufacturer data (company id first). Nil when it is not an AltBeacon.
    public init?(manufacturerData d: ArraySlice<UInt8>) {
        // mfg(2) | BE AC | id(20) | ref rssi(1) | [reserved(1)]
        guard d.count == 25 || d.count == 26 else { return nil }
        let s = d.startIndex
        guard d[s + 2] == 0xBE, d[s + 3] == 0xAC else { return nil }
        manufacturer = UInt16(d[s]) | UInt16(d[s + 1]) << 8
        id1 = uuidFromBytes(d[(s + 4)..<(s + 20)])
        id2 = UInt16(d[s + 20]) << 8 | UInt16(d[s + 21])
        id3 = UInt16(d[s + 22]) << 8 | UInt16(d[s + 23])
        referenceRSSI = Int8(bitPattern: d[s + 24])
        reserved = d.count == 26 ? d[s + 25] : nil
    }
}

/// Eddystone frames (service data of UUID 0xFEAA).
public enum EddystoneFrame: Hashable, Sendable {
    /// 10-byte namespace, 6-byte instance, TX power at 0 m.
    case uid(namespace: [UInt8], instance: [UInt8], txPower: Int8)
    case url(String, txPower: Int8)
    /// Unencrypted telemetry: battery mV, temperature in °C (nil when unsupported), counts.
    case tlm(batteryMillivolts: UInt16, temperature: Double?, advertisingCount: UInt32, uptimeDeciseconds: UInt32)
    case eid(ephemeralID: [UInt8], txPower: Int8)

    static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    static let expansions = [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
        ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov",
    ]

    /// Decodes service data (the 16-bit UUID first, little-endian). Nil for anything else.
    public init?(serviceData d: ArraySlice<UInt8>) {
        guard d.count >= 4 else { return nil }
        let s = d.startIndex
        guard d[s] == 0xAA, d[s + 1] == 0xFE else { return nil }
        let frame = d[(s + 2)...]
        let f = frame.startIndex
        switch frame[f] {
        case 0x00:
            // type, tx, namespace(10), instance(6), [RFU(2)]
            guard frame.count == 18 || frame.count == 20 else { return nil }
            self = .uid(
                namespace: Array(frame[(f + 2)..<(f + 12)]), instance: Array(frame[(f + 12)..<(f + 18)]),
                txPower: Int8(bitPattern: frame[f + 1]))
        case 0x10:
            // type, tx, scheme, encoded url (at most 17 bytes)
            guard frame.count >= 3, frame.count <= 20, Int(frame[f + 2]) < Self.schemes.count else { return nil }
            var url = Self.schemes[Int(frame[f + 2])]
            for byte in frame[(f + 3)...] {
                if Int(byte) < Self.expansions.count {
                    url += Self.expansions[Int(byte)]
                } else if (0x21...0x7E).contains(byte) {
                    url.unicodeScalars.append(Unicode.Scalar(byte))
                } else {
                    return nil  // not a printable URL character: refuse rather than print junk
                }
            }
            self = .url(url, txPower: Int8(bitPattern: frame[f + 1]))
        case 0x20:
            // type, version 0, battery(2), temp 8.8(2), adv count(4), uptime(4), all big-endian
            guard frame.count == 14, frame[f + 1] == 0x00 else { return nil }
            var r = ByteReader(frame[(f + 2)...])
            guard let battery = try? r.u16be("TLM battery"), let rawTemp = try? r.u16be("TLM temperature"),
                let count = try? r.u32be("TLM count"), let uptime = try? r.u32be("TLM uptime")
            else { return nil }
            let temperature: Double? = rawTemp == 0x8000 ? nil : Double(Int16(bitPattern: rawTemp)) / 256
            self = .tlm(batteryMillivolts: battery, temperature: temperature, advertisingCount: count, uptimeDeciseconds: uptime)
        case 0x30:
            guard frame.count == 10 else { return nil }
            self = .eid(ephemeralID: Array(frame[(f + 2)..<(f + 10)]), txPower: Int8(bitPattern: frame[f + 1]))
        default:
            return nil
        }
    }
}

/// A beacon recognised in advertising data.
public enum Beacon: Hashable, Sendable {
    case iBeacon(IBeacon)
    case altBeacon(AltBeacon)
    case eddystone(EddystoneFrame)

    /// The kind as the replay contract spells it.
    public var kind: String {
        switch self {
        case .iBeacon: return "ibeacon"
        case .altBeacon: return "altbeacon"
        case .eddystone(.uid): return "eddystone-uid"
        case .eddystone(.url): return "eddystone-url"
        case .eddystone(.tlm): return "eddystone-tlm"
        case .eddystone(.eid): return "eddystone-eid"
        }
    }

    /// Every beacon frame in advertising data, in order. Unknown structures are skipped:
    /// they are "other" advertising, not errors.
    public static func all(in data: AdvertisingData) -> [Beacon] {
        var found: [Beacon] = []
        for s in data.structures {
            switch s.type {
            case ADStructure.manufacturerSpecificData:
                if let b = IBeacon(manufacturerData: s.data) {
                    found.append(.iBeacon(b))
                } else if let b = AltBeacon(manufacturerData: s.data) {
                    found.append(.altBeacon(b))
                }
            case ADStructure.serviceData16BitUUID:
                if let f = EddystoneFrame(serviceData: s.data) { found.append(.eddystone(f)) }
            default:
                continue
            }
        }
        return found
    }

    /// The same over raw advertising data, without building the structure list: this is the
    /// hot path, run for every report heard.
    public static func all(in bytes: ArraySlice<UInt8>) -> [Beacon] {
        var found: [Beacon] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let length = Int(bytes[index])
            let end = index + 1 + length
            guard end <= bytes.endIndex else { break }
            if length >= 1 {
                let data = bytes[(index + 2)..<end]
                switch bytes[index + 1] {
                case ADStructure.manufacturerSpecificData:
                    if let b = IBeacon(manufacturerData: data) {
                        found.append(.iBeacon(b))
                    } else if let b = AltBeacon(manufacturerData: data) {
                        found.append(.altBeacon(b))
                    }
                case ADStructure.serviceData16BitUUID:
                    if let f = EddystoneFrame(serviceData: data) { found.append(.eddystone(f)) }
                default:
                    break
                }
            }
            index = end
        }
        return found
    }
}

/// Parses "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0" (either case).
public func parseUUID(_ text: String) -> UUID? { UUID(uuidString: text) }

func uuidFromBytes(_ b: ArraySlice<UInt8>) -> UUID {
    let s = b.startIndex
    return UUID(
        uuid: (
            b[s], b[s + 1], b[s + 2], b[s + 3], b[s + 4], b[s + 5], b[s + 6], b[s + 7],
            b[s + 8], b[s + 9], b[s + 10], b[s + 11], b[s + 12], b[s + 13], b[s + 14], b[s + 15]
        ))
}

/// The 16 bytes of a UUID as written (big-endian, as iBeacon carries it).
public func uuidBytes(_ uuid: UUID) -> [UInt8] {
    let u = uuid.uuid
    return [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
}
