#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: which one, and errno.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    public var call: String
    public var errno: Int32

    public init(_ call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// What errno says, without the call ("No such file or directory").
    public var reason: String {
        guard let message = strerror(errno) else { return "errno \(errno)" }
        return String(cString: message)
    }

    public var description: String { "\(call): \(reason)" }
}

/// Runs a system call, retrying on EINTR: the one funnel every call here goes through.
@inline(__always)
func retryingOnInterrupt<T: FixedWidthInteger>(_ name: String, _ body: () -> T) throws(SystemError) -> T {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemError(name, errno: code)
    }
}

/// A thin typed wrapper over a file descriptor (close it yourself, once).
public struct FileDescriptor: Hashable, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws(SystemError) -> FileDescriptor {
        let fd = try retryingOnInterrupt("open \(path)") { Glibc.open(path, flags | O_CLOEXEC, mode) }
        return FileDescriptor(rawValue: fd)
    }

    /// Reads up to `count` bytes; an empty result means end of file.
    public func read(upTo count: Int) throws(SystemError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let n = try retryingOnInterrupt("read") {
            buffer.withUnsafeMutableBytes { raw in Glibc.read(rawValue, raw.baseAddress, raw.count) }
        }
        buffer.removeLast(count - n)
        return buffer
    }

    /// Writes all of `bytes` (short writes are continued).
    public func writeAll<C: Collection>(_ bytes: C) throws(SystemError) where C.Element == UInt8 {
        let array = Array(bytes)
        var offset = 0
        while offset < array.count {
            let n = try retryingOnInterrupt("write") {
                array.withUnsafeBytes { raw in Glibc.write(rawValue, raw.baseAddress.map { $0 + offset }, raw.count - offset) }
            }
            offset += n
        }
    }

    public func sync() throws(SystemError) {
        _ = try retryingOnInterrupt("fsync") { Glibc.fsync(rawValue) }
    }

    public func close() {
        _ = Glibc.close(rawValue)
    }
}

/// Writes a whole file or nothing: into `PATH.partial`, synced, then renamed over `PATH`.
public enum AtomicFile {
    public static func write(_ bytes: [UInt8], to path: String) throws(SystemError) {
        let temporary = path + ".partial"
        let fd = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_TRUNC)
        do {
            try fd.writeAll(bytes)
            try fd.sync()
        } catch {
            fd.close()
            unlink(temporary)
            throw error
        }
        fd.close()
        do {
            _ = try retryingOnInterrupt("rename \(path)") { rename(temporary, path) }
        } catch {
            unlink(temporary)
            throw error
        }
    }
}
