import Bluetooth
import Foundation
import Glibc
import Testing
import TestSupport

@testable import Radio

private let event = HCIPacket(type: .event, bytes: [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00])

private func records(at path: String) throws -> [HCIPacket] {
    var reader = try CaptureFileReader(path: path)
    defer { reader.close() }
    var packets: [HCIPacket] = []
    while let record = try reader.next() {
        if let p = try record.packet(datalink: .h4) { packets.append(p) }
    }
    return packets
}

/// The capture writer on the one safe writer (`POSIX.AtomicFile.Staged`, tested in
/// POSIXTests): what it refuses at `init`, and what it leaves.
@Suite struct SafeOutputFileTests {
    @Test func recordingToDevNullIsRefusedAndDevNullIsUntouched() throws {
        var before = stat()
        try #require(lstat("/dev/null", &before) == 0)
        #expect(throws: SystemError.self) { try CaptureFileWriter(path: "/dev/null") }
        do {
            _ = try CaptureFileWriter(path: "/dev/null")
        } catch {
            #expect(error.errno == EEXIST)
            #expect(error.reason.contains("character device"))
        }
        var after = stat()
        try #require(lstat("/dev/null", &after) == 0)
        #expect(after.st_mode & mode_t(S_IFMT) == mode_t(S_IFCHR))
        #expect(after.st_rdev == before.st_rdev && after.st_ino == before.st_ino)
        #expect(try !FileManager.default.contentsOfDirectory(atPath: "/dev").contains { $0.hasPrefix(".null.") })
    }

    @Test func aFIFOIsRefusedAndStaysAFIFO() throws {
        let scratch = try Scratch("safe-fifo")
        let fifo = scratch.path + "/r.btsnoop"
        try #require(mkfifo(fifo, 0o644) == 0)
        do {
            _ = try CaptureFileWriter(path: fifo)
            Issue.record("a FIFO was accepted")
        } catch {
            #expect(error.errno == EEXIST)
            #expect(error.reason.contains("FIFO"))
        }
        #expect(fileKind(fifo) == mode_t(S_IFIFO))
        #expect(scratch.entries() == ["r.btsnoop"])
    }

    @Test func aDirectoryIsRefusedWithEISDIRAndNothingIsLeftBeside() throws {
        let scratch = try Scratch("safe-dir")
        let directory = scratch.path + "/out"
        try #require(mkdir(directory, 0o755) == 0)
        do {
            _ = try CaptureFileWriter(path: directory)
            Issue.record("a directory was accepted")
        } catch {
            #expect(error.errno == EISDIR)
        }
        #expect(scratch.entries() == ["out"], "no DIR.partial, no temporary")
        #expect((try FileManager.default.contentsOfDirectory(atPath: directory)).isEmpty)
    }

    @Test func aSymlinkAtTheTargetIsRefusedAndItsTargetUntouched() throws {
        let scratch = try Scratch("safe-link")
        let victim = scratch.path + "/victim"
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        let link = scratch.path + "/r.btsnoop"
        try #require(symlink(victim, link) == 0)
        do {
            _ = try CaptureFileWriter(path: link)
            Issue.record("a symlink was accepted")
        } catch {
            #expect(error.reason.contains("symbolic link"))
        }
        #expect(fileKind(link) == mode_t(S_IFLNK))
        #expect(fileContents(victim) == Array("precious".utf8))
        #expect(scratch.entries() == ["r.btsnoop", "victim"])
    }

    /// The old writer opened `FILE.partial` with O_CREAT | O_TRUNC, following a planted
    /// symlink; now the temporary's name is random and opened O_EXCL | O_NOFOLLOW.
    @Test func aPlantedPartialSymlinkIsLeftAloneAndTemporaryNamesAreUnpredictable() throws {
        let scratch = try Scratch("safe-plant")
        let victim = scratch.path + "/victim"
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        let path = scratch.path + "/r.btsnoop"
        try #require(symlink(victim, path + ".partial") == 0)

        let first = try CaptureFileWriter(path: path)
        let second = try CaptureFileWriter(path: path)
        try first.write(event, received: true, unixMicroseconds: 1_700_000_000_000_000)
        let temporaries = scratch.entries().filter { $0.hasPrefix(".r.btsnoop.") && $0.hasSuffix(".tmp") }
        #expect(temporaries.count == 2, "two writers, two different hidden names: \(scratch.entries())")
        #expect(fileKind(path) == nil, "the file gets its name only when complete")
        try second.close()
        try first.close()

        #expect(fileContents(victim) == Array("precious".utf8))
        #expect(fileKind(path + ".partial") == mode_t(S_IFLNK))
        #expect(fileKind(path) == mode_t(S_IFREG))
        #expect(try records(at: path) == [event])
        #expect(scratch.entries() == ["r.btsnoop", "r.btsnoop.partial", "victim"], "no temporary left")
    }

    @Test func aDroppedWriterLeavesNothing() throws {
        let scratch = try Scratch("safe-drop")
        do {
            let writer = try CaptureFileWriter(path: scratch.path + "/r.btsnoop")
            try writer.write(event, received: true, unixMicroseconds: 0)
        }
        #expect(scratch.entries().isEmpty)
    }

    /// `--record` onto a filesystem that fills up: a 64 KiB tmpfs mounted for the test.
    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func aFullDiskIsReportedAtTheFirstFailedWriteAndTheFileEndsAtTheLastWholeRecord() throws {
        let scratch = try Scratch("safe-full")
        try scratch.mountTmpfs("size=64k")
        // Room to give back later.
        let filler = scratch.path + "/filler"
        try Data(repeating: 0xAA, count: 16_384).write(to: URL(fileURLWithPath: filler))

        let path = scratch.path + "/r.btsnoop"
        let writer = try CaptureFileWriter(path: path)
        var reported: [SystemError] = []
        writer.onFailure = { reported.append($0) }
        let big = HCIPacket(type: .event, bytes: [0x3E, 0xFF] + [UInt8](repeating: 0x5A, count: 255))
        var written = 0
        var firstError: SystemError?
        while written < 10_000 {
            do {
                try writer.write(big, received: true, unixMicroseconds: 1_700_000_000_000_000 + Int64(written))
                written += 1
            } catch {
                firstError = error
                break
            }
        }
        let failure = try #require(firstError, "the disk never filled")
        #expect(failure.errno == ENOSPC)
        #expect(writer.failure == failure)
        #expect(reported == [failure], "reported once, at the failing write")
        let whole = writer.bytesWritten

        // Space returns: nothing is written after the torn record.
        try FileManager.default.removeItem(atPath: filler)
        #expect(throws: SystemError.self) { try writer.write(event, received: true, unixMicroseconds: 0) }
        #expect(writer.bytesWritten == whole)
        #expect(reported.count == 1)

        try writer.close()
        var info = stat()
        try #require(stat(path, &info) == 0)
        #expect(Int64(info.st_size) == whole, "cut back to the last whole record")
        let packets = try records(at: path)
        #expect(packets.count == written)
        #expect(packets.allSatisfy { $0 == big })
    }
}
