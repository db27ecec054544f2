import Foundation
import Glibc
import Testing
import TestSupport

/// The tests' own way of running programs (TestSupport's `ChildProcess`): what a wait
/// returns, that it never outlasts its deadline, and what the child starts with.
@Suite struct ChildProcessTests {
    private func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    @Test func theExitStatusAndTheSignalComeBack() async throws {
        let exited = try await ChildProcess("/bin/sh", ["-c", "exit 3"]).wait(timeout: 30)
        #expect(exited.status == 3 && !exited.signalled && !exited.timedOut)
        let killed = try ChildProcess("/bin/sh", ["-c", "kill -TERM $$"])
        let ended = await killed.wait(timeout: 30)
        #expect(ended.status == SIGTERM && ended.signalled && !ended.timedOut)
    }

    @Test func aChildStillRunningAtTheDeadlineIsKilled() throws {
        let start = Date()
        let ended = try ChildProcess("/bin/sleep", ["30"]).wait(timeout: 0.3)
        #expect(ended.timedOut && ended.signalled && ended.status == SIGKILL)
        #expect(Date().timeIntervalSince(start) < 10)
    }

    /// A test thread may block signals (the signalfd tests do); the child must not inherit
    /// that, or a SIGTERM meant to stop it would wait for ever.
    @Test func theChildStartsWithNoSignalBlockedInTheDirectoryAsked() throws {
        let scratch = try Scratch("child")
        var mask = sigset_t(), old = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &mask, &old)
        defer { pthread_sigmask(SIG_SETMASK, &old, nil) }
        let out = scratch.path + "/out"
        let child = try ChildProcess(
            "/bin/sh", ["-c", "pwd; grep SigBlk /proc/self/status; echo \"$PH_CHILD\""], environment: ["PH_CHILD": "given"],
            directory: scratch.path, stdout: .file(out))
        #expect(child.wait(timeout: 30).succeeded)
        #expect(text(out) == "\(scratch.path)\nSigBlk:\t0000000000000000\ngiven\n")
    }

    /// A socket of ours made without close-on-exec (as accept's are) is not the child's: a
    /// peer closed here must read as closed, whatever child another test starts meanwhile.
    @Test func theChildHoldsNoDescriptorOfOurs() throws {
        let scratch = try Scratch("fds")
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 3)
        defer { close(fd) }
        let out = scratch.path + "/out"
        let child = try ChildProcess("/bin/sh", ["-c", "if [ -e /proc/$$/fd/\(fd) ]; then echo open; else echo closed; fi"], stdout: .file(out))
        #expect(child.wait(timeout: 30).succeeded)
        #expect(text(out) == "closed\n")
    }

    @Test func aFIFOReaderSeesWhatTheChildWritesAndTheEnd() throws {
        let scratch = try Scratch("fifo")
        let fifo = scratch.path + "/pipe"
        let reader = try openFIFOForReading(fifo)
        defer { close(reader) }
        let child = try ChildProcess("/bin/sh", ["-c", "echo one; echo two"], stdout: .file(fifo))
        var got = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            let n = read(reader, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            got += buffer[0..<n]
        }
        #expect(String(decoding: got, as: UTF8.self) == "one\ntwo\n")
        #expect(child.wait(timeout: 30).succeeded)
    }
}
