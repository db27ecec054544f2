import Bluetooth
import Foundation
import Testing

func fixture(_ name: String) throws -> [UInt8] {
    let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"))
    return [UInt8](try Data(contentsOf: url))
}

/// Every beacon sighting of a capture, in order, with times relative to the first record.
func sightings(in capture: [UInt8]) throws -> (sightings: [BeaconSighting], records: Int, events: Int) {
    let parsed = BTSnoopParser.parseAll(capture)
    #expect(parsed.error == nil)
    let datalink = try #require(parsed.datalink)
    let start = try #require(parsed.records.first?.timestamp)
    var out: [BeaconSighting] = []
    var events = 0
    for record in parsed.records {
        guard let packet = try record.packet(datalink: datalink), packet.type == .event else { continue }
        events += 1
        let event = try HCIEvent(decoding: packet.bytes[...])
        out += BeaconSighting.all(in: event, at: Double(record.timestamp - start) / 1e6)
    }
    return (out, parsed.records.count, events)
}

func iBeacons(_ s: [BeaconSighting]) -> [IBeacon] {
    s.compactMap { if case let .iBeacon(b) = $0.beacon { return b } else { return nil } }
}

@Suite struct CaptureTests {
    @Test func horizon74LegacyCaptureHasElevenThermometerBeacons() throws {
        let capture = try fixture("csacca_horizon74_btsnoop_hci.log")
        let (found, records, _) = try sightings(in: capture)
        #expect(records == 2572)
        let beacons = iBeacons(found)
        #expect(beacons.count == 11)
        #expect(Set(beacons.map(\.uuid.uuidString)) == ["494E5445-4C4C-495F-524F-434B535F4857"])
        #expect(Set(beacons.map(\.major)) == [20594, 20597])
        #expect(Set(beacons.map(\.minor)) == [62207])
        #expect(Set(beacons.map(\.measuredPower)) == [-62])
        #expect(Set(found.map(\.address)).count == 4)
        let rssi = found.compactMap(\.rssi)
        #expect(rssi.min() == -94 && rssi.max() == -49)
        #expect(found.allSatisfy { $0.report == .legacy })
        #expect(found.map(\.time) == found.map(\.time).sorted())
    }

    @Test func horizon74VendorCommandIsNotABeacon() throws {
        // The capture holds a command whose bytes contain 4C 00 02 15: only advertising
        // reports produce sightings, so it must not appear as one.
        let capture = try fixture("csacca_horizon74_btsnoop_hci.log")
        let parsed = BTSnoopParser.parseAll(capture)
        let datalink = try #require(parsed.datalink)
        var commandsWithPrefix = 0
        for record in parsed.records {
            guard let packet = try record.packet(datalink: datalink), packet.type == .command else { continue }
            let bytes = packet.bytes
            if bytes.count >= 4, (0...(bytes.count - 4)).contains(where: { bytes[$0..<($0 + 4)] == [0x4C, 0x00, 0x02, 0x15] }) {
                commandsWithPrefix += 1
            }
        }
        #expect(commandsWithPrefix >= 1)
        #expect(try sightings(in: capture).sightings.count == 11)
    }

    @Test func btsnooperExtendedCaptureHasEightBeacons() throws {
        let capture = try fixture("wangdalian_btsnooper_btsnoop_hci.log")
        let (found, records, _) = try sightings(in: capture)
        #expect(records == 7250)
        let beacons = iBeacons(found)
        #expect(beacons.count == 8)
        #expect(Set(beacons.map(\.uuid.uuidString)) == ["FDA50693-A4E2-4FB1-AFCF-C6EB07647825"])
        #expect(Set(beacons.map(\.major)) == [100, 102, 10240, 39144, 43240])
        #expect(beacons.map(\.measuredPower).min() == -64 && beacons.map(\.measuredPower).max() == -56)
        #expect(found.allSatisfy { $0.report == .extended })
    }

    @Test func btsnooperHas465ExtendedReports() throws {
        let capture = try fixture("wangdalian_btsnooper_btsnoop_hci.log")
        let parsed = BTSnoopParser.parseAll(capture)
        let datalink = try #require(parsed.datalink)
        var extended = 0
        for record in parsed.records {
            guard let packet = try record.packet(datalink: datalink), packet.type == .event else { continue }
            if case let .advertisingReports(reports) = try HCIEvent(decoding: packet.bytes[...]) {
                extended += reports.filter { $0.format == .extended }.count
            }
        }
        #expect(extended == 465)
    }

    @Test func horizon74Has412LegacyReports() throws {
        let capture = try fixture("csacca_horizon74_btsnoop_hci.log")
        let parsed = BTSnoopParser.parseAll(capture)
        let datalink = try #require(parsed.datalink)
        var legacy = 0
        for record in parsed.records {
            guard let packet = try record.packet(datalink: datalink), packet.type == .event else { continue }
            if case let .advertisingReports(reports) = try HCIEvent(decoding: packet.bytes[...]) {
                legacy += reports.count
            }
        }
        #expect(legacy == 412)
    }
}

@Suite struct BTSnoopTests {
    @Test func truncatedCaptureNamesTheRecordAndKeepsEverythingBefore() throws {
        let capture = try fixture("csacca_horizon74_btsnoop_hci.log")
        let whole = BTSnoopParser.parseAll(capture)
        let cut = Array(capture.prefix(3000))
        let parsed = BTSnoopParser.parseAll(cut)
        guard case let .corruptRecord(record, _) = parsed.error else {
            Issue.record("expected a corrupt record, got \(String(describing: parsed.error))")
            return
        }
        #expect(record == parsed.records.count + 1)
        #expect(parsed.records == Array(whole.records.prefix(parsed.records.count)))
    }

    @Test func everyPrefixIsHandledWithoutTrapping() throws {
        let capture = Array(try fixture("csacca_horizon74_btsnoop_hci.log").prefix(2000))
        for length in 0...capture.count {
            let parsed = BTSnoopParser.parseAll(Array(capture.prefix(length)))
            if length == 0 { #expect(parsed.error == .notBTSnoop) }
            if length > 0 && length < 16 { #expect(parsed.error == .truncatedHeader) }
        }
    }

    @Test func includedLengthLargerThanOriginalIsCorrupt() throws {
        var bytes = BTSnoopEncoder(datalink: .h4).header
        bytes += [0, 0, 0, 1, 0, 0, 0, 2] + [UInt8](repeating: 0, count: 16) + [4, 0x0E]
        #expect(BTSnoopParser.parseAll(bytes).error == .corruptRecord(record: 1, reason: "included length 2 exceeds original length 1"))
    }

    @Test func wrongMagicVersionAndDatalinkAreRefused() throws {
        #expect(BTSnoopParser.parseAll(Array("hello world, not a capture".utf8)).error == .notBTSnoop)
        var header = BTSnoopEncoder(datalink: .h4).header
        header[11] = 2
        #expect(BTSnoopParser.parseAll(header).error == .unsupportedVersion(2))
        header = BTSnoopEncoder(datalink: .h4).header
        header[15] = 0xFF
        #expect(BTSnoopParser.parseAll(header).error == .unsupportedDatalink(1002 & ~0xFF | 0xFF))
    }

    @Test(arguments: [BTSnoopDatalink.h4, .unencapsulated, .linuxMonitor])
    func writeThenReadGivesTheSamePackets(_ datalink: BTSnoopDatalink) throws {
        let event = HCIPacket(type: .event, bytes: [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00])
        let command = HCIPacket(type: .command, bytes: try HCICommand.leSetScanEnable(true, filterDuplicates: false).encoded())
        let encoder = BTSnoopEncoder(datalink: datalink)
        var file = encoder.header
        file += encoder.record(command, received: false, unixMicroseconds: 1_700_000_000_000_000)
        file += encoder.record(event, received: true, unixMicroseconds: 1_700_000_000_000_500)
        // Fed in small pieces, as a file read in chunks would be.
        var parser = BTSnoopParser()
        var records: [BTSnoopRecord] = []
        for chunkStart in stride(from: 0, to: file.count, by: 7) {
            parser.append(file[chunkStart..<min(file.count, chunkStart + 7)])
            while let record = try parser.next() { records.append(record) }
        }
        try parser.finish()
        #expect(parser.datalink == datalink)
        #expect(try records.map { try $0.packet(datalink: datalink) } == [command, event])
        #expect(records.map(\.unixMicroseconds) == [1_700_000_000_000_000, 1_700_000_000_000_500])
        #expect(records.map(\.number) == [1, 2])
    }
}
