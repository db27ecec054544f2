#if canImport(Glibc)
import Glibc
#endif
import Bluetooth
import POSIX

/// Reads a btsnoop capture from disk in chunks, handing out records as they complete.
public struct CaptureFileReader {
    private let fd: FileDescriptor
    private var parser = BTSnoopParser()
    private var atEnd = false
    public let path: String

    /// A directory is refused here (EISDIR), as no capture: its read failed later, as an I/O error.
    public init(path: String) throws(SystemError) {
        self.path = path
        let fd = try FileDescriptor.open(path, O_RDONLY)
        var info = stat()
        if fstat(fd.rawValue, &info) == 0, (info.st_mode & mode_t(S_IFMT)) == mode_t(S_IFDIR) {
            fd.close()
            throw SystemError("open \(path)", errno: EISDIR)
        }
        self.fd = fd
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
///
/// The file is created next to its final name under an unpredictable hidden name (an
/// `AtomicFile.Staged`: a directory, `/dev/null`, a FIFO or a symlink at `path` is refused
/// here, in `init`, with EISDIR or EEXIST) and renamed into place on close, so a crash
/// never leaves a half-written file under the name the user asked for.
///
/// Write errors (disk full, EIO) are news at once: the first failing `write` throws, sets
/// `failure` and calls `onFailure`; the file is cut back to the last whole record and
/// nothing more is written to it, even if space returns (every later `write` throws the
/// same failure). `close` then still completes the recording, ending at that record.
public final class CaptureFileWriter {
    private let staged: AtomicFile.Staged
    private let encoder: BTSnoopEncoder
    public var path: String { staged.path }
    private var closed = false
    /// Bytes of the header and the whole records written so far.
    public private(set) var bytesWritten: Int64 = 0
    /// The first write failure, nil while every record has been written.
    public private(set) var failure: SystemError?
    /// Called once, inside the `write` that fails first, with its failure.
    public var onFailure: ((SystemError) -> Void)?

    public init(path: String, datalink: BTSnoopDatalink = .h4) throws(SystemError) {
        encoder = BTSnoopEncoder(datalink: datalink)
        staged = try AtomicFile.Staged(for: path)
        do {
            try append(encoder.header)
        } catch {
            staged.discard()
            throw error
        }
    }

    public func write(_ packet: HCIPacket, received: Bool, unixMicroseconds: Int64) throws(SystemError) {
        if let failure { throw failure }
        do {
            try append(encoder.record(packet, received: received, unixMicroseconds: unixMicroseconds))
        } catch {
            failure = error
            // A torn record would make the rest of the file unreadable: cut it off.
            _ = try? retryingOnInterrupt("ftruncate") { ftruncate(staged.descriptor.rawValue, off_t(bytesWritten)) }
            onFailure?(error)
            throw error
        }
    }

    private func append(_ bytes: [UInt8]) throws(SystemError) {
        try staged.write(bytes)
        bytesWritten += Int64(bytes.count)
    }

    /// Flushes to disk and gives the file its name (after a write failure too: the file then
    /// ends at the last whole record). A failed sync, close or rename removes the temporary
    /// file and throws: nothing half-written is left under any name.
    public func close() throws(SystemError) {
        guard !closed else { return }
        closed = true
        try staged.commit()
    }

    /// A writer dropped without `close` (an error path) leaves nothing behind.
    deinit {
        if !closed { staged.discard() }
    }
}
