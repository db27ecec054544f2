import POSIX

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
        self.reason = reason ?? SystemError.message(errno: errno)
    }

    /// The failure of `action` on `path`: errno, and the call's own words for a refusal
    /// (`SystemError.explanation`, "is a FIFO, ..."), which after "cannot write:" read "it
    /// is a FIFO, ...".
    public init(path: String, action: String = "write", _ error: SystemError) {
        self.init(path: path, action: action, errno: error.errno, reason: error.explanation.map { "it " + $0 })
    }

    /// "q.wav: cannot write: No such file or directory"
    public var description: String { "\(path): cannot \(action): \(reason)" }
}

/// Audio's names over the one safe writer, `POSIX.AtomicFile` (see it for the rules:
/// a hidden random temporary beside the target, O_CREAT | O_EXCL | O_NOFOLLOW, fsync,
/// checked close, renamed only over a regular file or nothing), with errors that name the
/// path the user gave (`FileError`); and a safe whole-file read.
public enum SafeFile {
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(FileError) {
        do {
            try AtomicFile.write(bytes, to: path, mode: mode)
        } catch {
            throw FileError(path: path, error)
        }
    }

    /// A file another writer fills (ALSA's `file:` plugin, which opens a path itself),
    /// then put in place as `write` does: `temporary` is created first, exclusively and
    /// without following links, under an unpredictable name in the target's directory;
    /// `commit()` checks it is still our regular file, fsyncs it and renames it over `path`
    /// (only a regular file or nothing); `discard()` removes it.
    public struct Staged: Sendable {
        private let staged: AtomicFile.StagedForAnotherWriter
        public var path: String { staged.path }
        public var temporary: String { staged.temporary }

        public init(for path: String, mode: mode_t = 0o644) throws(FileError) {
            do {
                staged = try AtomicFile.StagedForAnotherWriter(for: path, mode: mode)
            } catch {
                throw FileError(path: path, error)
            }
        }

        public func commit() throws(FileError) {
            do {
                try staged.commit()
            } catch {
                throw FileError(path: path, error)
            }
        }

        public func discard() { staged.discard() }

        /// `commit` for a WAV that ALSA's `file:` plugin wrote, unless the disk it is on is
        /// full once it is written. The plugin ignores its own write errors and writes a
        /// header for what it managed to write, so a full disk left a WAV cut short that was
        /// put in place as whole; it is removed instead (ENOSPC). (A WAV that left less than
        /// `fullDisk` bytes free is taken for one cut short too: the disk is full anyway.)
        public func commitWAV() throws(FileError) {
            var info = statvfs()
            if statvfs(temporary, &info) == 0 {
                let blocks = geteuid() == 0 ? UInt64(info.f_bfree) : UInt64(info.f_bavail)
                if blocks * UInt64(info.f_frsize) < SafeFile.fullDisk {
                    discard()
                    throw FileError(path: path, errno: ENOSPC, reason: "the disk is full: the sound was cut short")
                }
            }
            try commit()
        }
    }

    /// Free bytes under which a disk is full (`Staged.commitWAV`).
    public static let fullDisk: UInt64 = 64 << 10

    /// A regular file of at most `limit` bytes opened for reading, and its size: O_NONBLOCK so
    /// a FIFO never blocks, checked by fstat; `followSymlinks: false` adds O_NOFOLLOW. The
    /// caller closes it.
    public static func openRegular(_ path: String, limit: Int, followSymlinks: Bool = true) throws(FileError) -> (FileDescriptor, size: Int) {
        func fail(_ code: Int32, _ reason: String? = nil) -> FileError {
            FileError(path: path, action: "read", errno: code, reason: reason)
        }
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(path, O_RDONLY | O_NONBLOCK | (followSymlinks ? 0 : O_NOFOLLOW))
        } catch {
            throw fail(error.errno)
        }
        var info = stat()
        do {
            _ = try retryingOnInterrupt("fstat") { fstat(fd.rawValue, &info) }
        } catch {
            fd.close()
            throw fail(error.errno)
        }
        let kind = info.st_mode & mode_t(S_IFMT)
        let problem: (Int32, String?)? = kind == mode_t(S_IFDIR) ? (EISDIR, nil)
            : kind != mode_t(S_IFREG) ? (EINVAL, "not a regular file")
            : Int(info.st_size) > limit ? (EFBIG, "larger than \(limit) bytes") : nil
        if let problem {
            fd.close()
            throw fail(problem.0, problem.1)
        }
        return (fd, Int(info.st_size))
    }

    /// Reads a whole regular file (at most `limit` bytes). Opened O_NONBLOCK so a FIFO never
    /// blocks, checked by fstat to be a regular file; `followSymlinks: false` adds O_NOFOLLOW
    /// (for files in our own directories, where a symlink can only have been planted).
    public static func read(_ path: String, limit: Int = 64 << 20, followSymlinks: Bool = true) throws(FileError) -> [UInt8] {
        func fail(_ code: Int32, _ reason: String? = nil) -> FileError {
            FileError(path: path, action: "read", errno: code, reason: reason)
        }
        let (fd, size) = try openRegular(path, limit: limit, followSymlinks: followSymlinks)
        defer { fd.close() }  // read only: a close error says nothing about what was read
        var bytes = [UInt8](repeating: 0, count: size + 1)
        var count = 0
        while true {
            if count == bytes.count {
                guard count <= limit else { throw fail(EFBIG, "larger than \(limit) bytes") }
                bytes.append(contentsOf: [UInt8](repeating: 0, count: max(4096, count)))
            }
            let n: Int
            do {
                n = try retryingOnInterrupt("read") {
                    bytes.withUnsafeMutableBytes { raw in Glibc.read(fd.rawValue, raw.baseAddress.map { $0 + count }, raw.count - count) }
                }
            } catch {
                throw fail(error.errno)
            }
            if n == 0 { break }
            count += n
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }
}
