#if canImport(Glibc)
import Glibc
#endif
import CLinux
import Synchronization

/// Seconds on the monotonic clock: the one clock the appliance reads (the pure core gets it
/// passed in).
public func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Microseconds since the Unix epoch, for capture timestamps.
public func wallClockMicroseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
}

/// The one thread's loop: poll() over watched fds and a timerfd. Idle means blocked in poll:
/// no busy polling. Not Sendable: it belongs to the thread that runs it; other threads reach
/// it only through a `Mailbox`.
public final class EventLoop {
    public typealias Handler = () -> Void

    private struct Watch {
        var id: Int
        var fd: Int32
        var handler: Handler
    }

    private struct Timer {
        var id: Int
        var deadline: Double
        var action: Handler
    }

    private var watches: [Watch] = []
    private var timers: [Timer] = []
    private var nextID = 1
    private let timerFD: Int32
    private var armedDeadline: Double?
    private var stopped = false

    public init() throws(SystemError) {
        let fd = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        guard fd >= 0 else { throw SystemError("timerfd_create", errno: errno) }
        timerFD = fd
    }

    deinit { Glibc.close(timerFD) }

    /// Calls `handler` on this thread whenever `fd` is readable (or has hung up).
    @discardableResult
    public func watch(_ fd: Int32, _ handler: @escaping Handler) -> Int {
        let id = nextID
        nextID += 1
        watches.append(Watch(id: id, fd: fd, handler: handler))
        return id
    }

    public func unwatch(_ id: Int) {
        watches.removeAll { $0.id == id }
    }

    /// Runs `action` once at `deadline` (monotonic seconds).
    @discardableResult
    public func schedule(at deadline: Double, _ action: @escaping Handler) -> Int {
        let id = nextID
        nextID += 1
        let index = timers.firstIndex { $0.deadline > deadline } ?? timers.endIndex
        timers.insert(Timer(id: id, deadline: deadline, action: action), at: index)
        return id
    }

    @discardableResult
    public func schedule(after seconds: Double, _ action: @escaping Handler) -> Int {
        schedule(at: monotonicSeconds() + seconds, action)
    }

    public func cancel(_ id: Int) {
        timers.removeAll { $0.id == id }
    }

    public var timerCount: Int { timers.count }

    private func armTimer() {
        let deadline = timers.first?.deadline
        guard deadline != armedDeadline else { return }
        armedDeadline = deadline
        var spec = itimerspec()
        if let deadline {
            let clamped = max(deadline, 0.000_001)
            spec.it_value.tv_sec = Int(clamped)
            spec.it_value.tv_nsec = Int((clamped - Double(Int(clamped))) * 1e9)
            if spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0 { spec.it_value.tv_nsec = 1 }
        }
        timerfd_settime(timerFD, Int32(TFD_TIMER_ABSTIME), &spec, nil)
    }

    private func runDueTimers() {
        var expirations: UInt64 = 0
        _ = Glibc.read(timerFD, &expirations, 8)
        armedDeadline = nil
        // Run what is due now; timers scheduled by these actions wait for the next round,
        // so an action that reschedules itself cannot spin here.
        let now = monotonicSeconds()
        let due = timers.prefix { $0.deadline <= now }
        timers.removeFirst(due.count)
        for timer in due { timer.action() }
    }

    /// Runs until `stop()` is called from a handler (at once if it was called before).
    public func run() throws(SystemError) {
        while !stopped {
            try runOnce(timeout: -1)
        }
    }

    /// One poll round; `timeout` in ms (-1 blocks until something happens).
    public func runOnce(timeout: Int32) throws(SystemError) {
        armTimer()
        var fds = [pollfd(fd: timerFD, events: Int16(POLLIN), revents: 0)]
        for w in watches { fds.append(pollfd(fd: w.fd, events: Int16(POLLIN), revents: 0)) }
        let snapshot = watches
        let n = poll(&fds, nfds_t(fds.count), timeout)
        if n < 0 {
            if errno == EINTR { return }
            throw SystemError("poll", errno: errno)
        }
        if fds[0].revents != 0 { runDueTimers() }
        for (index, w) in snapshot.enumerated() where fds[index + 1].revents != 0 {
            // A handler may have unwatched a later one in this round.
            guard watches.contains(where: { $0.id == w.id }) else { continue }
            w.handler()
        }
    }

    public func stop() { stopped = true }
}

/// The only way into the loop from another thread: post a message, the loop's handler
/// drains them in order. A Mutex-guarded queue plus an eventfd to wake poll().
public final class Mailbox<Message: Sendable>: Sendable {
    private let queue = Mutex<[Message]>([])
    public let fd: Int32

    public init() throws(SystemError) {
        let fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard fd >= 0 else { throw SystemError("eventfd", errno: errno) }
        self.fd = fd
    }

    deinit { Glibc.close(fd) }

    public func post(_ message: Message) {
        queue.withLock { $0.append(message) }
        var one: UInt64 = 1
        _ = Glibc.write(fd, &one, 8)
    }

    /// Everything posted so far, oldest first (call on the loop's thread).
    public func drain() -> [Message] {
        var counter: UInt64 = 0
        _ = Glibc.read(fd, &counter, 8)
        return queue.withLock { messages in
            defer { messages.removeAll(keepingCapacity: true) }
            return messages
        }
    }
}

/// SIGINT, SIGTERM and SIGHUP as readable events (signalfd). Create it before any other
/// thread starts, so every thread inherits the blocked mask.
public final class SignalSource {
    public let fd: Int32

    public init(_ signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]) throws(SystemError) {
        var mask = sigset_t()
        sigemptyset(&mask)
        for s in signals { sigaddset(&mask, s) }
        guard pthread_sigmask(SIG_BLOCK, &mask, nil) == 0 else { throw SystemError("pthread_sigmask", errno: errno) }
        let fd = signalfd(-1, &mask, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
        guard fd >= 0 else { throw SystemError("signalfd", errno: errno) }
        self.fd = fd
    }

    deinit { Glibc.close(fd) }

    /// Signals received since the last call.
    public func drain() -> [Int32] {
        var out: [Int32] = []
        var info = signalfd_siginfo()
        while Glibc.read(fd, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
            out.append(Int32(info.ssi_signo))
        }
        return out
    }
}
