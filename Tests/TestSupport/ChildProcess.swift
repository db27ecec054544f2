import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A program the tests start and wait for: posix_spawn and waitpid on its own pid, nothing
/// else. Foundation's `Process` learns of an exit through a socket the child inherits and one
/// manager thread that blocks in `waitpid` for each child in turn; with many children started
/// at once from several threads, that socket leaks into other children, and `waitUntilExit`
/// off the main thread once parked a `swift test` run for good (CI, stop 38). Here a wait is
/// a poll of `waitpid(pid, WNOHANG)` with a deadline, after which the child is killed.
public final class ChildProcess: @unchecked Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        case null
        /// A file, created or truncated (or a FIFO, `openFIFOForReading`).
        case file(String)
    }

    /// How the child ended.
    public struct Termination: Sendable, Equatable {
        /// The exit status, or the signal's number when `signalled`.
        public var status: Int32
        public var signalled: Bool
        /// It was still running at the deadline and was killed (SIGKILL).
        public var timedOut: Bool
        /// Exit status 0, in its own time.
        public var succeeded: Bool { status == 0 && !signalled && !timedOut }
    }

    public let pid: pid_t
    private let lock = NSLock()
    private var ended: Termination?

    /// Starts `path` with `arguments`, this process's environment with `environment` over it
    /// (or exactly `environment` when `inheritEnvironment` is false), in `directory` (the
    /// repository when nil). The child has its own process group, no blocked signals and the
    /// default disposition of every signal the tests send.
    public init(
        _ path: String, _ arguments: [String], environment: [String: String] = [:], inheritEnvironment: Bool = true,
        directory: String? = nil, stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null
    ) throws {
        var env = inheritEnvironment ? ProcessInfo.processInfo.environment : [:]
        for (k, v) in environment { env[k] = v }
        // The directory through the shell, which then execs the program (the pid stays the
        // program's): Swift's Glibc does not export posix_spawn_file_actions_addchdir_np.
        let argv = ["/bin/sh", "-c", #"cd "$1" && shift && exec "$@""#, "sh", directory ?? Repository.url.path, path] + arguments
        let envp = env.map { "\($0.key)=\($0.value)" }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (fd, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            let result: Int32
            switch stream {
            case .null:
                result = posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let file):
                result = posix_spawn_file_actions_addopen(&actions, fd, file, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            }
            guard result == 0 else { throw ChildProcessError.spawn(path, result) }
        }
        // Nothing else of ours goes to the child: a socket another test accepted (without
        // close-on-exec) and a child still holding it would keep that test from seeing its end.
        try Self.closeTheRest(&actions, path)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), defaults = sigset_t()
        sigemptyset(&none)
        sigemptyset(&defaults)
        for signal in [SIGHUP, SIGINT, SIGTERM, SIGPIPE, SIGUSR1, SIGUSR2, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        var child: pid_t = 0
        let result = Self.withCStrings(argv) { cArgv in
            Self.withCStrings(envp) { cEnvp in posix_spawn(&child, "/bin/sh", &actions, &attributes, cArgv, cEnvp) }
        }
        guard result == 0 else { throw ChildProcessError.spawn(path, result) }
        pid = child
    }

    /// A child is never left behind: one not waited for is killed and reaped with its object.
    deinit { kill() }

    /// Sends `signal` to the child (nothing once it has been waited for).
    public func send(_ signal: Int32) {
        lock.withLock { if ended == nil { _ = Glibc.kill(pid, signal) } }
    }

    /// Whether it has not ended yet (reaps it when it has).
    public var isRunning: Bool { poll() == nil }

    /// Waits for it to end, at most `timeout` seconds, then kills it.
    @discardableResult
    public func wait(timeout: Double) -> Termination {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let ended = poll() { return ended }
            usleep(10_000)
        }
        return kill()
    }

    /// The same from async code: sleeps between polls instead of holding a thread.
    @discardableResult
    public func wait(timeout: Double) async -> Termination {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let ended = poll() { return ended }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return kill()
    }

    /// Kills it (SIGKILL) if it is still running, and reaps it. A child that had ended by
    /// itself keeps its own status (`timedOut` false), however late this is called.
    @discardableResult
    public func kill() -> Termination {
        if let ended = poll() { return ended }
        return lock.withLock {
            if let ended { return ended }
            _ = Glibc.kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            let termination = Self.termination(status, timedOut: true)
            ended = termination
            return termination
        }
    }

    private func poll() -> Termination? {
        lock.withLock {
            if let ended { return ended }
            var status: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(pid, &status, WNOHANG) } while result == -1 && errno == EINTR
            guard result == pid else { return nil }
            let termination = Self.termination(status, timedOut: false)
            ended = termination
            return termination
        }
    }

    /// Every descriptor from 3 up closed in the child: glibc's closefrom action (2.34 and
    /// later, so bookworm's and trixie's; Swift's Glibc does not export it, so it is looked up).
    private static func closeTheRest(_ actions: inout posix_spawn_file_actions_t, _ path: String) throws {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            throw ChildProcessError.spawn("\(path) (glibc has no posix_spawn_file_actions_addclosefrom_np: 2.34 or later needed)", ENOSYS)
        }
        let result = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        guard result == 0 else { throw ChildProcessError.spawn(path, result) }
    }

    private static func termination(_ status: Int32, timedOut: Bool) -> Termination {
        // WIFSIGNALED / WEXITSTATUS by hand: the macros are not imported.
        let signal = status & 0x7F
        if signal != 0 && signal != 0x7F { return Termination(status: signal, signalled: true, timedOut: timedOut) }
        return Termination(status: (status >> 8) & 0xFF, signalled: false, timedOut: timedOut)
    }

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        let pointers = strings.map { strdup($0) }
        defer { pointers.forEach { free($0) } }
        return body(pointers + [nil])
    }
}

public enum ChildProcessError: Error, CustomStringConvertible {
    case spawn(String, Int32)
    public var description: String {
        switch self {
        case .spawn(let path, let code): "cannot start \(path): \(String(cString: strerror(code)))"
        }
    }
}

/// The read end of a pipe that only the child holds the write end of: a FIFO at `path`
/// (made here), opened for reading (O_CLOEXEC, so no other test's child inherits it) before
/// the child opens it for writing as `.file(path)`. A pipe made by `pipe()` would be inherited
/// by whatever child another thread starts before FD_CLOEXEC is set on it (Swift's Glibc has
/// no `pipe2`).
public func openFIFOForReading(_ path: String) throws -> Int32 {
    guard mkfifo(path, 0o600) == 0 else { throw ChildProcessError.spawn("mkfifo \(path)", errno) }
    // Non-blocking to open without a writer yet; blocking again for the reads.
    let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else { throw ChildProcessError.spawn("open \(path)", errno) }
    _ = fcntl(fd, F_SETFL, 0)
    return fd
}
