/// btsnoop v1: what Android's HCI snoop log and `btmon -w` write.
public enum BTSnoopDatalink: UInt32, Sendable {
    /// HCI packets without a type byte; the type comes from the flags.
    case unencapsulated = 1001
    /// H4: the packet type byte first.
    case h4 = 1002
    /// Linux monitor (btmon): flags = adapter index << 16 | opcode.
    case linuxMonitor = 2001
}

/// One record of a btsnoop capture.
public struct BTSnoopRecord: Equatable, Sendable {
    /// 1-based position in the file.
    public var number: Int
    public var originalLength: UInt32
    public var flags: UInt32
    public var cumulativeDrops: UInt32
    /// Microseconds since 0000-01-01 (btsnoop's epoch).
    public var timestamp: Int64
    public var data: [UInt8]

    /// Microseconds between btsnoop's epoch and the Unix epoch.
    public static let unixEpochOffset: Int64 = 0x00DC_DDB3_0F2F_8000

    public var unixMicroseconds: Int64 { timestamp &- Self.unixEpochOffset }

    /// The HCI packet this record carries, nil for records that carry none
    /// (monitor notes, index events, data link specific meta records).
    public func packet(datalink: BTSnoopDatalink) throws(PacketError) -> HCIPacket? {
        switch datalink {
        case .h4:
            return try HCIPacket(h4: data[...])
        case .unencapsulated:
            let received = flags & 0x01 != 0
            let commandOrEvent = flags & 0x02 != 0
            let type: HCIPacketType = commandOrEvent ? (received ? .event : .command) : .acl
            return HCIPacket(type: type, bytes: data)
        case .linuxMonitor:
            let type: HCIPacketType
            switch flags & 0xFFFF {
            case 2: type = .command
            case 3: type = .event
            case 4, 5: type = .acl
            case 6, 7: type = .sco
            case 18, 19: type = .iso
            default: return nil
            }
            return HCIPacket(type: type, bytes: data)
        }
    }

    /// The monitor adapter index, for datalink 2001.
    public var monitorIndex: UInt16 { UInt16(truncatingIfNeeded: flags >> 16) }
}

/// One receiver's records of a capture: `btmon -w` on a machine with two controllers (a
/// hunter and a box on one Pi, or btvirt's two) writes both, and replayed as one receiver
/// their reports were mixed. The first adapter that sends an event is the one replayed;
/// the others' records are counted and skipped. Other datalinks hold one adapter.
public struct MonitorAdapterFilter: Sendable {
    public private(set) var adapter: UInt16?
    /// Records of other adapters skipped.
    public private(set) var skipped = 0

    public init() {}

    /// Whether `record` is the replayed adapter's (only events are judged: what is replayed).
    public mutating func accepts(_ record: BTSnoopRecord, datalink: BTSnoopDatalink) -> Bool {
        guard datalink == .linuxMonitor, record.flags & 0xFFFF == 3 else { return true }
        let index = record.monitorIndex
        if adapter == nil { adapter = index }
        guard index != adapter else { return true }
        skipped += 1
        return false
    }
}

/// A capture's records on a clock that only moves forward, and never by days: a Pi without a
/// clock chip is set by NTP mid-capture (the wall clock, and so the records' timestamps,
/// jumps back, or forward by days), and replayed as it was every beacon was lost and every
/// region left at a jump forward, and every record after a jump back was "now" until the
/// capture's clock caught up. A gap between records longer than `longestGap` is replayed as
/// that long, a negative one as none.
public struct CaptureClock: Sendable {
    /// The longest gap replayed as it was (s): longer than any silence the ranging judges.
    public static let longestGap = 700.0
    /// Gaps shortened so, or clocks that went back.
    public private(set) var jumps = 0
    private var previous: Int64?
    private var elapsed = 0.0

    public init() {}

    /// Seconds since the first record for a record stamped `timestamp` (µs), the records given
    /// in the capture's order.
    public mutating func seconds(at timestamp: Int64) -> Double {
        if let previous {
            let gap = Double(timestamp &- previous) / 1_000_000
            if gap < 0 || gap > Self.longestGap { jumps += 1 }
            elapsed += min(max(gap, 0), Self.longestGap)
        }
        previous = timestamp
        return elapsed
    }
}

/// A fault in a capture file, naming where it is.
public enum BTSnoopError: Error, Equatable, Sendable, CustomStringConvertible {
    case notBTSnoop
    case unsupportedVersion(UInt32)
    case unsupportedDatalink(UInt32)
    case truncatedHeader
    /// Record `record` (1-based) is cut short or its lengths are impossible.
    case corruptRecord(record: Int, reason: String)

    public var description: String {
        switch self {
        case .notBTSnoop: return "not a btsnoop file (no 'btsnoop\\0' magic)"
        case let .unsupportedVersion(v): return "btsnoop version \(v) is not supported (only 1)"
        case let .unsupportedDatalink(d): return "btsnoop datalink \(d) is not supported (1001, 1002, 2001)"
        case .truncatedHeader: return "btsnoop header is cut short"
        case let .corruptRecord(record, reason): return "record \(record): \(reason)"
        }
    }
}

/// Reads a capture incrementally: feed it chunks as they are read from a file and take
/// records as they complete. Memory stays at one record plus one chunk.
public struct BTSnoopParser: Sendable {
    public static let magic: [UInt8] = Array("btsnoop".utf8) + [0]
    public static let headerLength = 16
    static let recordHeaderLength = 24
    /// Longer than any HCI packet (ACL max 65535 + header): anything larger is corruption.
    public static let maximumRecordLength = 65_535 + 5

    public private(set) var datalink: BTSnoopDatalink?
    private var queue = ByteQueue()
    private var recordsRead = 0
    private var failed: BTSnoopError?

    public init() {}

    public mutating func append<C: Collection>(_ chunk: C) where C.Element == UInt8 {
        queue.append(chunk)
    }

    /// The next complete record, nil when more bytes are needed. Once it has thrown,
    /// it throws the same error again: nothing after a corrupt record is trusted.
    public mutating func next() throws(BTSnoopError) -> BTSnoopRecord? {
        if let failed { throw failed }
        do throws(BTSnoopError) {
            return try nextRecord()
        } catch {
            failed = error
            throw error
        }
    }

    private mutating func nextRecord() throws(BTSnoopError) -> BTSnoopRecord? {
        let bytes = queue.pending
        let s = bytes.startIndex
        if datalink == nil {
            // Check the magic as soon as there are bytes, so a wrong file fails fast.
            let prefix = min(bytes.count, Self.magic.count)
            guard bytes.prefix(prefix).elementsEqual(Self.magic[0..<prefix]) else { throw .notBTSnoop }
            guard bytes.count >= Self.headerLength else { return nil }
            var r = ByteReader(bytes[(s + 8)..<(s + Self.headerLength)])
            let version = (try? r.u32be("version")) ?? 0
            let link = (try? r.u32be("datalink")) ?? 0
            guard version == 1 else { throw .unsupportedVersion(version) }
            guard let datalink = BTSnoopDatalink(rawValue: link) else { throw .unsupportedDatalink(link) }
            self.datalink = datalink
            queue.consume(Self.headerLength)
            return try nextRecord()
        }
        guard bytes.count >= Self.recordHeaderLength else { return nil }
        var r = ByteReader(bytes.prefix(Self.recordHeaderLength))
        let number = recordsRead + 1
        guard let original = try? r.u32be("original length"), let included = try? r.u32be("included length"),
            let flags = try? r.u32be("flags"), let drops = try? r.u32be("drops"),
            let timestamp = try? r.i64be("timestamp")
        else { throw .corruptRecord(record: number, reason: "unreadable record header") }
        guard included <= original else {
            throw .corruptRecord(record: number, reason: "included length \(included) exceeds original length \(original)")
        }
        guard included <= Self.maximumRecordLength else {
            throw .corruptRecord(record: number, reason: "included length \(included) is larger than any HCI packet")
        }
        let total = Self.recordHeaderLength + Int(included)
        guard bytes.count >= total else { return nil }
        let data = Array(bytes[(s + Self.recordHeaderLength)..<(s + total)])
        queue.consume(total)
        recordsRead = number
        return BTSnoopRecord(
            number: number, originalLength: original, flags: flags, cumulativeDrops: drops, timestamp: timestamp,
            data: data)
    }

    /// Call at end of input: bytes left over mean the last record (or the header) was cut.
    public func finish() throws(BTSnoopError) {
        if let failed { throw failed }
        let available = queue.count
        if datalink == nil { throw available == 0 ? .notBTSnoop : .truncatedHeader }
        if available > 0 {
            throw .corruptRecord(record: recordsRead + 1, reason: "cut short (\(available) bytes of a record at end of file)")
        }
    }

    /// Parses a whole capture held in memory: the records before any fault, and the fault.
    public static func parseAll(_ bytes: [UInt8]) -> (datalink: BTSnoopDatalink?, records: [BTSnoopRecord], error: BTSnoopError?) {
        var parser = BTSnoopParser()
        parser.append(bytes)
        var records: [BTSnoopRecord] = []
        do throws(BTSnoopError) {
            while let record = try parser.next() { records.append(record) }
            try parser.finish()
            return (parser.datalink, records, nil)
        } catch {
            return (parser.datalink, records, error)
        }
    }
}

/// Encodes btsnoop: the header once, then one record per packet. Pure: the caller writes the
/// bytes out as they come, so a long recording never grows memory.
public struct BTSnoopEncoder: Sendable {
    public let datalink: BTSnoopDatalink
    public init(datalink: BTSnoopDatalink = .h4) { self.datalink = datalink }

    public var header: [UInt8] {
        var out = BTSnoopParser.magic
        out.appendBE(UInt32(1))
        out.appendBE(datalink.rawValue)
        return out
    }

    /// A record for a packet. `received` is controller to host; `unixMicroseconds` the time.
    public func record(_ packet: HCIPacket, received: Bool, unixMicroseconds: Int64, adapterIndex: UInt16 = 0) -> [UInt8] {
        let payload: [UInt8]
        let flags: UInt32
        switch datalink {
        case .h4:
            payload = packet.h4Bytes
            flags = (received ? 1 : 0) | (packet.type == .command || packet.type == .event ? 2 : 0)
        case .unencapsulated:
            payload = packet.bytes
            flags = (received ? 1 : 0) | (packet.type == .command || packet.type == .event ? 2 : 0)
        case .linuxMonitor:
            payload = packet.bytes
            let opcode: UInt32
            switch packet.type {
            case .command: opcode = 2
            case .event: opcode = 3
            case .acl: opcode = received ? 5 : 4
            case .sco: opcode = received ? 7 : 6
            case .iso: opcode = received ? 19 : 18
            }
            flags = UInt32(adapterIndex) << 16 | opcode
        }
        var out: [UInt8] = []
        out.reserveCapacity(24 + payload.count)
        out.appendBE(UInt32(payload.count))
        out.appendBE(UInt32(payload.count))
        out.appendBE(flags)
        out.appendBE(UInt32(0))
        out.appendBE(unixMicroseconds &+ BTSnoopRecord.unixEpochOffset)
        out.append(contentsOf: payload)
        return out
    }
}
