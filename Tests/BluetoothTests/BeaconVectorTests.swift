import Bluetooth
import Foundation
import Testing

/// One vector of `Fixtures/beacon_test_vectors.json` (see the README beside it).
struct BeaconVector: CustomTestStringConvertible, Sendable {
    let id: String
    let kind: String
    let bytes: [UInt8]
    let expected: [String: JSONValue]
    let notes: String
    var testDescription: String { id }

    static func all() throws -> [BeaconVector] {
        let url = try #require(Bundle.module.url(forResource: "beacon_test_vectors", withExtension: "json", subdirectory: "Fixtures"))
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let vectors = try #require(root["vectors"] as? [[String: Any]])
        return try vectors.map { v in
            let hex = try #require(v["hex"] as? String)
            let decoded = Bluetooth.bytes(fromHex: hex)
            let expected = try #require(v["expected"] as? [String: Any])
            return BeaconVector(
                id: try #require(v["id"] as? String), kind: try #require(v["kind"] as? String),
                bytes: try #require(decoded), expected: expected.mapValues(JSONValue.init),
                notes: v["notes"] as? String ?? "")
        }
    }
}

/// The JSON values an expectation can hold, made Sendable.
enum JSONValue: Sendable, Equatable {
    case null, bool(Bool), number(Double), string(String), array([JSONValue])

    init(_ any: Any) {
        switch any {
        case let b as Bool where type(of: any) == type(of: NSNumber(value: true)): self = .bool(b)
        case let n as NSNumber: self = .number(n.doubleValue)
        case let s as String: self = .string(s)
        case let a as [Any]: self = .array(a.map(JSONValue.init))
        default: self = .null
        }
    }

    var int: Int? { if case let .number(n) = self { return Int(exactly: n) } else { return nil } }
    var string: String? { if case let .string(s) = self { return s } else { return nil } }
}

/// What our decoders made of a vector's bytes.
struct Decoded {
    var reports: [AdvertisingReport] = []
    var data: AdvertisingData?
    var beacons: [Beacon] = []
    var numReports: Int?
    var subevent: UInt8?
}

/// Vectors a strict decoder refuses, each for the reason its own notes give.
let rejectedVectors: [String: String] = [
    "beacontools_scanner_process_packet": "H4 type byte 0x41 and a parameter length that does not match",
    "beacontools_scanner_process_packet_dev_filter": "H4 type byte 0x41",
    "beacontools_scanner_process_packet_dev_filter3": "H4 type byte 0x41",
    "beacontools_scanner_process_packet_bad_packet": "H4 type byte 0x41, cut short",
    "beacontools_scanner_process_packet_bad_packet2": "H4 type byte 0x41, cut short",
    "bleson_uuid128": "event ends before the RSSI byte",
    "pureswift_hci_adv_report_params_21": "address is 5 bytes: the report is cut short",
]

/// Where we knowingly decide differently from the source library, and why.
let policyDifferences: [String: String] = [
    // ibeacon-ble hides Tilt hydrometers by UUID; its frame is a valid iBeacon and we report it.
    "ibeacon_ble_tilt_service_info": "ibeacon"
]

/// Expected keys that describe another library's behaviour, not the bytes (distance models,
/// names Home Assistant passes in beside the payload, vendor lookups, callbacks, prose).
let keysNotAboutTheBytes: Set<String> = [
    "rssi_given", "distance_m_rounded", "distance_m_rounded_after_rssi_minus70", "distance", "transient", "vendor",
    "reason", "layout", "cypress_temperature", "cypress_humidity", "cypress_temperature_x100_int",
    "cypress_humidity_x100_int", "url_per_comment", "callback_called", "not_null", "parses", "name_complete",
    "report2_has_no_flags", "report1", "report2", "data_fields_count", "service_uuid", "id", "group", "time",
]

func decode(_ v: BeaconVector) throws -> Decoded {
    var d = Decoded()
    func event(_ bytes: ArraySlice<UInt8>) throws {
        let event = try HCIEvent(decoding: bytes)
        if case let .advertisingReports(reports) = event {
            d.reports = reports
            d.numReports = reports.count
            d.subevent = reports.first?.format == .extended ? 0x0D : 0x02
            if let first = reports.first {
                d.data = AdvertisingData(parsing: first.data)
            }
            d.beacons = reports.flatMap { Beacon.all(in: $0.data) }
        }
    }
    switch v.kind {
    case "adv_data":
        let data = AdvertisingData(parsing: v.bytes)
        d.data = data
        d.beacons = Beacon.all(in: data)
    case "manufacturer_data_incl_company_id":
        if let b = IBeacon(manufacturerData: v.bytes[...]) {
            d.beacons = [.iBeacon(b)]
        } else if let b = AltBeacon(manufacturerData: v.bytes[...]) {
            d.beacons = [.altBeacon(b)]
        }
    case "hci_event_h4":
        let packet = try HCIPacket(h4: v.bytes[...])
        #expect(packet.type == .event)
        try event(packet.bytes[...])
    case "hci_event_no_h4_type":
        try event(v.bytes[...])
    case "le_adv_report_params":
        try event(([0x3E, UInt8(v.bytes.count + 1), 0x02] + v.bytes)[...])
    case "hci_command_h4_without_type":
        let command = try HCICommandPacket(decoding: v.bytes[...])
        #expect(command.opcode == .leSetAdvertisingData)
        let length = Int(try #require(command.parameters.first))
        let data = AdvertisingData(parsing: command.parameters.dropFirst().prefix(length))
        d.data = data
        d.beacons = Beacon.all(in: data)
    default:
        Issue.record("unknown vector kind \(v.kind)")
    }
    return d
}

func ourKind(_ expectedType: String?) -> String? {
    switch expectedType {
    case "ibeacon": return "ibeacon"
    case "altbeacon", "altbeacon_layout_beac": return "altbeacon"
    case "eddystone_uid": return "eddystone-uid"
    case "eddystone_url": return "eddystone-url"
    case "eddystone_tlm": return "eddystone-tlm"
    case "eddystone_eid": return "eddystone-eid"
    default: return nil  // null, or advertising that is not a beacon we decode
    }
}

@Suite struct BeaconVectorTests {
    @Test func fixtureHasEveryVector() throws {
        #expect(try BeaconVector.all().count == 105)
    }

    @Test(arguments: try BeaconVector.all())
    func vector(_ v: BeaconVector) throws {
        if let reason = rejectedVectors[v.id] {
            #expect(throws: PacketError.self, "strict decoder must reject: \(reason)") { try decode(v) }
            return
        }
        let d = try decode(v)
        let beacon = d.beacons.first
        let report = d.reports.first

        // Frames of other layouts (exposure notification, GATT beacon, sBeacon, ...) are "other"
        // advertising to us: no beacon comes out of them, and their fields are not ours to check.
        let expectedType = v.expected["type"]?.string
        let otherLayout = expectedType != nil && ourKind(expectedType) == nil
        if otherLayout {
            #expect(d.beacons.isEmpty, "\(expectedType ?? "") must not be taken for a beacon")
        }
        let layoutKeys: Set<String> = ["identifier", "id1", "id2", "id3", "tx_power", "id", "group", "time"]

        for (key, value) in v.expected where !keysNotAboutTheBytes.contains(key) {
            if otherLayout && layoutKeys.contains(key) { continue }
            if key == "addr" && v.kind == "manufacturer_data_incl_company_id" { continue }  // given beside the payload
            switch key {
            case "type":
                let want = policyDifferences[v.id] ?? ourKind(value.string)
                #expect(beacon?.kind == want, "type")
            case "uuid", "id1":
                let uuid: UUID? =
                    switch beacon {
                    case let .iBeacon(b): b.uuid
                    case let .altBeacon(b): b.id1
                    default: nil
                    }
                #expect(uuid?.uuidString == value.string?.uppercased(), "uuid")
            case "major", "id2":
                let major: UInt16? =
                    switch beacon {
                    case let .iBeacon(b): b.major
                    case let .altBeacon(b): b.id2
                    default: nil
                    }
                #expect(major.map(Int.init) == value.int, "major")
            case "minor", "id3":
                let minor: UInt16? =
                    switch beacon {
                    case let .iBeacon(b): b.minor
                    case let .altBeacon(b): b.id3
                    default: nil
                    }
                #expect(minor.map(Int.init) == value.int, "minor")
            case "tx_power":
                let power: Int8? =
                    switch beacon {
                    case let .iBeacon(b): b.measuredPower
                    case let .altBeacon(b): b.referenceRSSI
                    case let .eddystone(.uid(_, _, p)), let .eddystone(.url(_, p)), let .eddystone(.eid(_, p)): p
                    default: nil
                    }
                #expect(power.map(Int.init) == value.int, "tx_power")
            case "manufacturer", "company_id", "manufacturer_hex":
                if case let .altBeacon(b) = beacon {
                    if key == "manufacturer_hex" {
                        #expect(hexString([UInt8(b.manufacturer >> 8), UInt8(b.manufacturer & 0xFF)]) == value.string)
                    } else {
                        #expect(Int(b.manufacturer) == value.int)
                    }
                } else {
                    #expect(beacon?.kind == "ibeacon" && value.int == 76, "company id")
                }
            case "data_field0", "mfg_reserved":
                guard case let .altBeacon(b) = beacon else {
                    Issue.record("not an AltBeacon")
                    continue
                }
                #expect(Int(b.reserved ?? 0) == value.int)
            case "namespace", "instance":
                guard case let .eddystone(.uid(namespace, instance, _)) = beacon else {
                    Issue.record("not an Eddystone-UID")
                    continue
                }
                #expect(hexString(key == "namespace" ? namespace : instance) == value.string)
            case "url":
                guard case let .eddystone(.url(url, _)) = beacon else {
                    Issue.record("not an Eddystone-URL")
                    continue
                }
                #expect(url == value.string)
            case "voltage", "temperature", "temperature_approx", "advertising_count", "seconds_since_boot":
                guard case let .eddystone(.tlm(battery, temperature, count, uptime)) = beacon else {
                    Issue.record("not an Eddystone-TLM")
                    continue
                }
                switch key {
                case "voltage": #expect(Int(battery) == value.int)
                case "temperature": #expect(temperature == Double(value.int ?? -1000))
                case "temperature_approx": #expect(temperature.map { Int($0) } == value.int)
                case "advertising_count": #expect(Int(count) == value.int)
                default: #expect(Int(uptime) == value.int)
                }
            case "eid_hex":
                guard case let .eddystone(.eid(eid, _)) = beacon else {
                    Issue.record("not an Eddystone-EID")
                    continue
                }
                #expect(hexString(eid) == value.string)
            case "addr":
                #expect(report?.address.description == value.string?.uppercased() || (value.string == "00:00:00:00:00:00" && report == nil), "addr")
            case "rssi":
                if let report {
                    #expect(report.rssi.map(Int.init) == value.int, "rssi")
                }
            case "addr_type":
                let want: Int? = value.string.map { $0 == "random" ? 1 : 0 } ?? value.int
                #expect(report.map { Int($0.addressType) } == want)
            case "event_type":
                let names = ["ADV_IND": 0, "ADV_DIRECT_IND": 1, "ADV_SCAN_IND": 2, "ADV_NONCONN_IND": 3, "SCAN_RSP": 4]
                let want: Int? = value.string.flatMap { names[$0] } ?? value.int
                #expect(report.map { Int($0.eventType) } == want)
            case "num_reports":
                #expect(d.numReports == value.int)
            case "subevent":
                #expect(d.subevent.map(Int.init) == value.int)
            case "adv_tx_power_field":
                #expect(report?.txPower == nil && value.int == 127, "TX power 127 means absent")
            case "data_len", "adv_data_len":
                if let report {
                    #expect(report.data.count == value.int)
                } else {
                    #expect(d.data.map { $0.structures.reduce(0) { $0 + 2 + $1.data.count } } == value.int)
                }
            case "flags":
                #expect(d.data?.flags.map(Int.init) == value.int)
            case "name", "local_name":
                if report != nil { #expect(d.data?.localName == value.string) }
            case "uuid16s":
                var want: [String] = []
                if case let .array(a) = value { want = a.compactMap(\.string) }
                #expect(d.data?.serviceUUIDs16.map { hexString([UInt8($0 >> 8), UInt8($0 & 0xFF)]) } == want)
            case "uuid128s":
                let list = d.data?.first(ADStructure.complete128BitServiceUUIDs) ?? d.data?.first(ADStructure.incomplete128BitServiceUUIDs)
                let uuid = list.map { Array($0.reversed()) }  // 128-bit UUIDs are little-endian on air
                let text = uuid.map { hexString($0) }
                if case let .array(a) = value, let first = a.first?.string {
                    #expect(text == first.replacingOccurrences(of: "-", with: ""))
                }
            case "service_data_hex":
                #expect(d.data?.first(ADStructure.serviceData16BitUUID).map { hexString($0) } == value.string)
            case "ad_structure_count":
                #expect(d.data?.structures.count == value.int)
            case "types":
                if case let .array(a) = value {
                    #expect(d.data?.structures.map { Int($0.type) } == a.compactMap(\.int))
                }
            case "opcode":
                #expect(value.int == Int(HCIOpcode.leSetAdvertisingData.rawValue))
            default:
                Issue.record("vector \(v.id): expectation '\(key)' is not checked by this test")
            }
        }
        if v.expected["not_null"] != nil || v.expected["parses"] != nil {
            #expect(v.expected["not_null"] == nil || beacon != nil)
        }
        if v.expected["callback_called"] == .bool(true) {
            #expect(report != nil)
        }
        if v.id == "xorbit_bluez_ibeacon_plus_altbeacon_event" {
            #expect(d.beacons.map(\.kind) == ["ibeacon", "altbeacon"])
        }
        if v.id == "xorbit_bluez_two_reports_event" {
            #expect(d.reports.count == 2)
            #expect(d.reports.last.map { AdvertisingData(parsing: $0.data).flags } == .some(nil))
        }
    }
}
