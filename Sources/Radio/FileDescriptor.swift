#if canImport(Glibc)
import Glibc
#endif
import CLinux

/// A failed system call: which one, and errno.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    public var call: String
    public var errno: Int32
    /// Our own words for a refusal errno alone would not explain ("is a character device, not
    /// a regular file: not replaced"); nil: errno's text.
    public var explanation: String?

    public init(_ call: String, errno: Int32, explanation: String? = nil) {
        self.call = call
        self.errno = errno
        self.explanation = explanation
    }

    /// Why, without the call: the explanation, else what errno says ("No such file or directory").
    public var reason: String {
        if let explanation { return explanation }
        guard let message = strerror(errno) else { return "errno \(errno)" }
        return String(cString: message)
    }

    public var description: String { "\(call): \(reason)" }
}

/// Runs a system call that reports failure as a negative result and errno (an `int`, an
/// `ssize_t`), retrying on EINTR: the one funnel for the calls of FileDescriptor and the
/// kernel, H4 and capture code. (EventLoop and SimulatedController still call directly.)
@inline(__always)
func retryingOnInterrupt<T: FixedWidthInteger>(_ name: @autoclosure () -> String, _ body: () -> T) throws(SystemError) -> T {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemError(name(), errno: code)
    }
}

/// As `retryingOnInterrupt`, but "would block" (EAGAIN) on a non-blocking fd is nil, not an error.
@inline(__always)
func retryingOnInterruptUnlessWouldBlock<T: FixedWidthInteger>(
    _ name: @autoclosure () -> String, _ body: () -> T
) throws(SystemError) -> T? {
    do {
        return try retryingOnInterrupt(name(), body)
    } catch {
        if error.errno == EAGAIN || error.errno == EWOULDBLOCK { return nil }
        throw error
    }
}

/// A thin typed wrapper over a file descriptor (close it yourself, once).
public struct FileDescriptor: Hashable, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `open(2)`, always with O_CLOEXEC.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws(SystemError) -> FileDescriptor {
        let fd = try retryingOnInterrupt("open \(path)") { Glibc.open(path, flags | O_CLOEXEC, mode) }
        return FileDescriptor(rawValue: fd)
    }

    /// `socket(2)`, always with SOCK_CLOEXEC.
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

    /// Writes all of `bytes` (short writes are continued). On a non-blocking fd whose buffer
    /// is full it waits for room (POLLOUT), at most `timeoutMilliseconds` in all, and then
    /// fails with EAGAIN rather than spin.
    public func writeAll<C: Collection>(_ bytes: C, timeoutMilliseconds: Int = 1000) throws(SystemError) where C.Element == UInt8 {
        let array = Array(bytes)
        let deadline = ContinuousClock.now + .milliseconds(timeoutMilliseconds)
        var offset = 0
        while offset < array.count {
            let written = try retryingOnInterruptUnlessWouldBlock("write") {
                array.withUnsafeBytes { raw in Glibc.write(rawValue, raw.baseAddress.map { $0 + offset }, raw.count - offset) }
            }
            if let written {
                offset += written
            } else if try !waitUntilWritable(before: deadline) {
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

    public func sync() throws(SystemError) {
        _ = try retryingOnInterrupt("fsync") { Glibc.fsync(rawValue) }
    }

    /// Closes, reporting an error: after writing, a failed close can be the first news of a
    /// lost write. Never retried on EINTR: Linux has released the number by then, and a
    /// second close could close a descriptor another thread has just been given.
    public func closeChecked() throws(SystemError) {
        if Glibc.close(rawValue) != 0 { throw SystemError("close", errno: errno) }
    }

    /// Closes, ignoring an error (for descriptors only read from, sockets, pollers).
    public func close() {
        _ = Glibc.close(rawValue)
    }
}

/// Writes a whole file or nothing, safely (see `OutputFile`): a hidden temporary with an
/// unpredictable name in the target's directory, synced and closed with its errors checked,
/// then renamed over `path` only when that is a regular file or nothing.
public enum AtomicFile {
    public static func write(_ bytes: [UInt8], to path: String) throws(SystemError) {
        let (fd, temporary) = try OutputFile.createTemporary(for: path)
        do {
            try fd.writeAll(bytes)
            try fd.sync()
        } catch {
            fd.close()
            OutputFile.remove(temporary)
            throw error
        }
        do {
            try fd.closeChecked()
            try OutputFile.install(temporary, as: path)
        } catch {
            OutputFile.remove(temporary)
            throw error
        }
    }
}

/// How every file we write gets its name. Nothing is created under a predictable name:
/// the data goes to `DIR/.NAME.<64 random bits>.tmp` in the target's own directory, opened
/// `O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC` (a planted file or symlink there is never
/// opened, and the name cannot be guessed to plant one), and is renamed over the target
/// only when the target is a regular file or nothing: a directory, device (`/dev/null`),
/// FIFO, socket or symlink is refused, before anything is written and again at the rename.
enum OutputFile {
    /// Refuses a target that exists and is not a regular file: EISDIR for a directory,
    /// EEXIST with an explanation for the rest.
    static func checkReplaceable(_ path: String) throws(SystemError) {
        guard !path.isEmpty else { throw SystemError("open \"\"", errno: ENOENT) }
        var info = stat()
        do {
            _ = try retryingOnInterrupt("lstat \(path)") { lstat(path, &info) }
        } catch {
            if error.errno == ENOENT { return }
            throw error
        }
        let kind = info.st_mode & mode_t(S_IFMT)
        if kind == mode_t(S_IFREG) { return }
        if kind == mode_t(S_IFDIR) { throw SystemError("open \(path)", errno: EISDIR) }
        let what: String
        switch kind {
        case mode_t(S_IFLNK): what = "a symbolic link"
        case mode_t(S_IFCHR): what = "a character device"
        case mode_t(S_IFBLK): what = "a block device"
        case mode_t(S_IFIFO): what = "a FIFO"
        case mode_t(S_IFSOCK): what = "a socket"
        default: what = "not a regular file"
        }
        throw SystemError(
            "open \(path)", errno: EEXIST, explanation: "is \(what), not a regular file: refusing to replace it")
    }

    /// The directory part of `path` ("." for a bare name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// A new, empty file next to `path` under an unpredictable hidden name, and that name.
    /// Checks `path` first. Errors name `path`, not the temporary.
    static func createTemporary(for path: String, mode: mode_t = 0o644) throws(SystemError) -> (FileDescriptor, String) {
        try checkReplaceable(path)
        let directory = directory(of: path)
        let base = path.split(separator: "/").last.map(String.init) ?? "file"
        var attempts = 0
        while true {
            let random = String(UInt64.random(in: .min ... .max), radix: 16)
            let temporary = "\(directory)/.\(base).\(random).tmp"
            do {
                let fd = try retryingOnInterrupt("create \(path)") {
                    Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
                }
                return (FileDescriptor(rawValue: fd), temporary)
            } catch {
                attempts += 1
                if error.errno != EEXIST || attempts >= 8 { throw error }
            }
        }
    }

    /// Renames the finished temporary over `path` (checked again: it may have changed since
    /// it was opened), then syncs the directory so the name survives a power cut.
    static func install(_ temporary: String, as path: String) throws(SystemError) {
        try checkReplaceable(path)
        _ = try retryingOnInterrupt("rename \(path)") { rename(temporary, path) }
        if let directory = try? retryingOnInterrupt("open \(path)", {
            Glibc.open(directory(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }) {
            _ = try? retryingOnInterrupt("fsync") { fsync(directory) }
            _ = Glibc.close(directory)
        }
    }

    /// Removes a temporary that will not be installed (its error is not news).
    static func remove(_ temporary: String) {
        _ = try? retryingOnInterrupt("unlink") { unlink(temporary) }
    }
}
