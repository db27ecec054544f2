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
/// the caller passes to `advance(to:)`: virtual in tests and replays, the monotonic clock in
/// `demo`. Readable (an eventfd) whenever packets wait.
public final class SimulatedController: HCITransport {
    public let fileDescriptor: Int32
    public let name = "simulator"
    public let family: CommandFamily
    public private(set) var beacons: [VirtualBeacon]
    public private(set) var scanning = false
    public private(set) var activeScanning = false
    public private(set) var advertising = false
    public private(set) var advertisingData: [UInt8] = []
    public private(set) var scanResponseData: [UInt8] = []
    /// Every command received, for tests and logs.
    public private(set) var commandLog: [HCICommandPacket] = []
    /// Answer this status to these opcodes instead of success (to test refusals).
    public var refusals: [HCIOpcode: HCIStatus] = [:]
    /// When set, the next receive fails as an unplugged adapter would.
    public var unplugged = false

    private var queue: [HCIPacket] = []
    private var now: Double
    private var nextEvent: [Double]
    private var channel: [Int]

    public init(family: CommandFamily = .legacy, beacons: [VirtualBeacon] = [], startTime: Double = 0) throws(TransportError) {
        let fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard fd >= 0 else { throw .system(SystemError("eventfd", errno: errno)) }
        fileDescriptor = fd
        self.family = family
        self.beacons = beacons
        now = startTime
        // Spread first advertising events so beacons do not fire in lockstep.
        nextEvent = beacons.enumerated().map { startTime + $0.element.interval * Double($0.offset + 1) / Double(beacons.count + 1) }
        channel = beacons.map { _ in 0 }
    }

    deinit { Glibc.close(fileDescriptor) }

    public func add(_ beacon: VirtualBeacon) {
        beacons.append(beacon)
        nextEvent.append(now + beacon.interval / 2)
        channel.append(0)
    }

    private func enqueue(_ packet: HCIPacket) {
        queue.append(packet)
        var one: UInt64 = 1
        _ = Glibc.write(fileDescriptor, &one, 8)
    }

    private func complete(_ opcode: HCIOpcode, _ extra: [UInt8] = [], status forced: HCIStatus? = nil) {
        let status = forced ?? refusals[opcode] ?? .success
        let parameters: [UInt8] = [1, UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8), status.rawValue] + (status.isSuccess ? extra : [])
        enqueue(HCIPacket(type: .event, bytes: [HCIEvent.commandCompleteCode, UInt8(parameters.count)] + parameters))
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
            complete(command.opcode, [0x01, 0x00, 0x00, 0xAD, 0xDE, 0xC0])
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
            complete(command.opcode)
            if ok { advertising = p.first == 1 }
        default:
            complete(command.opcode)
        }
    }

    public func receive() throws(TransportError) -> [HCIPacket] {
        if unplugged { throw .adapterGone(name) }
        var counter: UInt64 = 0
        _ = Glibc.read(fileDescriptor, &counter, 8)
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
                enqueue(report(b, rssi: rssi, scanResponse: false))
                if activeScanning && !b.scanResponseData.isEmpty {
                    enqueue(report(b, rssi: rssi, scanResponse: true))
                }
            }
        }
    }

    func report(_ b: VirtualBeacon, rssi: Int8, scanResponse: Bool) -> HCIPacket {
        let data = scanResponse ? b.scanResponseData : b.advertisingData
        var params: [UInt8]
        switch family {
        case .legacy:
            params = [HCIEvent.legacyAdvertisingReportSubevent, 1, scanResponse ? 0x04 : (b.scanResponseData.isEmpty ? 0x03 : 0x02), 0x00]
            params += b.address.wireBytes
            params.append(UInt8(data.count))
            params += data
            params.append(UInt8(bitPattern: rssi))
        case .extended:
            let eventType: UInt16 = scanResponse ? 0x001A : (b.scanResponseData.isEmpty ? 0x0010 : 0x0012)
            params = [HCIEvent.extendedAdvertisingReportSubevent, 1, UInt8(eventType & 0xFF), UInt8(eventType >> 8), 0x00]
            params += b.address.wireBytes
            params += [0x01, 0x00, 0xFF, 0x7F, UInt8(bitPattern: rssi), 0, 0, 0, 0, 0, 0, 0, 0, 0]
            params.append(UInt8(data.count))
            params += data
        }
        return HCIPacket(type: .event, bytes: [HCIEvent.leMetaCode, UInt8(params.count)] + params)
    }

    public func close() {}
}
