import Bluetooth
import Testing

@Suite struct HCICommandTests {
    @Test func scanCommandsMatchTheFieldGuide() throws {
        // Disable, passive parameters with interval = window = 0x0010 and a public address,
        // enable without duplicate filtering.
        #expect(try HCICommand.leSetScanEnable(false, filterDuplicates: false).h4Encoded() == [0x01, 0x0C, 0x20, 0x02, 0x00, 0x00])
        #expect(
            try HCICommand.leSetScanParameters(active: false, interval: 0x10, window: 0x10, ownAddress: .public).h4Encoded()
                == [0x01, 0x0B, 0x20, 0x07, 0x00, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00])
        #expect(try HCICommand.leSetScanEnable(true, filterDuplicates: false).encoded() == [0x0C, 0x20, 0x02, 0x01, 0x00])
        #expect(
            try HCICommand.leSetExtendedScanParameters(active: true, interval: 0x10, window: 0x10, ownAddress: .public).encoded()
                == [0x41, 0x20, 0x08, 0x00, 0x00, 0x01, 0x01, 0x10, 0x00, 0x10, 0x00])
        #expect(try HCICommand.leSetExtendedScanEnable(true, filterDuplicates: false).encoded() == [0x42, 0x20, 0x06, 0x01, 0x00, 0, 0, 0, 0])
        #expect(try HCICommand.readLocalSupportedCommands.h4Encoded() == [0x01, 0x02, 0x10, 0x00])
        #expect(try HCICommand.readBDAddress.encoded() == [0x09, 0x10, 0x00])
    }

    @Test func advertisingCommandsForATreasure() throws {
        let params = try HCICommand.leSetAdvertisingParameters(intervalMin: 0xA0, intervalMax: 0xA0, type: .nonConnectableUndirected, ownAddress: .public).encoded()
        #expect(params == [0x06, 0x20, 0x0F, 0xA0, 0x00, 0xA0, 0x00, 0x03, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0x07, 0x00])
        let beacon = IBeacon(uuid: try #require(parseUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")), major: 1, minor: 1, measuredPower: -29)
        let data = try HCICommand.leSetAdvertisingData(beacon.advertisingData).encoded()
        #expect(data.count == 3 + 32)
        #expect(Array(data.prefix(4)) == [0x08, 0x20, 0x20, 0x1E])
        // What PureSwift's test queued for the same beacon, but for the flags value.
        let pure = try #require(bytes(fromHex: "1aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010001e3"))
        #expect(Array(data[7..<(7 + 27)]) == pure)
        #expect(data.suffix(1) == [0])
        #expect(try HCICommand.leSetAdvertisingEnable(true).encoded() == [0x0A, 0x20, 0x01, 0x01])
        let ext = try HCICommand.leSetExtendedAdvertisingParameters(handle: 0, type: .scannableUndirected, intervalMin: 0xA0, intervalMax: 0xA0, ownAddress: .public, txPower: nil).encoded()
        #expect(ext.count == 3 + 25)
        #expect(Array(ext.prefix(6)) == [0x36, 0x20, 25, 0x00, 0x12, 0x00])
        #expect(try HCICommand.leSetExtendedAdvertisingEnable(true, handle: 0).encoded() == [0x39, 0x20, 0x06, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00])
        #expect(try HCICommand.leSetExtendedAdvertisingData(handle: 0, [1, 2]).encoded() == [0x37, 0x20, 0x06, 0x00, 0x03, 0x01, 0x02, 0x01, 0x02])
    }

    @Test func invalidParametersAreRefusedBeforeTheyReachTheController() {
        #expect(throws: PacketError.self) { try HCICommand.leSetAdvertisingData([UInt8](repeating: 0, count: 32)).encoded() }
        #expect(throws: PacketError.self) { try HCICommand.leSetScanParameters(active: false, interval: 0x10, window: 0x20, ownAddress: .public).encoded() }
        #expect(throws: PacketError.self) { try HCICommand.leSetAdvertisingParameters(intervalMin: 0x10, intervalMax: 0x10, type: .nonConnectableUndirected, ownAddress: .public).encoded() }
    }

    @Test func commandPacketsRoundTrip() throws {
        let encoded = try HCICommand.leSetScanEnable(true, filterDuplicates: false).encoded()
        let decoded = try HCICommandPacket(decoding: encoded[...])
        #expect(decoded.opcode == .leSetScanEnable)
        #expect(Array(decoded.parameters) == [0x01, 0x00])
        #expect(throws: PacketError.self) { try HCICommandPacket(decoding: encoded.dropLast()) }
        #expect(HCIOpcode.leSetScanEnable.ogf == 0x08 && HCIOpcode.leSetScanEnable.ocf == 0x0C)
    }
}

@Suite struct HCIEventTests {
    @Test func commandCompleteAndStatus() throws {
        let complete = try HCIEvent(decoding: [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x0C])
        #expect(complete.answeredOpcode == .leSetScanEnable)
        #expect(complete.status == .commandDisallowed)
        let status = try HCIEvent(decoding: [0x0F, 0x04, 0x12, 0x01, 0x41, 0x20])
        #expect(status == .commandStatus(opcode: .leSetExtendedScanParameters, status: .invalidParameters, numberOfPackets: 1))
        #expect(HCIStatus.unknownCommand.description == "unknown HCI command (0x01)")
        #expect(throws: PacketError.self) { try HCIEvent(decoding: [0x0F, 0x03, 0x00, 0x01, 0x41]) }
        #expect(throws: PacketError.self) { try HCIEvent(decoding: [0x0E, 0x02, 0x01]) }
    }

    @Test func legacyReportWithRSSINotAvailable() throws {
        let beacon = IBeacon(uuid: try #require(parseUUID("8DEEFBB9-F738-4297-8040-96668BB44281")), major: 7, minor: 9, measuredPower: -59)
        let data = beacon.advertisingData
        var params: [UInt8] = [0x02, 0x01, 0x03, 0x00, 1, 2, 3, 4, 5, 6, UInt8(data.count)] + data + [0x7F]
        let event = try HCIEvent(decoding: [0x3E, UInt8(params.count)] + params)
        let found = BeaconSighting.all(in: event, at: 1.5)
        #expect(found.count == 1)
        #expect(found.first?.rssi == nil)
        #expect(found.first?.beacon == .iBeacon(beacon))
        #expect(found.first?.address.description == "06:05:04:03:02:01")
        params[params.count - 1] = 0xC5
        let heard = BeaconSighting.all(in: try HCIEvent(decoding: [0x3E, UInt8(params.count)] + params), at: 0)
        #expect(heard.first?.rssi == -59)
    }

    @Test func everyReportOfAnExtendedEventIsDecoded() throws {
        func report(_ rssi: UInt8, _ data: [UInt8], tx: UInt8 = 0x7F) -> [UInt8] {
            [0x13, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 0x01, 0x00, 0xFF, tx, rssi, 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8(data.count)] + data
        }
        let beacon = IBeacon(uuid: try #require(parseUUID("FDA50693-A4E2-4FB1-AFCF-C6EB07647825")), major: 100, minor: 1, measuredPower: -59)
        let params: [UInt8] = [0x0D, 3] + report(0xB3, beacon.advertisingData) + report(0x7F, [], tx: 0xF0) + report(0xC0, [0x02, 0x01, 0x06])
        guard case let .advertisingReports(reports) = try HCIEvent(decoding: [0x3E, UInt8(params.count)] + params) else {
            Issue.record("not reports")
            return
        }
        #expect(reports.count == 3)
        #expect(reports.map(\.rssi) == [-77, nil, -64])
        #expect(reports.map(\.txPower) == [nil, -16, nil])
        #expect(reports.allSatisfy { $0.format == .extended && !$0.isScanResponse })
        #expect(Beacon.all(in: reports[0].data) == [.iBeacon(beacon)])
    }

    /// A fragment of a chained extended advertisement ("more to come", "truncated") is no
    /// sighting, even when its bytes hold a whole beacon: its data may begin inside an AD
    /// structure of the advertisement it belongs to. The complete report is one.
    @Test func fragmentsOfAChainedAdvertisementAreNoSightings() throws {
        let beacon = IBeacon(uuid: try #require(parseUUID("FDA50693-A4E2-4FB1-AFCF-C6EB07647825")), major: 100, minor: 1, measuredPower: -59)
        func event(status: UInt16) throws -> HCIEvent {
            let type = 0x0013 | status << 5
            let data = beacon.advertisingData
            let params: [UInt8] = [0x0D, 1, UInt8(type & 0xFF), UInt8(type >> 8), 0x00, 1, 2, 3, 4, 5, 6, 0x01, 0x00, 0xFF, 0x7F, 0xC0,
                                   0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8(data.count)] + data
            return try HCIEvent(decoding: [0x3E, UInt8(params.count)] + params)
        }
        #expect(BeaconSighting.all(in: try event(status: 0), at: 0).map(\.beacon) == [.iBeacon(beacon)])
        #expect(BeaconSighting.all(in: try event(status: 1), at: 0).isEmpty, "more to come")
        #expect(BeaconSighting.all(in: try event(status: 2), at: 0).isEmpty, "truncated")
    }

    @Test func reportLengthsAreCheckedAgainstTheEvent() throws {
        // Data length pointing past the event, a count larger than the reports present,
        // a zero count, bytes after the last report: each a typed error.
        let good: [UInt8] = [0x02, 0x01, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 0x03, 0x02, 0x01, 0x06, 0xC0]
        #expect(throws: Never.self) { try HCIEvent(decoding: [0x3E, UInt8(good.count)] + good) }
        var bad = good
        bad[10] = 0x10
        #expect(throws: PacketError.self) { try HCIEvent(decoding: [0x3E, UInt8(bad.count)] + bad) }
        bad = good
        bad[1] = 2
        #expect(throws: PacketError.self) { try HCIEvent(decoding: [0x3E, UInt8(bad.count)] + bad) }
        bad = good
        bad[1] = 0
        #expect(throws: PacketError.invalidValue(what: "number of reports", value: 0)) { try HCIEvent(decoding: [0x3E, UInt8(bad.count)] + bad) }
        bad = good + [0xAA]
        #expect(throws: PacketError.self) { try HCIEvent(decoding: [0x3E, UInt8(bad.count)] + bad) }
        #expect(throws: PacketError.self) { try HCIEvent(decoding: [0x3E, UInt8(good.count + 1)] + good) }
    }

    @Test func supportedCommandsChooseTheFamilyFromTheBits() throws {
        var octets = [UInt8](repeating: 0, count: 64)
        #expect(!SupportedCommands(octets: octets).extendedScanning)
        octets[37] = 0x60
        octets[36] = 0x2C
        let supported = SupportedCommands(octets: octets)
        #expect(supported.extendedScanning && supported.extendedAdvertising)
        let parsed = try SupportedCommands(returnParameters: ([0x00] + octets)[...])
        #expect(parsed == supported)
        #expect(throws: PacketError.self) { try SupportedCommands(returnParameters: [0x00, 0x01][...]) }
    }

    @Test func randomBytesNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3_000 {  // a smoke test in a debug build; the fuzz target (scripts/fuzz.sh run h4) goes deep
            let count = Int.random(in: 0...64, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if count >= 2, Bool.random(using: &generator) {
                bytes[0] = 0x3E
                bytes[1] = UInt8(count - 2)
                if count > 2 { bytes[2] = Bool.random(using: &generator) ? 0x02 : 0x0D }
            }
            _ = try? HCIEvent(decoding: bytes)
            _ = Beacon.all(in: bytes[...])
            var framer = H4Framer()
            framer.append(bytes)
            for _ in 0...bytes.count {
                do {
                    guard try framer.nextPacket() != nil else { break }
                } catch {
                    continue  // the bad type byte was dropped: go on
                }
            }
        }
    }
}

@Suite struct H4FramerTests {
    static let stream: [UInt8] = {
        var s: [UInt8] = []
        s += [0x04, 0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00]  // command complete
        s += [0x04, 0x3E, 0x0F, 0x02, 0x01, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 0x03, 0x02, 0x01, 0x06, 0xC0]  // report
        s += [0x02, 0x01, 0x20, 0x03, 0x00, 0xAA, 0xBB, 0xCC]  // ACL
        s += [0x01, 0x0C, 0x20, 0x02, 0x01, 0x00]  // command
        s += [0x04, 0x0F, 0x04, 0x00, 0x01, 0x0C, 0x20]  // command status: the command before it is whole
        return s
    }()

    static let allTypes: Set<HCIPacketType> = [.command, .acl, .sco, .event, .iso]

    @Test func splitsAtEveryPossiblePointGiveTheSamePackets() throws {
        var whole = H4Framer(types: Self.allTypes)
        whole.append(Self.stream)
        var expected: [HCIPacket] = []
        while let p = try whole.nextPacket() { expected.append(p) }
        #expect(expected.map(\.type) == [.event, .event, .acl, .command, .event])
        for cut in 0...Self.stream.count {
            var framer = H4Framer(types: Self.allTypes)
            var got: [HCIPacket] = []
            framer.append(Self.stream[..<cut])
            while let p = try framer.nextPacket() { got.append(p) }
            framer.append(Self.stream[cut...])
            while let p = try framer.nextPacket() { got.append(p) }
            #expect(got == expected)
            #expect(framer.pendingByteCount == 0)
        }
        // One byte at a time.
        var framer = H4Framer(types: Self.allTypes)
        var got: [HCIPacket] = []
        for byte in Self.stream {
            framer.append([byte])
            while let p = try framer.nextPacket() { got.append(p) }
        }
        #expect(got == expected)
    }

    @Test func aControllerSendsEventsOnly() throws {
        // The appliance opens no connections: data and commands on its stream are damage.
        let (packets, framer) = Self.frame(Self.stream, chunk: 5)
        #expect(packets.map(\.type) == [.event, .event, .event])
        #expect(framer.framingErrors >= 2)
    }

    @Test func garbageTypeByteIsReportedAndSkipped() throws {
        var framer = H4Framer()
        framer.append([0x99] + Self.stream.prefix(7))
        #expect(throws: PacketError.invalidValue(what: "H4 framing lost: bytes skipped", value: 1)) { try framer.nextPacket() }
        #expect(try framer.nextPacket()?.bytes == [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00])
        #expect(framer.framingErrors == 1 && framer.skippedBytes == 1)
    }

    /// An advertising report event of a 10 Hz iBeacon (legacy, one report).
    static func report(_ n: Int) -> [UInt8] {
        let data: [UInt8] = [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + [UInt8](repeating: 0x50, count: 16)
            + [0x00, 0x01, UInt8(n >> 8), UInt8(n & 0xFF), 0xC5]
        let parameters: [UInt8] = [0x02, 0x01, 0x03, 0x00, 1, 2, 3, 4, 5, 6, UInt8(data.count)] + data + [0xC0]
        return [0x04, 0x3E, UInt8(parameters.count)] + parameters
    }

    static func frame(_ stream: [UInt8], chunk: Int) -> (packets: [HCIPacket], framer: H4Framer) {
        var framer = H4Framer()
        var packets: [HCIPacket] = []
        var index = 0
        while index < stream.count {
            framer.append(stream[index..<min(stream.count, index + chunk)])
            index += chunk
            while true {
                do {
                    guard let p = try framer.nextPacket() else { break }
                    packets.append(p)
                } catch {
                    continue
                }
            }
        }
        return (packets, framer)
    }

    /// One stray byte (any value) every 20 packets, about every 2 s at 10 Hz: a framer that
    /// trusted lengths lost 69 % of the reports; this one loses almost none.
    @Test(arguments: [1, 7, 64, 4096])
    func aStrayByteEveryTwoSecondsLosesAlmostNothing(chunk: Int) throws {
        var random = SystemRandomNumberGenerator()
        var stream: [UInt8] = []
        let count = 2000
        var strays = 0
        for n in 0..<count {
            if n % 20 == 10 {
                stream.append(UInt8.random(in: 0...255, using: &random))
                strays += 1
            }
            stream += Self.report(n)
        }
        let (packets, framer) = Self.frame(stream, chunk: chunk)
        let good = Set(packets.map(\.bytes)).intersection(Set((0..<count).map { Array(Self.report($0).dropFirst()) })).count
        #expect(Double(good) >= 0.98 * Double(count), "\(good) of \(count) reports kept")
        #expect(packets.count <= count + strays, "no made-up packets beyond the strays: \(packets.count)")
        #expect(framer.framingErrors <= strays)
        #expect(framer.pendingByteCount < 64)
    }

    /// A byte lost from inside a packet costs that packet, not the ones after it.
    @Test func aLostByteCostsOnlyItsPacket() throws {
        var stream: [UInt8] = []
        for n in 0..<50 {
            var packet = Self.report(n)
            if n == 20 { packet.remove(at: 30) }
            stream += packet
        }
        let (packets, framer) = Self.frame(stream, chunk: 16)
        let kept = Set(packets.map(\.bytes))
        for n in 0..<50 where n != 20 { #expect(kept.contains(Array(Self.report(n).dropFirst())), "report \(n)") }
        #expect(framer.framingErrors >= 1)
    }

    @Test func aRunOfGarbageIsOneErrorNamingItsLength() throws {
        var framer = H4Framer()
        framer.append([UInt8](repeating: 0xEE, count: 300) + Self.report(1))
        #expect(throws: PacketError.invalidValue(what: "H4 framing lost: bytes skipped", value: 300)) { try framer.nextPacket() }
        #expect(try framer.nextPacket()?.bytes == Array(Self.report(1).dropFirst()))
        #expect(framer.framingErrors == 1 && framer.skippedBytes == 300)
    }

    @Test func lengthsBeyondATypesMaximumAreNotTrusted() throws {
        // ACL claiming 0xFFFF bytes, then a good event: the event is not swallowed.
        var framer = H4Framer(types: Self.allTypes)
        framer.append([0x02, 0x01, 0x00, 0xFF, 0xFF] + Self.report(3))
        var got: [HCIPacket] = []
        for _ in 0..<10 {
            if let p = try? framer.nextPacket() { got.append(p) }
        }
        #expect(got.map(\.bytes) == [Array(Self.report(3).dropFirst())])
    }

    @Test func wholePacketsFromASocketAreLengthChecked() throws {
        #expect(try HCIPacket(h4: [0x04, 0x0E, 0x01, 0x01][...]).type == .event)
        #expect(throws: PacketError.self) { try HCIPacket(h4: [0x04, 0x0E, 0x02, 0x01][...]) }
        #expect(throws: PacketError.self) { try HCIPacket(h4: [0x04][...]) }
        #expect(throws: PacketError.self) { try HCIPacket(h4: [][...]) }
    }
}
