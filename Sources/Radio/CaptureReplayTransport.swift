#if canImport(Glibc)
import Glibc
#endif
import Bluetooth

/// A btsnoop capture as a controller (`replay --hunt`): what the controller reported then
/// (advertising reports, hardware errors) arrives again at the capture's own pace on the
/// loop's clock, the first record at `startTime`; our commands are answered with success,
/// as by a controller that does as it is told (legacy commands). What the capture's own
/// commands and their answers were is not replayed: the session sends its own.
public final class CaptureReplayTransport: HCITransport {
    private let events: EventCounter
    public var fileDescriptor: Int32 { events.fd }
    public let name: String
    private var reader: CaptureFileReader
    private let startTime: Double
    /// The next record to deliver, read ahead: (its time on the loop's clock, the packet).
    private var next: (time: Double, packet: HCIPacket)?
    private var queue: [HCIPacket] = []
    /// The capture is used up (or cut off): nothing more will arrive.
    public private(set) var finished = false
    /// Why the capture ended early (a torn or malformed record), nil at a clean end.
    public private(set) var failure: String?
    /// Records whose HCI packet did not decode (skipped).
    public private(set) var malformed = 0
    /// Loop time of the last record delivered.
    public private(set) var lastTime: Double
    /// Loop time of the next record to deliver (nil: none is left).
    public var nextTime: Double? { next?.time }
    /// A capture's clock can jump (a Pi without a clock chip set by NTP mid-hunt): replayed
    /// by `CaptureClock`, never back and never by more than `CaptureClock.longestGap`.
    private var clock = CaptureClock()
    /// Gaps shortened so (or clocks that went back).
    public var clockJumps: Int { clock.jumps }
    /// One adapter's records of a btmon capture of several (`MonitorAdapterFilter`).
    public private(set) var adapters = MonitorAdapterFilter()

    public init(path: String, startTime: Double) throws(SystemError) {
        events = try EventCounter()
        reader = try CaptureFileReader(path: path)
        name = "capture:" + path
        self.startTime = startTime
        lastTime = startTime
        readAhead()
    }

    deinit { reader.close() }

    /// Reads records until the next one the controller sent (an event worth replaying).
    private func readAhead() {
        next = nil
        while !finished {
            let record: BTSnoopRecord
            do {
                guard let r = try reader.next() else {
                    finished = true
                    return
                }
                record = r
            } catch {
                failure = "\(error)"
                finished = true
                return
            }
            let elapsed = clock.seconds(at: record.timestamp)
            guard record.flags & 1 == 1, let datalink = reader.datalink, adapters.accepts(record, datalink: datalink) else { continue }
            let packet: HCIPacket
            do {
                guard let p = try record.packet(datalink: datalink) else { continue }
                packet = p
            } catch {
                malformed += 1
                continue
            }
            guard packet.type == .event else { continue }
            guard let event = try? HCIEvent(decoding: packet.bytes[...]) else {
                malformed += 1
                continue
            }
            switch event {
            case .advertisingReports, .hardwareError:
                next = (startTime + elapsed, packet)
                return
            default:
                continue  // answers to the commands of the recorded session
            }
        }
    }

    /// Delivers every record due by `time` (the loop's clock).
    public func advance(to time: Double) {
        var woke = false
        while let (t, packet) = next, t <= time {
            queue.append(packet)
            lastTime = t
            woke = true
            readAhead()
        }
        if woke { wake() }
    }

    private func wake() { events.signal() }

    public func send(_ packet: HCIPacket) throws(TransportError) {
        guard packet.type == .command, let command = try? HCICommandPacket(decoding: packet.bytes[...]) else { return }
        var extra: [UInt8] = []
        switch command.opcode {
        case .readLocalSupportedCommands: extra = [UInt8](repeating: 0, count: 64)
        case .readBDAddress: extra = [UInt8](repeating: 0, count: 6)
        case .leSetExtendedAdvertisingParameters: extra = [0]
        default: break
        }
        let opcode = command.opcode.rawValue
        let parameters: [UInt8] = [1, UInt8(opcode & 0xFF), UInt8(opcode >> 8), HCIStatus.success.rawValue] + extra
        queue.append(HCIPacket(type: .event, bytes: [HCIEvent.commandCompleteCode, UInt8(parameters.count)] + parameters))
        wake()
    }

    public func receive() throws(TransportError) -> [HCIPacket] {
        events.drain()
        defer { queue.removeAll(keepingCapacity: true) }
        return queue
    }

    public func close() {}
}
