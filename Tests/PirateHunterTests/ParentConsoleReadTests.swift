import POSIX
import Testing
import TestSupport

@testable import PirateHunter

#if canImport(Glibc)
import Glibc
#endif

/// The parent page rereads the configuration on the event loop (its form, a save, a
/// rehearsal): a configuration given as a FIFO, read once at start, has no writer left, and
/// a blocking open of it hung the appliance.
@Suite struct ParentConsoleReadTests {
    @Test func aFIFOIsRefusedAtOnceAndARegularFileIsRead() throws {
        let scratch = try Scratch("page-read")
        let fifo = scratch.path + "/hunter.json"
        try #require(mkfifo(fifo, 0o600) == 0)
        #expect(throws: SystemError("open \(fifo)", errno: EINVAL, explanation: "is not a regular file")) {
            _ = try ParentConsole.read(fifo)
        }
        let file = try scratch.write("plain.json", "{\"a\": 1}")
        #expect(try ParentConsole.read(file) == Array("{\"a\": 1}".utf8))
        #expect(throws: SystemError("read \(file)", errno: EFBIG)) { _ = try ParentConsole.read(file, limit: 3) }
    }
}
