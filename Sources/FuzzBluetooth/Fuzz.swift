#if canImport(Glibc)
import Glibc
#endif
import Bluetooth

/// libFuzzer entry points for everything in the Bluetooth module that reads radio or file
/// input. Which one runs is chosen by FUZZ_TARGET (h4, event, ad, btsnoop). Each also checks
/// invariants a correct decoder keeps, so the fuzzer finds wrong answers, not only crashes.
enum FuzzTarget: String, CaseIterable {
    case h4, event, ad, btsnoop

    func run(_ data: [UInt8]) {
        switch self {
        case .h4: fuzzH4(data)
        case .event: fuzzEvent(data)
        case .ad: fuzzAdvertisingData(data)
        case .btsnoop: fuzzBTSnoop(data)
        }
    }
}

func check(_ condition: Bool, _ message: String) {
    if !condition { fatalError("invariant broken: \(message)") }
}

func decodePacket(_ packet: HCIPacket) {
    switch packet.type {
    case .event:
        if let event = try? HCIEvent(decoding: packet.bytes[...]) {
            let found = BeaconSighting.all(in: event, at: 0)
            if case let .advertisingReports(reports) = event {
                for report in reports { check(report.rssi != 127, "127 is never a measurement") }
            } else {
                check(found.isEmpty, "sightings only come from advertising reports")
            }
        }
    case .command:
        _ = try? HCICommandPacket(decoding: packet.bytes[...])
    default:
        break
    }
}

func fuzzH4(_ data: [UInt8]) {
    // The first byte sets the chunk size, as a UART delivers bytes in arbitrary pieces.
    guard let first = data.first else { return }
    let chunk = Int(first % 16) + 1
    let stream = data.dropFirst()
    // Bit 4 of the first byte: a stream that may carry data packets too.
    let types: Set<HCIPacketType> = first & 0x10 != 0 ? [.command, .acl, .sco, .event, .iso] : [.event]
    var framer = H4Framer(types: types)
    var whole: [HCIPacket] = []
    var index = stream.startIndex
    while index < stream.endIndex {
        let end = min(stream.endIndex, index + chunk)
        framer.append(stream[index..<end])
        index = end
        while true {
            do {
                guard let packet = try framer.nextPacket() else { break }
                whole.append(packet)
                decodePacket(packet)
                check(framer.pendingByteCount <= stream.count, "framer holds no more than it was given")
            } catch {
                continue
            }
        }
    }
    check(framer.pendingByteCount <= 1 + 4 + H4Framer.maximumISOLength + 4, "the framer keeps at most one packet and a header")
    // Re-encoding what was framed gives back a stream that frames to the same packets (a
    // checked event after them, so the last one need not wait for what follows it).
    let sentinel = HCIPacket(type: .event, bytes: [HCIEvent.commandStatusCode, 4, 0x00, 0x01, 0x0C, 0x20])
    var again = H4Framer(types: types)
    again.append((whole + [sentinel]).flatMap(\.h4Bytes))
    var second: [HCIPacket] = []
    while let packet = try? again.nextPacket() { second.append(packet) }
    check(second == whole + [sentinel], "re-framed packets differ")
    check(again.framingErrors == 0, "a stream of framed packets has no framing errors")
}

func fuzzEvent(_ data: [UInt8]) {
    guard let event = try? HCIEvent(decoding: data) else { return }
    if case let .advertisingReports(reports) = event {
        for report in reports {
            check(report.data.count <= data.count, "report data inside the event")
            _ = Beacon.all(in: report.data)
        }
    }
    _ = event.status
}

func fuzzAdvertisingData(_ data: [UInt8]) {
    let parsed = AdvertisingData(parsing: data)
    var covered = 0
    for s in parsed.structures { covered += 2 + s.data.count }
    check(covered <= data.count, "structures inside the data")
    for beacon in Beacon.all(in: parsed) {
        if case let .iBeacon(b) = beacon {
            // What we decoded re-encodes to the bytes it came from.
            let encoded = b.manufacturerData
            check(parsed.structures.contains { $0.type == 0xFF && Array($0.data.prefix(25)) == encoded }, "iBeacon round trip")
        }
    }
    _ = IBeacon(manufacturerData: data[...])
    _ = AltBeacon(manufacturerData: data[...])
    _ = EddystoneFrame(serviceData: data[...])
    _ = parsed.localName
    _ = parsed.serviceUUIDs16
    // A treasure's reward heard over the air: bounded, printable, and nothing else.
    if let reward = TreasureSignals.reward(inScanResponse: data[...]) {
        check(!reward.isEmpty && reward.utf8.count <= TreasureSignals.maximumRewardBytes, "reward bounded")
        check(!reward.unicodeScalars.contains { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format },
              "reward printable")
        check(reward.first != " " && reward.last != " ", "reward trimmed")
    }
    // A sealed reward and an announcement (issue #25): typed errors, never a trap. The
    // authenticator believes every tag, so what gets past the MAC is checked too.
    let a = GameSignals.Announcement(hunterID: 1, treasureTag: 2, challenge: 3)
    if let sealed = try? GameSignals.openReward(inScanResponse: data[...], boxTag: 2, for: a, by: BelieveAll()) {
        check(!sealed.isEmpty && sealed.utf8.count <= GameSignals.maximumSealedRewardBytes, "sealed reward bounded")
    }
    if let beacon = IBeacon(manufacturerData: data[...]) { _ = try? GameSignals.verifiedAnnouncement(beacon, by: BelieveAll()) }
}

/// An authenticator that believes everything: the fuzzer reaches past the MAC.
struct BelieveAll: SignalAuthenticator {
    func tag(_ purpose: SignalPurpose, _ message: [UInt8]) -> [UInt8] { [UInt8](repeating: 0, count: 32) }
    func verify(_ purpose: SignalPurpose, _ message: [UInt8], tag: [UInt8]) -> Bool { true }
    func xor(_ data: [UInt8], nonce: [UInt8]) -> [UInt8] { data }
}

func fuzzBTSnoop(_ data: [UInt8]) {
    let whole = BTSnoopParser.parseAll(data)
    // Chunked reading gives the same records as reading at once.
    var parser = BTSnoopParser()
    var records: [BTSnoopRecord] = []
    var failed = false
    for start in stride(from: 0, to: data.count, by: 97) {
        parser.append(data[start..<min(data.count, start + 97)])
        while true {
            do {
                guard let record = try parser.next() else { break }
                records.append(record)
            } catch {
                failed = true
                break
            }
        }
        if failed { break }
    }
    check(records == Array(whole.records.prefix(records.count)), "chunked and whole reads agree")
    guard let datalink = whole.datalink else { return }
    for record in whole.records {
        if let packet = try? record.packet(datalink: datalink) { decodePacket(packet) }
    }
}

#if FUZZING
    nonisolated(unsafe) var selectedTarget: FuzzTarget?

    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
        let target: FuzzTarget
        if let selectedTarget {
            target = selectedTarget
        } else {
            let name = getenv("FUZZ_TARGET").map { String(cString: $0) } ?? ""
            guard let chosen = FuzzTarget(rawValue: name) else {
                fatalError("set FUZZ_TARGET to one of: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            selectedTarget = chosen
            target = chosen
        }
        let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
        target.run(bytes)
        return 0
    }
#else
    /// Without libFuzzer: runs the chosen target over files, e.g. to replay a crash or a corpus.
    /// usage: FuzzBluetooth TARGET FILE...
    @main enum FuzzReplay {
        static func main() {
            let arguments = CommandLine.arguments.dropFirst()
            guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
                print("usage: FuzzBluetooth h4|event|ad|btsnoop FILE...")
                exit(64)
            }
            for path in arguments.dropFirst() {
                guard let file = fopen(path, "rb") else {
                    print("cannot open \(path)")
                    exit(66)
                }
                var bytes: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 65_536)
                while true {
                    let n = fread(&buffer, 1, buffer.count, file)
                    if n <= 0 { break }
                    bytes += buffer[0..<n]
                }
                fclose(file)
                target.run(bytes)
            }
            print("ran \(arguments.count - 1) input(s) through \(name): no invariant broken")
        }
    }
#endif
