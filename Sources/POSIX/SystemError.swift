#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: which one, and errno. The one errno error of the package: the
/// funnel (`retryingOnInterrupt`), `FileDescriptor` and `AtomicFile` throw it.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The call and what it was about ("rename /srv/reward.svg", "read").
    public var call: String
    public var errno: Int32
    /// Our own words for a refusal errno alone would not explain, phrased to follow the
    /// path ("is a character device, not a regular file: refusing to replace it"); nil:
    /// errno's text.
    public var explanation: String?

    public init(_ call: String, errno: Int32, explanation: String? = nil) {
        self.call = call
        self.errno = errno
        self.explanation = explanation
    }

    /// Why, without the call: the explanation, else what errno says ("No such file or directory").
    public var reason: String { explanation ?? Self.message(errno: errno) }

    public var description: String { "\(call): \(reason)" }

    /// What errno says (strerror): "No such file or directory"; "errno N" for a code it
    /// does not know.
    public static func message(errno code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text)
    }
}

/// Runs a system call that reports failure as a negative result and errno (an `int`, an
/// `ssize_t`), retrying on EINTR: the one funnel of the package. `call` names it in the
/// error and is only evaluated on failure. (Not for `close`, which must never be retried,
/// nor for a `poll` whose caller wants a signal to wake it, as the event loop's does.)
@inline(__always)
public func retryingOnInterrupt<T: FixedWidthInteger>(
    _ call: @autoclosure () -> String, _ body: () -> T
) throws(SystemError) -> T {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemError(call(), errno: code)
    }
}

/// As `retryingOnInterrupt`, but "would block" (EAGAIN) on a non-blocking fd is nil, not an error.
@inline(__always)
public func retryingOnInterruptUnlessWouldBlock<T: FixedWidthInteger>(
    _ call: @autoclosure () -> String, _ body: () -> T
) throws(SystemError) -> T? {
    do {
        return try retryingOnInterrupt(call(), body)
    } catch {
        if error.errno == EAGAIN || error.errno == EWOULDBLOCK { return nil }
        throw error
    }
}
