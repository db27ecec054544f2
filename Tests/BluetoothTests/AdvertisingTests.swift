import Bluetooth
import FoundationEssentials
import Testing

private let treasureUUID = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0") ?? UUID()
private let treasure = IBeacon(uuid: treasureUUID, major: 0x1234, minor: 0x0007, measuredPower: -59)

private func treasureAdvertisement(reward: String? = "ARRR-GOLD") throws -> Advertisement {
    Advertisement(
        data: treasure.advertisingData, scanResponse: try reward.map { try TreasureSignals.scanResponse(reward: $0) } ?? [],
        intervalUnits: 0x00A0)
}

private func boxSettings(reward: String? = "ARRR-GOLD") throws -> ControllerSettings {
    ControllerSettings(scanning: .passive, advertisement: try treasureAdvertisement(reward: reward))
}

/// Answers every command with success, after the supported-commands read.
private func succeed(extended: Bool) -> (HCICommand) -> HCIEvent? {
    { c in c == .readLocalSupportedCommands ? supportedReply(extended: extended) : complete(c.opcode) }
}

@Suite struct AdvertisingDataTests {
    @Test func iBeaconAdvertisingDataIsFlagsThenAppleManufacturerData() throws {
        let bytes = treasure.advertisingData
        #expect(bytes.count == 30)
        #expect(Array(bytes[0..<9]) == [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15])
        #expect(Array(bytes[9..<25]) == [0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0])
        #expect(Array(bytes[25..<30]) == [0x12, 0x34, 0x00, 0x07, 0xC5])
        #expect(Beacon.all(in: bytes[...]) == [.iBeacon(treasure)])
    }

    @Test func rewardScanResponseIsOneManufacturerStructureOfTheTestCompany() throws {
        let bytes = try TreasureSignals.scanResponse(reward: "ARRR-GOLD")
        #expect(bytes == [12, 0xFF, 0xFF, 0xFF] + Array("ARRR-GOLD".utf8))
        #expect(TreasureSignals.reward(inScanResponse: bytes[...]) == "ARRR-GOLD")
    }

    @Test func twentySevenBytesFitTheScanResponseAndTwentyEightDoNot() throws {
        let longest = "Ye found it! ☠ 10% off"  // 24 bytes
        #expect(longest.utf8.count <= 27)
        let exact = String(repeating: "X", count: 27)
        let bytes = try TreasureSignals.scanResponse(reward: exact)
        #expect(bytes.count == 31)
        #expect(TreasureSignals.reward(inScanResponse: bytes[...]) == exact)
        #expect(TreasureSignals.reward(inScanResponse: try TreasureSignals.scanResponse(reward: longest)[...]) == longest)
        #expect(throws: PacketError.self) { try TreasureSignals.scanResponse(reward: exact + "X") }
        #expect(throws: PacketError.self) { try TreasureSignals.scanResponse(reward: "") }
    }

    @Test(arguments: [
        // (scan response bytes, expected reward)
        ([0x09, 0xFF, 0xFF, 0xFF, 0x41, 0x1B, 0x5B, 0x33, 0x31, 0x6D], "A [31m"),  // ESC dropped (a control separates words)
        ([0x08, 0xFF, 0xFF, 0xFF, 0x41, 0x0A, 0x0D, 0x42, 0x43], "A BC"),  // newline, CR: one space
        ([0x07, 0xFF, 0xFF, 0xFF, 0x41, 0xC3, 0x28, 0x42], "A(B"),  // invalid UTF-8 dropped
        ([0x09, 0xFF, 0xFF, 0xFF, 0x41, 0xE2, 0x80, 0xAE, 0x42, 0x43], "ABC"),  // bidi override dropped
        ([0x06, 0xFF, 0xFF, 0xFF, 0x20, 0x41, 0x20], "A"),  // trimmed
    ] as [([UInt8], String)])
    func hostileRewardsComeOutPrintable(_ bytes: [UInt8], _ expected: String) {
        #expect(TreasureSignals.reward(inScanResponse: bytes[...]) == expected)
    }

    @Test(arguments: [
        [UInt8](),
        [0x04, 0xFF, 0x4C, 0x00, 0x41],  // Apple's company, not ours
        [0x0C, 0xFF, 0xFF, 0xFF, 0x41],  // declared longer than what is there
        [0x05, 0xFF, 0xFF, 0xFF, 0x00, 0x07],  // nothing printable
        [0x03, 0xFF, 0xFF, 0xFF],  // company only
        [0x09, 0x09, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48],  // a name, no reward
    ])
    func noRewardIsNil(_ bytes: [UInt8]) {
        #expect(TreasureSignals.reward(inScanResponse: bytes[...]) == nil)
    }

    @Test func anOverlongRewardFromTheAirIsCutAtTwentySevenBytes() {
        let bytes: [UInt8] = [0x21, 0xFF, 0xFF, 0xFF] + Array(repeating: 0x5A, count: 30)  // extended PDUs may carry more
        #expect(TreasureSignals.reward(inScanResponse: bytes[...]) == String(repeating: "Z", count: 27))
    }

    @Test func hunterAnnouncementRoundTrips() throws {
        let beacon = TreasureSignals.announcement(hunterID: 4242, treasure: treasure)
        #expect(beacon.uuid == TreasureSignals.hunterUUID)
        let heard = try #require(Beacon.all(in: beacon.advertisingData[...]).first)
        guard case let .iBeacon(b) = heard else {
            Issue.record("not an iBeacon")
            return
        }
        let hunter = try #require(TreasureSignals.hunter(in: b))
        #expect(hunter.id == 4242 && hunter.treasureTag == TreasureSignals.tag(of: treasure))
        #expect(TreasureSignals.hunter(in: treasure) == nil)
        // Treasures that differ in any id have different tags (these do, and FNV-1a is fixed).
        var other = treasure
        other.major += 1
        #expect(TreasureSignals.tag(of: other) != TreasureSignals.tag(of: treasure))
        other = treasure
        other.minor += 1
        #expect(TreasureSignals.tag(of: other) != TreasureSignals.tag(of: treasure))
    }
}

@Suite struct AdvertisingProcedureTests {
    /// A command unanswered by its deadline has failed when the timer fires at that very
    /// deadline, whatever the rounding of `time - sentAt` (the timer once found it 1 ulp short
    /// and waited again at the same moment, for ever on virtual time).
    @Test func anUnansweredCommandFailsAtItsOwnDeadline() throws {
        var rounded = 0
        for k in 0..<400 {
            let sent = 0.1 + 0.37 * Double(k)
            var p = ControllerProcedure.configure(from: nil, to: try boxSettings(), advertises: true)
            #expect(p.start(at: sent) != .wait)
            let deadline = try #require(p.deadline)
            if deadline - sent < 2.0 { rounded += 1 }
            guard case .failed = p.tick(at: deadline) else {
                Issue.record("sent at \(sent): still waiting at its deadline \(deadline)")
                continue
            }
        }
        // The rounding case is among them.
        #expect(rounded > 0)
    }

    @Test func legacyTreasureScansThenAdvertisesParametersDataResponseEnable() throws {
        var p = ControllerProcedure.configure(from: nil, to: try boxSettings(), advertises: true)
        let (sent, outcome) = drive(&p, answer: succeed(extended: false))
        #expect(outcome == .finished)
        #expect(p.family == .legacy)
        // Outside #expect: Swift 6.0's macro does not take a `try` inside an operand.
        let scanResponse = try TreasureSignals.scanResponse(reward: "ARRR-GOLD")
        #expect(sent == [
            .readLocalSupportedCommands,
            .leSetScanEnable(false, filterDuplicates: false),
            .leSetScanParameters(active: false, interval: 0x10, window: 0x10, ownAddress: .public),
            .leSetScanEnable(true, filterDuplicates: false),
            .leSetAdvertisingEnable(false),
            .leSetAdvertisingParameters(intervalMin: 0xA0, intervalMax: 0xA0, type: .scannableUndirected, ownAddress: .public),
            .leSetAdvertisingData(treasure.advertisingData),
            .leSetScanResponseData(scanResponse),
            .leSetAdvertisingEnable(true),
        ])
        // The wire bytes of the field guide: 06 20, 100 ms, ADV_SCAN_IND, public, all channels.
        #expect(try sent[5].encoded() == [0x06, 0x20, 15, 0xA0, 0x00, 0xA0, 0x00, 0x02, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0x07, 0x00])
        let data = try sent[6].encoded()
        #expect(Array(data[0..<4]) == [0x08, 0x20, 32, 30])
        #expect(data.count == 3 + 32, "length byte + 31 bytes, zero padded")
    }

    @Test func withoutARewardTheTreasureIsNonConnectableAndSendsNoScanResponse() throws {
        var p = ControllerProcedure.configure(from: nil, to: try boxSettings(reward: nil), advertises: true)
        let (sent, outcome) = drive(&p, answer: succeed(extended: false))
        #expect(outcome == .finished)
        #expect(sent.contains(.leSetAdvertisingParameters(intervalMin: 0xA0, intervalMax: 0xA0, type: .nonConnectableUndirected, ownAddress: .public)))
        #expect(!sent.contains { $0.opcode == .leSetScanResponseData })
    }

    @Test func extendedControllerGetsOneExtendedSetWithLegacyPDUs() throws {
        var p = ControllerProcedure.configure(from: nil, to: try boxSettings(), advertises: true)
        let (sent, outcome) = drive(&p, answer: succeed(extended: true))
        #expect(outcome == .finished)
        #expect(p.family == .extended)
        let scanResponse = try TreasureSignals.scanResponse(reward: "ARRR-GOLD")
        #expect(Array(sent.suffix(6)) == [
            .leSetExtendedAdvertisingEnable(false, handle: 0),
            .leRemoveAdvertisingSet(handle: 0),
            .leSetExtendedAdvertisingParameters(handle: 0, type: .scannableUndirected, intervalMin: 0xA0, intervalMax: 0xA0, ownAddress: .public, txPower: nil),
            .leSetExtendedAdvertisingData(handle: 0, treasure.advertisingData),
            .leSetExtendedScanResponseData(handle: 0, scanResponse),
            .leSetExtendedAdvertisingEnable(true, handle: 0),
        ])
        // Event properties 0x0012: legacy PDU, scannable.
        let parameters = try sent[sent.count - 4].parameters()
        #expect(parameters[1] == 0x12 && parameters[2] == 0x00)
        #expect(!sent.contains { [.leSetScanEnable, .leSetAdvertisingEnable, .leSetAdvertisingParameters].contains($0.opcode) })
    }

    @Test func extendedScanningWithoutExtendedAdvertisingStaysLegacyWhenAdvertising() {
        var octets = [UInt8](repeating: 0, count: 64)
        octets[37] = 0x60  // extended scanning only
        let support = SupportedCommands(octets: octets)
        #expect(ControllerProcedure.family(for: support, advertises: true) == .legacy)
        #expect(ControllerProcedure.family(for: support, advertises: false) == .extended)
    }

    @Test(arguments: [(false, HCIStatus.commandDisallowed), (true, .commandDisallowed), (true, .unknownAdvertisingIdentifier)])
    func disablingAdvertisingThatIsOffIsTolerated(_ extended: Bool, _ status: HCIStatus) throws {
        var p = ControllerProcedure.configure(from: nil, to: try boxSettings(), advertises: true)
        let (_, outcome) = drive(&p) { c in
            switch c {
            case .readLocalSupportedCommands: return supportedReply(extended: extended)
            case .leSetAdvertisingEnable(false), .leSetExtendedAdvertisingEnable(false, _), .leRemoveAdvertisingSet: return complete(c.opcode, status)
            default: return complete(c.opcode)
            }
        }
        #expect(outcome == .finished)
    }

    static let refusals: [(HCIOpcode, HCIStatus, String)] = [
        (.leSetAdvertisingParameters, .invalidParameters,
         "LE Set Advertising Parameters (0x2006) failed: invalid HCI command parameters (0x12): the controller refuses these parameters (an interval below 100 ms is not allowed for non-connectable advertising on 4.x)"),
        (.leSetAdvertisingParameters, .commandDisallowed,
         "LE Set Advertising Parameters (0x2006) failed: command disallowed (0x0c): advertising is already on (another program?) and its parameters cannot change"),
        (.leSetAdvertisingData, .invalidParameters,
         "LE Set Advertising Data (0x2008) failed: invalid HCI command parameters (0x12): the controller refuses these parameters"),
        (.leSetScanResponseData, .unknownCommand,
         "LE Set Scan Response Data (0x2009) failed: unknown HCI command (0x01): this controller does not support the command"),
        (.leSetAdvertisingEnable, .commandDisallowed,
         "LE Set Advertising Enable (0x200a) failed: command disallowed (0x0c): not allowed in the controller's current state (another program may be using it)"),
        (.leSetAdvertisingEnable, .memoryCapacityExceeded,
         "LE Set Advertising Enable (0x200a) failed: memory capacity exceeded (0x07): no free advertising set in the controller"),
        (.leSetAdvertisingEnable, HCIStatus(rawValue: 0x3A), "LE Set Advertising Enable (0x200a) failed: controller busy (0x3a)"),
    ]

    @Test(arguments: refusals)
    func eachRefusalStopsTheSequenceWithAClearMessage(_ opcode: HCIOpcode, _ status: HCIStatus, _ message: String) throws {
        var p = ControllerProcedure.configure(from: nil, to: try boxSettings(), advertises: true)
        var enableOffSeen = false
        let (sent, outcome) = drive(&p) { c in
            if c == .readLocalSupportedCommands { return supportedReply(extended: false) }
            if c == .leSetAdvertisingEnable(false) {
                enableOffSeen = true
                return complete(c.opcode)
            }
            // The refusal is for the command we test (for enable: the "on" after the tolerated "off").
            if c.opcode == opcode, opcode != .leSetAdvertisingEnable || enableOffSeen { return complete(c.opcode, status) }
            return complete(c.opcode)
        }
        guard case let .failed(failure) = outcome else {
            Issue.record("finished despite \(status)")
            return
        }
        #expect(failure.opcode == opcode && failure.status == status)
        #expect(failure.description == message)
        #expect(sent.last?.opcode == opcode, "nothing is sent after a refusal")
        if opcode != .leSetAdvertisingEnable { #expect(!sent.contains(.leSetAdvertisingEnable(true))) }
    }

    @Test func anUnansweredAdvertisingCommandTimesOut() throws {
        var p = ControllerProcedure.configure(from: nil, to: try boxSettings(), advertises: true, timeout: 1)
        let (_, outcome) = drive(&p) { c in
            switch c {
            case .readLocalSupportedCommands: return supportedReply(extended: false)
            case .leSetAdvertisingData: return nil
            default: return complete(c.opcode)
            }
        }
        #expect(outcome == .failed(CommandFailure(opcode: .leSetAdvertisingData, status: nil)))
        if case let .failed(f) = outcome { #expect(f.description == "LE Set Advertising Data (0x2008) got no answer from the controller in time") }
    }

    @Test func onlyWhatChangedIsSent() throws {
        let known = SupportedCommands(octets: [])
        let old = try boxSettings()
        // A new reward: advertising again, scanning untouched.
        var new = old
        new.advertisement = try treasureAdvertisement(reward: "NEW-ONE")
        var p = ControllerProcedure.configure(from: old, to: new, advertises: true, knownSupport: known)
        var (sent, outcome) = drive(&p, answer: succeed(extended: false))
        #expect(outcome == .finished)
        #expect(sent.first == .leSetAdvertisingEnable(false) && sent.last == .leSetAdvertisingEnable(true))
        #expect(!sent.contains { $0.opcode == .leSetScanEnable || $0.opcode == .readLocalSupportedCommands })
        // Active scanning for a reward: scanning only.
        p = ControllerProcedure.configure(
            from: ControllerSettings(scanning: .passive), to: ControllerSettings(scanning: .active), advertises: true, knownSupport: known)
        (sent, outcome) = drive(&p, answer: succeed(extended: false))
        #expect(sent == [
            .leSetScanEnable(false, filterDuplicates: false),
            .leSetScanParameters(active: true, interval: 0x10, window: 0x10, ownAddress: .public),
            .leSetScanEnable(true, filterDuplicates: false),
        ])
        // Announcement over: one disable.
        p = ControllerProcedure.configure(from: old, to: ControllerSettings(scanning: .passive), advertises: true, knownSupport: known)
        (sent, outcome) = drive(&p, answer: succeed(extended: false))
        #expect(sent == [.leSetAdvertisingEnable(false)])
        // Nothing changed: nothing sent.
        p = ControllerProcedure.configure(from: old, to: old, advertises: true, knownSupport: known)
        (sent, outcome) = drive(&p, answer: succeed(extended: false))
        #expect(sent.isEmpty && outcome == .finished)
    }

    @Test func stopSwitchesAdvertisingThenScanningOff() {
        var p = ControllerProcedure.stopAll(advertising: true, family: .extended)
        let (sent, outcome) = drive(&p) { c in complete(c.opcode, .commandDisallowed) }
        #expect(sent == [.leSetExtendedAdvertisingEnable(false, handle: 0), .leSetExtendedScanEnable(false, filterDuplicates: false)])
        #expect(outcome == .finished)
    }
}
