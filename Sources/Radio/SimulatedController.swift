#if canImport(Glibc)
import Glibc
#endif
import Bluetooth
import CLinux

/// A beacon the simulated controller can hear.
public struct VirtualBeacon {
    public var address: BDAddress
    public var advertisingData: [UInt8]
    public var scanResponseData: [UInt8]
    /// Seconds between advertising events (0.1 for Apple's 100 ms).
    public var interval: Double
    /// RSSI heard for the advertising event at `time` on `channel` (0, 1, 2 for 37, 38, 39);
    /// nil when the packet is lost (out of range, switched off, a fade).
    public var rssi: (_ time: Double, _ channel: Int) -> Int8?

    public init(address: BDAddress, advertisingData: [UInt8], scanResponseData: [UInt8] = [], interval: Double,
                rssi: @escaping (Double, Int) -> Int8?) {
        self.address = address
        self.advertisingData = advertisingData
        self.scanResponseData = scanResponseData
        self.interval = interval
        self.rssi = rssi
    }
}

/// A virtual controller behind the transport protocol: it answers our commands as a real one
/// does (Command Complete with a status, supported-commands bits for the chosen family) and,
/// while scanning is on, produces advertising reports for virtual beacons. Time is whatever
/// the caller passes to `advance(to:)`: the loop's clock, virtual or monotonic. Readable
/// (an eventfd) whenever packets wait.
public final class SimulatedController: HCITransport {
    private let events: EventCounter
    public var fileDescriptor: Int32 { events.fd }
    public let name = "simulator"
    public let family: CommandFamily
    /// The controller's own address (what other simulated controllers hear it from).
    public let address: BDAddress
    public private(set) var beacons: [VirtualBeacon]
    public private(set) var scanning = false
    public private(set) var activeScanning = false
    public private(set) var advertising = false
    public private(set) var advertisingData: [UInt8] = []
    public private(set) var scanResponseData: [UInt8] = []
    /// Seconds between advertising events, from the advertising parameters.
    public private(set) var advertisingInterval = 0.1
    /// Whether the advertising PDU answers scan requests (ADV_SCAN_IND).
    public private(set) var scannable = false
    /// Every command received, for tests and logs.
    public private(set) var commandLog: [HCICommandPacket] = []
    /// Answer this status to these opcodes instead of success (to test refusals).
    public var refusals: [HCIOpcode: HCIStatus] = [:]
    /// When set, the next receive fails as an unplugged adapter would (and the fd wakes
    /// poll, as the kernel's socket error or stack-internal event does).
    public var unplugged = false {
        didSet {
            guard unplugged else { return }
            events.signal()
        }
    }

    private var queue: [HCIPacket] = []
    private var now: Double
    private var nextEvent: [Double]
    private var channel: [Int]

    public static let defaultAddress = BDAddress(bytes: (0x01, 0x00, 0x00, 0xAD, 0xDE, 0xC0))

    public init(
        family: CommandFamily = .legacy, address: BDAddress = SimulatedController.defaultAddress, beacons: [VirtualBeacon] = [],
        startTime: Double = 0
    ) throws(TransportError) {
        do {
            events = try EventCounter()
        } catch {
            throw .system(error)
        }
        self.family = family
        self.address = address
        self.beacons = beacons
        now = startTime
        // Spread first advertising events so beacons do not fire in lockstep.
        nextEvent = beacons.enumerated().map { startTime + $0.element.interval * Double($0.offset + 1) / Double(beacons.count + 1) }
        channel = beacons.map { _ in 0 }
    }


    public func add(_ beacon: VirtualBeacon) {
        beacons.append(beacon)
        nextEvent.append(now + beacon.interval / 2)
        channel.append(0)
    }

    private func enqueue(_ packet: HCIPacket) {
        queue.append(packet)
        events.signal()
    }

    private func complete(_ opcode: HCIOpcode, _ extra: [UInt8] = [], status forced: HCIStatus? = nil) {
        let status = forced ?? refusals[opcode] ?? .success
        let parameters: [UInt8] = [1, UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8), status.rawValue] + (status.isSuccess ? extra : [])
        enqueue(HCIPacket(type: .event, bytes: [HCIEvent.commandCompleteCode, UInt8(parameters.count)] + parameters))
    }

    /// Another program on the same adapter (bluetoothd) sends `command`: the controller does
    /// it, and the transport shows it to us as the kernel's raw socket does (commands are in
    /// its filter).
    public func runForeignCommand(_ command: HCICommand) throws(TransportError) {
        let bytes: [UInt8]
        do {
            bytes = try command.encoded()
        } catch {
            throw .system(SystemError("encode \(command.opcode)", errno: 22))
        }
        guard let decoded = try? HCICommandPacket(decoding: bytes[...]) else { return }
        let off = decoded.parameters.first == 0
        switch decoded.opcode {
        case .leSetScanEnable, .leSetExtendedScanEnable: if off { scanning = false }
        case .leSetAdvertisingEnable, .leSetExtendedAdvertisingEnable: if off { advertising = false }
        case .reset: (scanning, advertising) = (false, false)
        case .leClearAdvertisingSets: advertising = false
        default: break
        }
        enqueue(HCIPacket(type: .command, bytes: bytes))
    }

    public func send(_ packet: HCIPacket) throws(TransportError) {
        if unplugged { throw .adapterGone(name) }
        guard packet.type == .command, let command = try? HCICommandPacket(decoding: packet.bytes[...]) else { return }
        commandLog.append(command)
        let p = Array(command.parameters)
        let ok = refusals[command.opcode] == nil
        switch command.opcode {
        case .readLocalSupportedCommands:
            var octets = [UInt8](repeating: 0, count: 64)
            if family == .extended {
                octets[37] = 0x60
                octets[36] = 0x2C
            }
            complete(command.opcode, octets)
        case .readBDAddress:
            complete(command.opcode, address.wireBytes)
        case .leSetScanEnable, .leSetExtendedScanEnable:
            // Mixing families, or disabling what is off, is Command Disallowed on real controllers.
            let wrongFamily = (command.opcode == .leSetExtendedScanEnable) != (family == .extended)
            let enable = p.first == 1
            if wrongFamily || (!enable && !scanning) {
                complete(command.opcode, status: .commandDisallowed)
                return
            }
            complete(command.opcode)
            if ok { scanning = enable }
        case .leSetScanParameters:
            complete(command.opcode)
            if ok { activeScanning = p.first == 1 }
        case .leSetExtendedScanParameters:
            complete(command.opcode)
            if ok { activeScanning = p.count > 3 && p[3] == 1 }
        case .leSetAdvertisingParameters:
            complete(command.opcode, status: wrong(command.opcode) ?? (advertising ? .commandDisallowed : nil))
            if ok, !advertising, p.count >= 5 {
                advertisingInterval = Double(UInt16(p[0]) | UInt16(p[1]) << 8) * 0.000625
                scannable = p[4] == LegacyAdvertisingType.scannableUndirected.rawValue
            }
        case .leSetExtendedAdvertisingParameters:
            complete(command.opcode, [0x00], status: wrong(command.opcode) ?? (advertising ? .commandDisallowed : nil))
            if ok, !advertising, p.count >= 6 {
                advertisingInterval = Double(UInt32(p[3]) | UInt32(p[4]) << 8 | UInt32(p[5]) << 16) * 0.000625
                scannable = p[1] & 0x02 != 0
            }
        case .leSetAdvertisingData:
            complete(command.opcode)
            if ok, let n = p.first { advertisingData = Array(p.dropFirst().prefix(Int(n))) }
        case .leSetScanResponseData:
            complete(command.opcode)
            if ok, let n = p.first { scanResponseData = Array(p.dropFirst().prefix(Int(n))) }
        case .leSetExtendedAdvertisingData:
            complete(command.opcode)
            if ok, p.count >= 4 { advertisingData = Array(p.dropFirst(4)) }
        case .leSetExtendedScanResponseData:
            complete(command.opcode)
            if ok, p.count >= 4 { scanResponseData = Array(p.dropFirst(4)) }
        case .leSetAdvertisingEnable, .leSetExtendedAdvertisingEnable:
            complete(command.opcode, status: wrong(command.opcode))
            if ok, wrong(command.opcode) == nil { advertising = p.first == 1 }
        default:
            complete(command.opcode)
        }
    }

    /// Command Disallowed for a command of the other family (as real controllers answer).
    private func wrong(_ opcode: HCIOpcode) -> HCIStatus? {
        let extended: Set<HCIOpcode> = [.leSetExtendedAdvertisingParameters, .leSetExtendedAdvertisingData, .leSetExtendedScanResponseData, .leSetExtendedAdvertisingEnable]
        let legacy: Set<HCIOpcode> = [.leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData, .leSetAdvertisingEnable]
        if family == .legacy, extended.contains(opcode) { return .unknownCommand }
        if family == .extended, legacy.contains(opcode) { return .commandDisallowed }
        return nil
    }

    /// Another controller's advertising event heard at `rssi` (the air delivers it).
    func hear(from other: SimulatedController, rssi: Int8) {
        guard scanning else { return }
        enqueue(report(address: other.address, data: other.advertisingData, scannable: other.scannable, rssi: rssi, scanResponse: false))
        if activeScanning && other.scannable {
            enqueue(report(address: other.address, data: other.scanResponseData, scannable: true, rssi: rssi, scanResponse: true))
        }
    }

    public func receive() throws(TransportError) -> [HCIPacket] {
        if unplugged { throw .adapterGone(name) }
        events.drain()
        defer { queue.removeAll(keepingCapacity: true) }
        return queue
    }

    /// Moves time forward, producing the reports of every advertising event up to `time`.
    public func advance(to time: Double) {
        guard time > now else { return }
        now = time
        for i in beacons.indices {
            while nextEvent[i] <= time {
                let t = nextEvent[i]
                let b = beacons[i]
                // Apple's spec: every 100 ms plus the link layer's 0-10 ms random delay.
                nextEvent[i] = t + b.interval + 0.005
                let ch = channel[i]
                channel[i] = (ch + 1) % 3
                guard scanning, let rssi = b.rssi(t, ch) else { continue }
                let scannable = !b.scanResponseData.isEmpty
                enqueue(report(address: b.address, data: b.advertisingData, scannable: scannable, rssi: rssi, scanResponse: false))
                if activeScanning && scannable {
                    enqueue(report(address: b.address, data: b.scanResponseData, scannable: true, rssi: rssi, scanResponse: true))
                }
            }
        }
    }

    func report(address: BDAddress, data: [UInt8], scannable: Bool, rssi: Int8, scanResponse: Bool) -> HCIPacket {
        var params: [UInt8]
        switch family {
        case .legacy:
            params = [HCIEvent.legacyAdvertisingReportSubevent, 1, scanResponse ? 0x04 : (scannable ? 0x02 : 0x03), 0x00]
            params += address.wireBytes
            params.append(UInt8(data.count))
            params += data
            params.append(UInt8(bitPattern: rssi))
        case .extended:
            let eventType: UInt16 = scanResponse ? 0x001A : (scannable ? 0x0012 : 0x0010)
            params = [HCIEvent.extendedAdvertisingReportSubevent, 1, UInt8(eventType & 0xFF), UInt8(eventType >> 8), 0x00]
            params += address.wireBytes
            params += [0x01, 0x00, 0xFF, 0x7F, UInt8(bitPattern: rssi), 0, 0, 0, 0, 0, 0, 0, 0, 0]
            params.append(UInt8(data.count))
            params += data
        }
        return HCIPacket(type: .event, bytes: [HCIEvent.leMetaCode, UInt8(params.count)] + params)
    }

    public func close() {}
}

/// The air between simulated controllers: each one that advertises is heard by each other
/// one that scans, at the RSSI `link` gives for that packet (nil: lost). Scan responses go
/// to active scanners of scannable advertisers. Time is what the caller passes to `advance`.
public final class SimulatedAir {
    /// RSSI of one advertising event from `from` heard by `to` on `channel` (0, 1, 2).
    public typealias Link = (_ time: Double, _ from: BDAddress, _ to: BDAddress, _ channel: Int) -> Int8?

    public private(set) var controllers: [SimulatedController] = []
    private var nextEvent: [Double] = []
    private var channel: [Int] = []
    private var now: Double
    private let link: Link

    public init(startTime: Double = 0, link: @escaping Link) {
        now = startTime
        self.link = link
    }

    public func join(_ controller: SimulatedController) {
        controllers.append(controller)
        nextEvent.append(now + 0.01 * Double(controllers.count))
        channel.append(0)
    }

    /// Moves every controller (and its virtual beacons) to `time`, delivering what was heard.
    public func advance(to time: Double) {
        guard time > now else { return }
        now = time
        for (i, sender) in controllers.enumerated() {
            sender.advance(to: time)
            guard sender.advertising else {
                nextEvent[i] = max(nextEvent[i], time)
                continue
            }
            while nextEvent[i] <= time {
                let t = nextEvent[i]
                nextEvent[i] = t + sender.advertisingInterval + 0.005
                let ch = channel[i]
                channel[i] = (ch + 1) % 3
                for receiver in controllers where receiver !== sender {
                    if let rssi = link(t, sender.address, receiver.address, ch) { receiver.hear(from: sender, rssi: rssi) }
                }
            }
        }
    }
}
