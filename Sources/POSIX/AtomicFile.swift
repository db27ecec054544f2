#if canImport(Glibc)
import Glibc
#endif

/// Writes whole files or nothing, safely: the one writer of the package.
///
/// Nothing is created under a predictable name: the data goes to
/// `DIR/.NAME.<64 random bits>.tmp` in the target's own directory, opened
/// `O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC` (a planted file or symlink there is never
/// opened, and the name cannot be guessed to plant one), fsynced, closed with its error
/// checked, and renamed over the target only when the target is a regular file or nothing:
/// a directory (EISDIR), device (`/dev/null`), FIFO, socket or symlink (EEXIST, with an
/// `explanation`) is refused, before anything is written and again at the rename. Then the
/// directory is fsynced, so the name survives a power cut. On any failure the temporary is
/// removed and the target is as it was. No error names the temporary: those about a name
/// name the target ("create /srv/reward.svg", "rename /srv/reward.svg").
public enum AtomicFile {
    /// `bytes` as the whole of `path`.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(SystemError) {
        let staged = try Staged(for: path, mode: mode)
        do {
            try staged.write(bytes)
        } catch {
            staged.discard()
            throw error
        }
        try staged.commit()
    }

    /// `bytes` as the whole of `path`, which keeps what the file it replaces had: its
    /// permission bits exactly (the writer's umask does not cut them: the service's 0077 made
    /// a parent's 0644 settings 0600 on the first save from the page, which a later
    /// `sudo pirate-hunter pair` copied to a root-owned file the service could not read) and,
    /// written by root, its owner and group. A new file gets `newFileMode` under the umask.
    public static func replace(_ bytes: [UInt8], at path: String, newFileMode: mode_t = 0o644) throws(SystemError) {
        var info = stat()
        let existing = lstat(path, &info) == 0 && info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) ? info : nil
        let staged = try Staged(for: path, mode: existing.map { $0.st_mode & 0o7777 } ?? newFileMode)
        do throws(SystemError) {
            if let existing {
                if geteuid() == 0, fchown(staged.descriptor.rawValue, existing.st_uid, existing.st_gid) != 0 {
                    throw SystemError("chown \(path)", errno: errno)
                }
                // After the owner: chown clears set-id bits.
                guard fchmod(staged.descriptor.rawValue, existing.st_mode & 0o7777) == 0 else {
                    throw SystemError("chmod \(path)", errno: errno)
                }
            }
            try staged.write(bytes)
        } catch {
            staged.discard()
            throw error
        }
        try staged.commit()
    }

    /// A file written a piece at a time through `descriptor` under its hidden temporary
    /// name, then given `path` by `commit` or removed by `discard`: one of the two, once.
    public struct Staged: Sendable {
        /// The name the file gets on `commit`.
        public let path: String
        /// The hidden temporary beside `path`.
        public let temporary: String
        /// The temporary, open for writing (O_WRONLY); `commit` and `discard` close it.
        public let descriptor: FileDescriptor

        /// Checks `path` and creates the temporary, open for writing.
        public init(for path: String, mode: mode_t = 0o644) throws(SystemError) {
            self.path = path
            (descriptor, temporary) = try createTemporary(for: path, mode: mode)
        }

        /// Appends all of `bytes` to the temporary.
        public func write(_ bytes: [UInt8]) throws(SystemError) {
            try descriptor.writeAll(bytes)
        }

        /// fsyncs and closes the temporary (errors checked), then puts it in place (see
        /// `AtomicFile`). On failure the temporary is removed.
        public func commit() throws(SystemError) {
            try putInPlace(temporary, as: path) { () throws(SystemError) in try descriptor.syncAndClose() }
        }

        /// Closes and removes the temporary; `path` is left as it was.
        public func discard() {
            descriptor.close()
            removeTemporary(temporary)
        }
    }

    /// A temporary that another writer opens by its name and fills (ALSA's `file:` plugin,
    /// which opens a path itself), created as for `Staged` and closed at once; given `path`
    /// by `commit` or removed by `discard`: one of the two, once.
    public struct StagedForAnotherWriter: Sendable {
        /// The name the file gets on `commit`.
        public let path: String
        /// The hidden temporary beside `path`, for the other writer.
        public let temporary: String

        /// Checks `path` and creates the temporary (empty, closed).
        public init(for path: String, mode: mode_t = 0o644) throws(SystemError) {
            let fd: FileDescriptor
            (fd, temporary) = try createTemporary(for: path, mode: mode)
            fd.close()  // empty, and written by the other writer: this close has nothing to report
            self.path = path
        }

        /// Reopens the temporary without following a link (and O_NONBLOCK: a FIFO put in
        /// its place cannot hang it), checks it is still a regular file (else EINVAL),
        /// fsyncs and closes it (errors checked), then puts it in place (see `AtomicFile`).
        /// On failure the temporary is removed.
        public func commit() throws(SystemError) {
            try putInPlace(temporary, as: path) { () throws(SystemError) in
                let fd: FileDescriptor
                do throws(SystemError) {
                    fd = try FileDescriptor.open(temporary, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
                } catch {
                    throw SystemError("open \(path)", errno: error.errno)
                }
                var info = stat()
                guard fstat(fd.rawValue, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else {
                    fd.close()
                    throw SystemError("open \(path)", errno: EINVAL)
                }
                try fd.syncAndClose()
            }
        }

        /// Removes the temporary; `path` is left as it was.
        public func discard() {
            removeTemporary(temporary)
        }
    }

    /// A new, empty file next to `path` under an unpredictable hidden name, open for
    /// writing, and that name; `path` is checked first. A name already taken is never
    /// used: another is drawn, eight times at most.
    static func createTemporary(for path: String, mode: mode_t) throws(SystemError) -> (FileDescriptor, String) {
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

    /// Runs `finish` (which leaves `temporary` synced and closed), then renames `temporary`
    /// over `path`, checked again first (it may have changed since the temporary was
    /// created), then fsyncs the directory. When `finish`, the check or the rename fails,
    /// the temporary is removed.
    static func putInPlace(
        _ temporary: String, as path: String, finishing finish: () throws(SystemError) -> Void
    ) throws(SystemError) {
        do {
            try finish()
            try checkReplaceable(path)
            _ = try retryingOnInterrupt("rename \(path)") { rename(temporary, path) }
        } catch {
            removeTemporary(temporary)
            throw error
        }
        // The name is in place: a directory that cannot be synced is not worth failing for.
        if let directory = try? FileDescriptor.open(directory(of: path), O_RDONLY | O_DIRECTORY) {
            try? directory.sync()
            directory.close()
        }
    }

    /// Removes a temporary that will not be put in place (its error is not news).
    static func removeTemporary(_ temporary: String) {
        _ = try? retryingOnInterrupt("unlink") { unlink(temporary) }
    }

    /// Refuses a `path` that exists and is not a regular file: EISDIR for a directory,
    /// EEXIST with an explanation for the rest; ENOENT for an empty path.
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
        default: what = "of an unknown kind"
        }
        throw SystemError(
            "open \(path)", errno: EEXIST, explanation: "is \(what), not a regular file: refusing to replace it")
    }

    /// The directory part of `path` ("." for a bare name, "/" for a name in the root).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
