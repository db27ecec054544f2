#if canImport(Glibc)
import Glibc
#endif
import Bluetooth

/// Reads a btsnoop capture from disk in chunks, handing out records as they complete.
public struct CaptureFileReader {
    private let fd: FileDescriptor
    private var parser = BTSnoopParser()
    private var atEnd = false
    public let path: String

    public init(path: String) throws(SystemError) {
        self.path = path
        fd = try FileDescriptor.open(path, O_RDONLY)
    }

    public var datalink: BTSnoopDatalink? { parser.datalink }

    /// The next record, nil at a clean end of file. Throws a file error or the capture's fault.
    public mutating func next() throws -> BTSnoopRecord? {
        while true {
            if let record = try parser.next() { return record }
            if atEnd {
                try parser.finish()
                return nil
            }
            let chunk = try fd.read(upTo: 1 << 16)
            if chunk.isEmpty { atEnd = true } else { parser.append(chunk) }
        }
    }

    /// Read only: a close error would say nothing about the records already read.
    public func close() { fd.close() }
}

/// Writes a btsnoop capture as it happens: header first, each record straight to the file.
/// The file is created next to its final name and renamed into place on close, so a crash
/// never leaves a half-written file under the name the user asked for.
public final class CaptureFileWriter {
    private let fd: FileDescriptor
    private let encoder: BTSnoopEncoder
    private let temporaryPath: String
    public let path: String
    private var closed = false

    public init(path: String, datalink: BTSnoopDatalink = .h4) throws(SystemError) {
        self.path = path
        self.temporaryPath = path + ".partial"
        encoder = BTSnoopEncoder(datalink: datalink)
        fd = try FileDescriptor.open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC)
        try fd.writeAll(encoder.header)
    }

    public func write(_ packet: HCIPacket, received: Bool, unixMicroseconds: Int64) throws(SystemError) {
        try fd.writeAll(encoder.record(packet, received: received, unixMicroseconds: unixMicroseconds))
    }

    /// Flushes to disk and gives the file its name.
    public func close() throws(SystemError) {
        guard !closed else { return }
        closed = true
        do {
            try fd.sync()
        } catch {
            fd.close()
            throw error
        }
        // A close that fails after writing may have lost data: keep the partial name then.
        try fd.closeChecked()
        _ = try retryingOnInterrupt("rename \(path)") { rename(temporaryPath, path) }
    }

    deinit {
        if !closed { fd.close() }
    }
}
