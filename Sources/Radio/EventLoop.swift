#if canImport(Glibc)
import Glibc
#endif
import CLinux
import POSIX
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

/// Where the loop's time comes from. `monotonic`: the kernel's clock, timers on a timerfd,
/// an idle loop blocked in poll(). `virtual`: time stands still while anything is ready
/// (an fd, a due timer, work another thread was asked for) and jumps to the next deadline
/// when nothing is: a simulated hour runs as fast as it computes, the same every run.
public enum LoopClock: Sendable, Equatable {
    case monotonic
    case virtual(start: Double)
}

/// The one thread's loop: poll() over watched fds and a timerfd. Idle means blocked in poll:
/// no busy polling. Not Sendable: it belongs to the thread that runs it; other threads reach
/// it only through a `Mailbox`. Everything on the loop reads time from `now`.
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
    /// The due timers of the round running now that have not run yet (`cancel` takes them out).
    private var dueIDs: Set<Int> = []
    private var nextID = 1
    private let timerFD: Int32
    private var armedDeadline: Double?
    private var stopped = false
    public let clock: LoopClock
    private var virtualNow: Double
    /// Answers other threads still owe the loop (virtual time waits for them).
    private var outstanding = 0
    /// Called with the new time whenever virtual time moves (the audio thread's pace).
    public var onVirtualAdvance: (Double) -> Void = { _ in }

    public init(clock: LoopClock = .monotonic) throws(SystemError) {
        timerFD = try retryingOnInterrupt("timerfd_create") { timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC | TFD_NONBLOCK)) }
        self.clock = clock
        if case let .virtual(start) = clock { virtualNow = start } else { virtualNow = 0 }
    }

    deinit { Glibc.close(timerFD) }

    public var isVirtual: Bool { clock != .monotonic }

    /// The loop's time, seconds (monotonic, or virtual).
    public var now: Double { isVirtual ? virtualNow : monotonicSeconds() }

    /// Another thread was asked for something it will post back (a synthesized line): on
    /// virtual time the clock waits for it. Balance with `expectationMet()` when it arrives.
    public func expectAnswer() { outstanding += 1 }
    public func expectationMet() { outstanding = max(0, outstanding - 1) }
    public var isAwaitingAnswer: Bool { outstanding > 0 }

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

    /// Runs `action` once at `deadline` (seconds on this loop's clock).
    @discardableResult
    public func schedule(at deadline: Double, _ action: @escaping Handler) -> Int {
        // A NaN deadline (never): last, or it broke the order and held back every timer after it.
        let deadline = deadline.isNaN ? .infinity : deadline
        let id = nextID
        nextID += 1
        let index = timers.firstIndex { $0.deadline > deadline } ?? timers.endIndex
        timers.insert(Timer(id: id, deadline: deadline, action: action), at: index)
        return id
    }

    @discardableResult
    public func schedule(after seconds: Double, _ action: @escaping Handler) -> Int {
        schedule(at: now + seconds, action)
    }

    /// Calls `action(now)` every `interval` seconds, for as long as it returns true (a
    /// simulated world moved with the loop's clock).
    public func repeatEvery(_ interval: Double, _ action: @escaping (Double) -> Bool) {
        func tick() {
            guard action(now) else { return }
            schedule(after: interval) { tick() }
        }
        tick()
    }

    public func cancel(_ id: Int) {
        timers.removeAll { $0.id == id }
        dueIDs.remove(id)
    }

    public var timerCount: Int { timers.count }

    /// The latest a timer is armed for (s on the loop's clock, about 30 years).
    static let farthestDeadline = 1e9

    private func armTimer() {
        let deadline = timers.first?.deadline
        guard deadline != armedDeadline else { return }
        armedDeadline = deadline
        var spec = itimerspec()
        if let deadline {
            // Never past what an Int holds (a `--duration 1e19`, an infinite or NaN deadline
            // trapped in the conversion): a timer 30 years out is one that never fires.
            let clamped = min(max(deadline, 0.000_001), Self.farthestDeadline)
            spec.it_value.tv_sec = Int(clamped)
            spec.it_value.tv_nsec = Int((clamped - Double(Int(clamped))) * 1e9)
            if spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0 { spec.it_value.tv_nsec = 1 }
        }
        // Only EINVAL can fail this with a valid fd and spec: a bug, not a runtime condition.
        _ = try? retryingOnInterrupt("timerfd_settime") { timerfd_settime(timerFD, Int32(TFD_TIMER_ABSTIME), &spec, nil) }
    }

    /// Run what is due now; timers scheduled by these actions wait for the next round, so
    /// an action that reschedules itself cannot spin here. A timer that one of them cancels
    /// does not run, due or not: a loop that woke late finds a line's end and the tick that
    /// interrupts the line due together, and the line's end, cancelled by the tick, ended the
    /// next line too.
    private func runDueTimers(at now: Double) {
        let due = Array(timers.prefix { $0.deadline <= now })
        timers.removeFirst(due.count)
        dueIDs = Set(due.map(\.id))
        defer { dueIDs = [] }
        for timer in due where dueIDs.remove(timer.id) != nil { timer.action() }
    }

    /// Runs until `stop()` is called from a handler (at once if it was called before).
    public func run() throws(SystemError) {
        while !stopped {
            try runOnce(timeout: -1)
        }
    }

    /// One poll round; `timeout` in ms (-1 blocks until something happens). On virtual time
    /// a round that finds nothing ready moves the clock to the next deadline instead.
    public func runOnce(timeout: Int32) throws(SystemError) {
        var fds: [pollfd] = []
        if !isVirtual {
            armTimer()
            fds.append(pollfd(fd: timerFD, events: Int16(POLLIN), revents: 0))
        }
        let base = fds.count
        for w in watches { fds.append(pollfd(fd: w.fd, events: Int16(POLLIN), revents: 0)) }
        let snapshot = watches
        // Virtual: only look (0 ms), unless another thread's answer is awaited, or there is
        // nothing at all to move the clock to.
        let wait: Int32 = isVirtual ? (outstanding > 0 || timers.isEmpty ? (timeout < 0 ? 50 : timeout) : 0) : timeout
        // Not through the EINTR funnel: a signal ends this round, so the caller sees it.
        let n = poll(&fds, nfds_t(fds.count), wait)
        if n < 0 {
            if errno == EINTR { return }
            throw SystemError("poll", errno: errno)
        }
        if isVirtual {
            let dueNow = timers.first.map { $0.deadline <= virtualNow } ?? false
            if dueNow {
                runDueTimers(at: virtualNow)
            } else if n == 0, outstanding == 0, let next = timers.first?.deadline {
                virtualNow = next
                onVirtualAdvance(next)
                runDueTimers(at: virtualNow)
                return
            }
        } else if fds[0].revents != 0 {
            var expirations: UInt64 = 0
            _ = try? retryingOnInterrupt("read timerfd") { Glibc.read(timerFD, &expirations, 8) }
            armedDeadline = nil
            runDueTimers(at: monotonicSeconds())
        }
        for (index, w) in snapshot.enumerated() where fds[index + base].revents != 0 {
            // A handler may have unwatched a later one in this round.
            guard watches.contains(where: { $0.id == w.id }) else { continue }
            w.handler()
        }
    }

    public func stop() { stopped = true }
}

/// An eventfd: a counter another party bumps to make an fd readable for poll(). Every
/// call goes through the EINTR funnel; EAGAIN (nothing to drain, or a full counter, which
/// is still readable) is not an error.
public final class EventCounter: Sendable {
    public let fd: Int32

    public init() throws(SystemError) {
        fd = try retryingOnInterrupt("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
    }

    deinit { Glibc.close(fd) }

    /// Makes the fd readable.
    public func signal() {
        var one: UInt64 = 1
        _ = try? retryingOnInterrupt("write eventfd") { Glibc.write(fd, &one, 8) }
    }

    /// Reads the counter back to zero (the fd is no longer readable).
    public func drain() {
        var counter: UInt64 = 0
        _ = try? retryingOnInterrupt("read eventfd") { Glibc.read(fd, &counter, 8) }
    }
}

/// The only way into the loop from another thread: post a message, the loop's handler
/// drains them in order. A Mutex-guarded queue plus an eventfd to wake poll().
public final class Mailbox<Message: Sendable>: Sendable {
    private let queue = Mutex<[Message]>([])
    private let counter: EventCounter
    public var fd: Int32 { counter.fd }

    public init() throws(SystemError) {
        counter = try EventCounter()
    }

    public func post(_ message: Message) {
        queue.withLock { $0.append(message) }
        counter.signal()
    }

    /// Everything posted so far, oldest first (call on the loop's thread).
    public func drain() -> [Message] {
        counter.drain()
        return queue.withLock { messages in
            defer { messages.removeAll(keepingCapacity: true) }
            return messages
        }
    }
}

/// SIGINT, SIGTERM and SIGHUP as readable events (signalfd). Create it before any other
/// thread starts, so every thread inherits the blocked mask (an `OwnerThread` blocks them
/// itself, whenever it starts).
public final class SignalSource {
    public let fd: Int32

    public init(_ signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]) throws(SystemError) {
        var mask = sigset_t()
        sigemptyset(&mask)
        for s in signals { sigaddset(&mask, s) }
        // pthread_sigmask returns its error number; it does not set errno.
        let failed = pthread_sigmask(SIG_BLOCK, &mask, nil)
        guard failed == 0 else { throw SystemError("pthread_sigmask", errno: failed) }
        fd = try retryingOnInterrupt("signalfd") { signalfd(-1, &mask, Int32(SFD_CLOEXEC | SFD_NONBLOCK)) }
    }

    deinit { Glibc.close(fd) }

    /// Signals received since the last call.
    public func drain() -> [Int32] {
        var out: [Int32] = []
        var info = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        while (try? retryingOnInterrupt("read signalfd", { Glibc.read(fd, &info, size) })) == size {
            out.append(Int32(info.ssi_signo))
        }
        return out
    }
}
