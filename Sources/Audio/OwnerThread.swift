import POSIX

#if canImport(Glibc)
import Glibc
#endif

/// A POSIX counting semaphore: posting never blocks, so callers on the event loop can wake
/// an owner thread without waiting for it.
public final class WakeSignal: @unchecked Sendable {
    // sem_t needs a stable address for its whole life; it is only touched through sem_* calls,
    // which are thread-safe by contract (hence @unchecked).
    private let semaphore: UnsafeMutablePointer<sem_t>

    public init() {
        semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    public func post() { sem_post(semaphore) }

    /// Waits until posted (EINTR is retried; sem_wait fails otherwise only on a bad semaphore).
    public func wait() {
        _ = try? retryingOnInterrupt("sem_wait") { sem_wait(semaphore) }
    }

    /// Waits at most `timeout`; true when posted.
    @discardableResult
    public func wait(timeout: Duration) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let (seconds, attoseconds) = timeout.components
        var nanos = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
        var deadline = timespec(tv_sec: now.tv_sec + Int(seconds) + nanos / 1_000_000_000, tv_nsec: 0)
        nanos %= 1_000_000_000
        deadline.tv_nsec = nanos
        // EINTR is retried against the same absolute deadline; ETIMEDOUT is false.
        return (try? retryingOnInterrupt("sem_timedwait") { sem_timedwait(semaphore, &deadline) }) != nil
    }
}

/// A dedicated pthread that owns a non-reentrant resource (the PCM, the eSpeak NG engine).
public final class OwnerThread: Sendable {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    private let thread: pthread_t

    /// The signals the event loop takes through its signalfd (`SignalSource`). An owner
    /// thread never takes them: a process-directed signal goes to any thread that does not
    /// block it, and an owner thread started before the loop's `SignalSource` (the settings
    /// notice's voice, said while `--wait-for-fix` waits) would otherwise inherit a mask
    /// without them for the whole process, and SIGTERM or SIGHUP would end the appliance
    /// there by default instead of reaching the loop.
    public static let loopSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// Starts `body` on a new thread (`name` documents it in code and crash logs), with
    /// `loopSignals` blocked whatever the calling thread blocks.
    public init(name: String, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        var handle = pthread_t()
        // A new thread inherits its creator's mask: block the loop's signals for the
        // creation only, and give the creator back its own.
        var blocked = sigset_t()
        var previous = sigset_t()
        sigemptyset(&blocked)
        for signal in Self.loopSignals { sigaddset(&blocked, signal) }
        let masked = pthread_sigmask(SIG_BLOCK, &blocked, &previous) == 0
        let rc = pthread_create(&handle, nil, { raw in
            guard let raw else { return nil }
            let body = Unmanaged<Body>.fromOpaque(raw).takeRetainedValue()
            body.run()
            return nil
        }, box)
        if masked { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        precondition(rc == 0, "pthread_create failed: \(rc)")
        thread = handle
    }

    /// Waits for the body to return. Call once.
    public func join() {
        _ = pthread_join(thread, nil)
    }
}

/// Sleeps the calling thread (only ever an owner thread, never the event loop).
func sleepFor(_ duration: Duration) {
    let (seconds, attoseconds) = duration.components
    if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return }
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}
