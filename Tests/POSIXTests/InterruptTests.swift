import Foundation
import CLinux
import Glibc
import POSIX
import Synchronization
import Testing

/// SIGUSR2 deliveries the handler has seen (SIGUSR1 is the event loop tests').
private let interruptions = Atomic<Int>(0)

/// A SIGUSR2 handler installed without SA_RESTART: a blocking call it interrupts fails
/// with EINTR (or, a write that moved some bytes, returns short) instead of resuming.
private let handlerInstalled: Bool = {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in interruptions.add(1, ordering: .relaxed) }
    sigemptyset(&action.sa_mask)
    action.sa_flags = 0
    return sigaction(SIGUSR2, &action, nil) == 0
}()

/// Runs `body` on a thread of its own and, while it blocks, interrupts it with SIGUSR2
/// `times` times, 20 ms apart; then calls `unblock` and returns what `body` returned.
private func interrupting<T: Sendable>(
    times: Int = 5, _ body: @escaping @Sendable () -> T, unblock: () throws -> Void
) throws -> T {
    try #require(handlerInstalled)
    let thread = Mutex<(pthread_t, pid_t)?>(nil)
    let result = Mutex<T?>(nil)
    let started = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        // A test thread may have blocked signals (the signalfd tests do): ours must not.
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, SIGUSR2)
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
        let tid = ph_gettid()
        thread.withLock { $0 = (pthread_self(), tid) }
        started.signal()
        let value = body()
        result.withLock { $0 = value }
        done.signal()
    }
    started.wait()
    let (target, tid) = try #require(thread.withLock { $0 })
    // Each signal only once the thread sleeps in the kernel (its state S): a thread held up
    // on a loaded machine took the signal before its call, which then blocked for good.
    func waitUntilAsleep() {
        let end = Date().addingTimeInterval(10)
        while Date() < end {
            let stat = (try? String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8)) ?? ""
            // "tid (comm) S ...": the state follows the last ')'.
            if let close = stat.lastIndex(of: ")"), stat[close...].dropFirst(2).first == "S" { return }
            usleep(1_000)
        }
    }
    for _ in 0..<times {
        usleep(20_000)
        waitUntilAsleep()
        #expect(pthread_kill(target, SIGUSR2) == 0)
    }
    usleep(20_000)
    try unblock()
    done.wait()
    return try #require(result.withLock { $0 })
}

@Suite struct InterruptTests {
    /// The control: without the funnel an interrupted read of an empty pipe fails, EINTR.
    @Test func anInterruptedBlockingReadFailsWithEINTRWithoutTheFunnel() throws {
        let pipe = try PipeEnds()
        let reader = pipe.reader
        let (n, code) = try interrupting(times: 1, { () -> (Int, Int32) in
            var byte: UInt8 = 0
            let n = Glibc.read(reader.rawValue, &byte, 1)
            return (n, errno)
        }, unblock: { try pipe.writer.writeAll([7]) })
        #expect(n == -1 && code == EINTR)
    }

    /// Through the funnel the same read is retried after each interruption and returns the
    /// byte written after them.
    @Test func theFunnelRetriesAnInterruptedReadUntilItGetsTheData() throws {
        let pipe = try PipeEnds()
        let reader = pipe.reader
        let before = interruptions.load(ordering: .relaxed)
        let (byte, attempts) = try interrupting({ () -> (UInt8?, Int) in
            var byte: UInt8 = 0
            var attempts = 0
            let n = try? retryingOnInterrupt("read") {
                attempts += 1
                return Glibc.read(reader.rawValue, &byte, 1)
            }
            return (n == 1 ? byte : nil, attempts)
        }, unblock: { try pipe.writer.writeAll([42]) })
        #expect(byte == 42)
        #expect(attempts >= 2, "at least one EINTR was retried")
        #expect(interruptions.load(ordering: .relaxed) > before)
    }

    /// writeAll into a full blocking pipe, interrupted again and again: each EINTR is
    /// retried and each short write continued, and the reader gets every byte in order.
    @Test func anInterruptedWriteAllStillWritesEveryByte() throws {
        let pipe = try PipeEnds()
        let writer = pipe.writer
        let bytes = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        let reader = pipe.reader
        let received = Mutex<[UInt8]>([])
        let failure = try interrupting({ () -> Int32 in
            do throws(SystemError) {
                try writer.writeAll(bytes)
                return 0
            } catch {
                return error.errno
            }
        }, unblock: {
            var got: [UInt8] = []
            while got.count < bytes.count {
                let chunk = try reader.read(upTo: 1 << 16)
                if chunk.isEmpty { break }
                got += chunk
            }
            received.withLock { $0 = got }
        })
        #expect(failure == 0)
        #expect(received.withLock { $0 } == bytes)
    }

    @Test func aFailureOtherThanEINTRIsThrownWithTheCallNamedOnlyThen() {
        let named = Atomic<Int>(0)
        func name(_ text: String) -> String {
            named.add(1, ordering: .relaxed)
            return text
        }
        #expect((try? retryingOnInterrupt(name("getpid")) { getpid() }) != nil)
        #expect(named.load(ordering: .relaxed) == 0, "the name is not built on success")
        do {
            _ = try retryingOnInterrupt(name("open /nonexistent")) { open("/nonexistent/x", O_RDONLY) }
            Issue.record("opened a missing file")
        } catch {
            #expect(error == SystemError("open /nonexistent", errno: ENOENT))
            #expect(error.description == "open /nonexistent: No such file or directory")
        }
        #expect(named.load(ordering: .relaxed) == 1)
    }

    @Test func wouldBlockIsNilNotAnError() throws {
        let pipe = try PipeEnds()
        try pipe.reader.setNonBlocking()
        var buffer = [UInt8](repeating: 0, count: 4)
        #expect(try pipe.reader.read(into: &buffer) == nil)
    }

    @Test func anExplanationReplacesErrnosText() {
        let error = SystemError("open /dev/null", errno: EEXIST, explanation: "is a character device")
        #expect(error.reason == "is a character device")
        #expect(error.description == "open /dev/null: is a character device")
        #expect(SystemError.message(errno: ENOENT) == "No such file or directory")
    }
}
