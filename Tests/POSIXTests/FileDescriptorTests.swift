import Foundation
import Glibc
import POSIX
import Synchronization
import Testing

/// A connected pair of non-blocking unix stream sockets, closed at the end of the test.
private final class SocketPair {
    let a: FileDescriptor
    let b: FileDescriptor
    init() throws {
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        a = FileDescriptor(rawValue: fds[0])
        b = FileDescriptor(rawValue: fds[1])
        try a.setNonBlocking()
        try b.setNonBlocking()
    }
    deinit {
        a.close()
        b.close()
    }
}

private func threadCPUSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

@Suite struct FileDescriptorTests {
    @Test func aReadWithNothingWaitingIsNilAndTheEndOfTheStreamIsZero() throws {
        let pair = try SocketPair()
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(try pair.a.read(into: &buffer) == nil)
        try pair.b.writeAll([1, 2, 3])
        #expect(try pair.a.read(into: &buffer) == 3)
        #expect(buffer.prefix(3) == [1, 2, 3])
        #expect(shutdown(pair.b.rawValue, Int32(SHUT_WR)) == 0)
        #expect(try pair.a.read(into: &buffer) == 0)
    }

    /// The kernel socket's `send` used to spin on EAGAIN; now a full buffer is waited out
    /// in poll (no CPU) and reported when it stays full.
    @Test func aFullSocketIsWaitedOutInPollThenReported() throws {
        let pair = try SocketPair()
        let chunk = [UInt8](repeating: 0xAB, count: 65_536)
        var filled = 0
        while true {
            let n = chunk.withUnsafeBytes { Glibc.write(pair.a.rawValue, $0.baseAddress, $0.count) }
            if n < 0 { break }
            filled += n
        }
        try #require(errno == EAGAIN && filled > 0)
        let cpu = threadCPUSeconds()
        let start = ContinuousClock.now
        do {
            try pair.a.writeAll([1, 2, 3, 4], timeoutMilliseconds: 300)
            Issue.record("wrote into a full socket")
        } catch {
            #expect(error.errno == EAGAIN)
        }
        let waited = ContinuousClock.now - start
        #expect(waited >= .milliseconds(290) && waited < .seconds(3))
        #expect(threadCPUSeconds() - cpu < 0.1, "waiting for room must not spin")
    }

    @Test func aFullSocketThatDrainsTakesTheWholeWrite() throws {
        let pair = try SocketPair()
        let chunk = [UInt8](repeating: 0xAB, count: 65_536)
        var filled = 0
        while true {
            let n = chunk.withUnsafeBytes { Glibc.write(pair.a.rawValue, $0.baseAddress, $0.count) }
            if n < 0 { break }
            filled += n
        }
        // A thread of its own (not a task: the cooperative pool may be busy with other tests).
        let reader = pair.b
        let expected = filled + 4
        let total = Mutex(0)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            usleep(50_000)
            var buffer = [UInt8](repeating: 0, count: 65_536)
            var got = 0
            let deadline = ContinuousClock.now + .seconds(10)
            while got < expected, ContinuousClock.now < deadline {
                if let n = try? reader.read(into: &buffer), n > 0 { got += n } else { usleep(1000) }
            }
            total.withLock { $0 = got }
            done.signal()
        }
        try pair.a.writeAll([1, 2, 3, 4], timeoutMilliseconds: 5000)
        done.wait()
        #expect(total.withLock { $0 } == expected)
    }
}

/// A pipe; the ends still open are closed at the end of the test (each exactly once: a
/// number closed twice could be another test's by then). Close-on-exec, set right after
/// `pipe` (Glibc's Swift module has no `pipe2`); a child another test spawns in between
/// could still hold an end, so readers here stop at a byte count, never wait for EOF.
final class PipeEnds {
    let reader: FileDescriptor
    let writer: FileDescriptor
    private var readerOpen = true
    private var writerOpen = true
    init() throws {
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        reader = FileDescriptor(rawValue: fds[0])
        writer = FileDescriptor(rawValue: fds[1])
        for fd in fds { try #require(fcntl(fd, F_SETFD, FD_CLOEXEC) == 0) }
    }
    func closeReader() {
        readerOpen = false
        reader.close()
    }
    func closeWriter() throws(SystemError) {
        writerOpen = false
        try writer.closeChecked()
    }
    deinit {
        if readerOpen { reader.close() }
        if writerOpen { writer.close() }
    }
}

@Suite struct WriteAllAndCloseTests {
    /// 4 MiB through a 64 KiB pipe: many short writes, continued in order, while a thread
    /// of its own reads.
    @Test func aLargeBufferGoesThroughAPipeWholeAndInOrder() throws {
        let pipe = try PipeEnds()
        let bytes = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 12) }
        let received = Mutex<[UInt8]>([])
        let done = DispatchSemaphore(value: 0)
        let reader = pipe.reader
        let expected = bytes.count
        Thread.detachNewThread {
            var got: [UInt8] = []
            while got.count < expected, let chunk = try? reader.read(upTo: 1 << 15), !chunk.isEmpty { got += chunk }
            received.withLock { $0 = got }
            done.signal()
        }
        try pipe.writer.writeAll(bytes)
        try pipe.closeWriter()
        done.wait()
        #expect(received.withLock { $0 } == bytes)
    }

    /// A failed close is reported (EBADF for a descriptor that is not open), not swallowed.
    @Test func aFailedCloseIsReported() {
        do {
            try FileDescriptor(rawValue: -1).closeChecked()
            Issue.record("closing -1 succeeded")
        } catch {
            #expect(error.errno == EBADF)
            #expect(error.call == "close")
        }
    }

    /// A write error other than "would block" is thrown with its errno: EPIPE once the
    /// peer has gone (SIGPIPE is ignored by the test process here). A socket pair, made
    /// close-on-exec at once, so that no child another test spawns can keep the peer open.
    @Test func aWriteWithNoReaderIsEPIPE() throws {
        signal(SIGPIPE, SIG_IGN)
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        let writer = FileDescriptor(rawValue: fds[0])
        defer { writer.close() }
        FileDescriptor(rawValue: fds[1]).close()
        do {
            try writer.writeAll([1, 2, 3])
            Issue.record("wrote to a pipe without a reader")
        } catch {
            #expect(error.errno == EPIPE)
        }
    }
}
