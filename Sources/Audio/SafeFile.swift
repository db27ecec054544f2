#if canImport(Glibc)
import Glibc
#endif

/// A file we could not write or read: the path the user named, what failed, and errno.
public struct FileError: Error, Equatable, Sendable, CustomStringConvertible {
    public let path: String
    /// "write" or "read".
    public let action: String
    public let errno: Int32
    /// Our own words for a refusal, else errno's text ("No such file or directory").
    public let reason: String

    public init(path: String, action: String = "write", errno: Int32, reason: String? = nil) {
        self.path = path
        self.action = action
        self.errno = errno
        self.reason = reason ?? (strerror(errno).map { String(cString: $0) } ?? "errno \(errno)")
    }

    /// "q.wav: cannot write: No such file or directory"
    public var description: String { "\(path): cannot \(action): \(reason)" }
}

/// errno of a failed system call.
package struct Errno: Error, Equatable, Sendable {
    package let code: Int32
    package init(_ code: Int32) { self.code = code }
}

/// Runs a system call that fails with a negative result and errno, retrying on EINTR (the
/// Audio and Voice modules' funnel; Radio has its own in FileDescriptor.swift).
@inline(__always)
package func retryingOnInterrupt<T: FixedWidthInteger>(_ body: () -> T) throws(Errno) -> T {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = errno
        if code != EINTR { throw Errno(code) }
    }
}

/// Writes whole files safely: into `DIR/.NAME.<64 random bits>.tmp` in the target's own
/// directory, opened `O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC` (never a planted file or
/// symlink), written, fsynced, closed with its error checked, and renamed over `path` only
/// when `path` is a regular file or nothing: a directory, device, FIFO, socket or symlink
/// is refused. On any failure the temporary is removed and `path` is as it was.
/// (The same rules as Radio's `AtomicFile`, which Audio cannot depend on.)
public enum SafeFile {
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(FileError) {
        let (fd, temporary) = try createTemporary(for: path, mode: mode)
        var closed = false
        do throws(Errno) {
            var offset = 0
            while offset < bytes.count {
                offset += try retryingOnInterrupt {
                    bytes.withUnsafeBytes { raw in Glibc.write(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset) }
                }
            }
            _ = try retryingOnInterrupt { fsync(fd) }
            closed = true
            // Never retried: Linux has released the descriptor even when close fails.
            if close(fd) != 0 { throw Errno(errno) }
        } catch {
            if !closed { _ = close(fd) }
            _ = try? retryingOnInterrupt { unlink(temporary) }
            throw FileError(path: path, errno: error.code)
        }
        try putInPlace(temporary, at: path)
    }

    /// A file another writer fills (ALSA's `file:` plugin, which opens a path itself),
    /// then put in place as `write` does: `temporary` is created first, exclusively and
    /// without following links, under an unpredictable name in the target's directory;
    /// `commit()` checks it is still our regular file, fsyncs it and renames it over `path`
    /// (only a regular file or nothing); `discard()` removes it.
    public struct Staged: Sendable {
        public let path: String
        public let temporary: String

        public init(for path: String, mode: mode_t = 0o644) throws(FileError) {
            let (fd, temporary) = try SafeFile.createTemporary(for: path, mode: mode)
            _ = close(fd)
            self.path = path
            self.temporary = temporary
        }

        public func commit() throws(FileError) {
            do throws(Errno) {
                let fd = try retryingOnInterrupt { open(temporary, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) }
                var info = stat()
                let statted = fstat(fd, &info) == 0
                let synced = fsync(fd) == 0 ? 0 : errno
                if close(fd) != 0 || synced != 0 { throw Errno(synced != 0 ? synced : errno) }
                guard statted, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else { throw Errno(EINVAL) }
            } catch {
                discard()
                throw FileError(path: path, errno: error.code)
            }
            try SafeFile.putInPlace(temporary, at: path)
        }

        public func discard() {
            _ = try? retryingOnInterrupt { unlink(temporary) }
        }
    }

    /// `DIR/.NAME.<64 random bits>.tmp` beside `path`, created O_EXCL | O_NOFOLLOW; open for writing.
    static func createTemporary(for path: String, mode: mode_t) throws(FileError) -> (fd: Int32, temporary: String) {
        try checkReplaceable(path)
        let directory = directory(of: path)
        let base = path.split(separator: "/").last.map(String.init) ?? "file"
        var attempts = 0
        while true {
            let temporary = "\(directory)/.\(base).\(String(UInt64.random(in: .min ... .max), radix: 16)).tmp"
            do {
                let fd = try retryingOnInterrupt { open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode) }
                return (fd, temporary)
            } catch {
                attempts += 1
                if error.code != EEXIST || attempts >= 8 { throw FileError(path: path, errno: error.code) }
            }
        }
    }

    /// Renames the finished `temporary` over `path` (a regular file or nothing) and fsyncs
    /// the directory; on failure the temporary is removed.
    static func putInPlace(_ temporary: String, at path: String) throws(FileError) {
        do throws(FileError) {
            try checkReplaceable(path)
            do {
                _ = try retryingOnInterrupt { rename(temporary, path) }
            } catch {
                throw FileError(path: path, errno: error.code)
            }
        } catch {
            _ = try? retryingOnInterrupt { unlink(temporary) }
            throw error
        }
        if let directoryFD = try? retryingOnInterrupt({ open(directory(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC) }) {
            _ = try? retryingOnInterrupt { fsync(directoryFD) }
            _ = close(directoryFD)
        }
    }

    static func directory(of path: String) -> String {
        let slash = path.lastIndex(of: "/")
        return slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    }

    /// Refuses a `path` that exists and is not a regular file.
    static func checkReplaceable(_ path: String) throws(FileError) {
        guard !path.isEmpty else { throw FileError(path: path, errno: ENOENT) }
        var info = stat()
        do {
            _ = try retryingOnInterrupt { lstat(path, &info) }
        } catch {
            if error.code == ENOENT { return }
            throw FileError(path: path, errno: error.code)
        }
        let kind = info.st_mode & mode_t(S_IFMT)
        if kind == mode_t(S_IFREG) { return }
        if kind == mode_t(S_IFDIR) { throw FileError(path: path, errno: EISDIR) }
        let what: String
        switch kind {
        case mode_t(S_IFLNK): what = "a symbolic link"
        case mode_t(S_IFCHR): what = "a character device"
        case mode_t(S_IFBLK): what = "a block device"
        case mode_t(S_IFIFO): what = "a FIFO"
        case mode_t(S_IFSOCK): what = "a socket"
        default: what = "not a regular file"
        }
        throw FileError(path: path, errno: EEXIST, reason: "it is \(what), not a regular file: refusing to replace it")
    }

    /// Reads a whole regular file (at most `limit` bytes). Opened O_NONBLOCK so a FIFO never
    /// blocks, checked by fstat to be a regular file; `followSymlinks: false` adds O_NOFOLLOW
    /// (for files in our own directories, where a symlink can only have been planted).
    public static func read(_ path: String, limit: Int = 64 << 20, followSymlinks: Bool = true) throws(FileError) -> [UInt8] {
        func fail(_ code: Int32, _ reason: String? = nil) -> FileError {
            FileError(path: path, action: "read", errno: code, reason: reason)
        }
        let flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | (followSymlinks ? 0 : O_NOFOLLOW)
        let fd: Int32
        do {
            fd = try retryingOnInterrupt { open(path, flags) }
        } catch {
            throw fail(error.code)
        }
        defer { _ = close(fd) }  // read only: a close error says nothing about what was read
        var info = stat()
        do {
            _ = try retryingOnInterrupt { fstat(fd, &info) }
        } catch {
            throw fail(error.code)
        }
        let kind = info.st_mode & mode_t(S_IFMT)
        if kind == mode_t(S_IFDIR) { throw fail(EISDIR) }
        guard kind == mode_t(S_IFREG) else { throw fail(EINVAL, "not a regular file") }
        guard Int(info.st_size) <= limit else { throw fail(EFBIG, "larger than \(limit) bytes") }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var count = 0
        while true {
            if count == bytes.count {
                guard count <= limit else { throw fail(EFBIG, "larger than \(limit) bytes") }
                bytes.append(contentsOf: [UInt8](repeating: 0, count: max(4096, count)))
            }
            let n: Int
            do {
                n = try retryingOnInterrupt {
                    bytes.withUnsafeMutableBytes { raw in Glibc.read(fd, raw.baseAddress.map { $0 + count }, raw.count - count) }
                }
            } catch {
                throw fail(error.code)
            }
            if n == 0 { break }
            count += n
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }
}
