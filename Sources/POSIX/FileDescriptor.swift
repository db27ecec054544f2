#if canImport(Glibc)
import Glibc
#endif

/// A thin typed wrapper over a file descriptor (close it yourself, once). Every call but
/// the closes goes through `retryingOnInterrupt`; a close is never retried.
public struct FileDescriptor: Hashable, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Standard output (fd 1).
    public static let standardOutput = FileDescriptor(rawValue: 1)

    /// `open(2)`, always with O_CLOEXEC. The error names `path`.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws(SystemError) -> FileDescriptor {
        let fd = try retryingOnInterrupt("open \(path)") { Glibc.open(path, flags | O_CLOEXEC, mode) }
        return FileDescriptor(rawValue: fd)
    }

    /// `socket(2)`, always with SOCK_CLOEXEC; `name` (the domain's) goes in the error.
    public static func socket(_ domain: Int32, _ type: Int32, _ protocol: Int32, name: String) throws(SystemError) -> FileDescriptor {
        let fd = try retryingOnInterrupt("socket(\(name))") { Glibc.socket(domain, type | Int32(SOCK_CLOEXEC.rawValue), `protocol`) }
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

    /// One `read(2)` into the start of `buffer`: the byte count (0: end of file), or nil
    /// when a non-blocking fd has nothing.
    public func read(into buffer: inout [UInt8]) throws(SystemError) -> Int? {
        try retryingOnInterruptUnlessWouldBlock("read") {
            buffer.withUnsafeMutableBytes { raw in Glibc.read(rawValue, raw.baseAddress, raw.count) }
        }
    }

    /// Writes all of `bytes`: short writes are continued, EINTR is retried. On a
    /// non-blocking fd whose buffer is full it waits for room in `poll` (POLLOUT, no
    /// spinning); when no byte could be written for `timeoutMilliseconds` (each wait
    /// starts afresh after progress) it fails with EAGAIN. A blocking fd never waits here:
    /// `write` itself blocks.
    public func writeAll<C: Collection>(_ bytes: C, timeoutMilliseconds: Int = 1000) throws(SystemError) where C.Element == UInt8 {
        let array = Array(bytes)
        var offset = 0
        while offset < array.count {
            let written = try retryingOnInterruptUnlessWouldBlock("write") {
                array.withUnsafeBytes { raw in Glibc.write(rawValue, raw.baseAddress.map { $0 + offset }, raw.count - offset) }
            }
            if let written {
                offset += written
            } else if try !waitUntilWritable(before: ContinuousClock.now + .milliseconds(timeoutMilliseconds)) {
                throw SystemError("write: no room for \(timeoutMilliseconds) ms", errno: EAGAIN)
            }
        }
    }

    /// Polls for POLLOUT until `deadline`; false when it passed first. An error or hang-up
    /// counts as writable: the next write reports it.
    private func waitUntilWritable(before deadline: ContinuousClock.Instant) throws(SystemError) -> Bool {
        var entry = pollfd(fd: rawValue, events: Int16(POLLOUT), revents: 0)
        let ready = try retryingOnInterrupt("poll") {
            let left = ContinuousClock.now.duration(to: deadline)
            let milliseconds = max(0, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
            return Glibc.poll(&entry, 1, Int32(clamping: milliseconds))
        }
        return ready > 0
    }

    /// Sets O_NONBLOCK.
    public func setNonBlocking() throws(SystemError) {
        let flags = try retryingOnInterrupt("fcntl F_GETFL") { fcntl(rawValue, F_GETFL) }
        _ = try retryingOnInterrupt("fcntl F_SETFL") { fcntl(rawValue, F_SETFL, flags | O_NONBLOCK) }
    }

    /// `fsync(2)`.
    public func sync() throws(SystemError) {
        _ = try retryingOnInterrupt("fsync") { Glibc.fsync(rawValue) }
    }

    /// fsyncs, then closes with the error checked: the end of a file that must be on disk.
    /// Closed whichever fails.
    public func syncAndClose() throws(SystemError) {
        do {
            try sync()
        } catch {
            close()
            throw error
        }
        try closeChecked()
    }

    /// Closes, reporting an error: after writing, a failed close can be the first news of a
    /// lost write. Never retried on EINTR: Linux has released the number by then, and a
    /// second close could close a descriptor another thread has just been given.
    public func closeChecked() throws(SystemError) {
        if Glibc.close(rawValue) != 0 { throw SystemError("close", errno: errno) }
    }

    /// Closes, ignoring an error (for descriptors only read from, sockets, pollers, and
    /// files being abandoned anyway).
    public func close() {
        _ = Glibc.close(rawValue)
    }
}
