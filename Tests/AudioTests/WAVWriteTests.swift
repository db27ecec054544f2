import Audio
import Foundation
import Glibc
import Testing
import TestSupport

private let tone = PCMBuffer(sampleRate: 22050, channels: 1, samples: [0, 100, -100, 32767, -32768])

@Suite struct WAVWriteTests {
    /// `say x --out /tmp/nodir/q.wav` printed a raw CocoaError dump.
    @Test func aMissingDirectoryIsOneLineWithErrnosText() throws {
        do {
            try WAVFile.write(tone, to: "/tmp/ph-no-such-dir-\(getpid())/q.wav")
            Issue.record("wrote into a missing directory")
        } catch {
            #expect(error.errno == ENOENT)
            #expect(error.message == "/tmp/ph-no-such-dir-\(getpid())/q.wav: cannot write: No such file or directory")
            #expect(!error.message.contains("CocoaError"))
            #expect(!error.message.contains(".tmp"), "names the user's path, not the temporary")
        }
    }

    @Test func aWAVIsWrittenWholeReplacingAFileAndLeavesNoTemporary() throws {
        let scratch = try Scratch("wav-ok")
        let directory = scratch.path
        let path = directory + "/q.wav"
        try WAVFile.write(PCMBuffer(sampleRate: 8000, channels: 1, samples: [1]), to: path)
        try WAVFile.write(tone, to: path)
        #expect(try WAVFile.read(path: path).samples == tone.samples)
        #expect(scratch.entries() == ["q.wav"])
    }

    @Test func aDirectoryFIFOSymlinkOrDevNullIsRefusedAndLeftAsItWas() throws {
        let scratch = try Scratch("wav-refuse")
        let directory = scratch.path
        let fifo = directory + "/fifo.wav"
        try #require(mkfifo(fifo, 0o644) == 0)
        let sub = directory + "/dir.wav"
        try #require(mkdir(sub, 0o755) == 0)
        let victim = directory + "/victim"
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        let link = directory + "/link.wav"
        try #require(symlink(victim, link) == 0)

        for (path, code, words) in [
            (fifo, EEXIST, "FIFO"), (sub, EISDIR, "Is a directory"), (link, EEXIST, "symbolic link"),
            ("/dev/null", EEXIST, "character device"),
        ] {
            do {
                try WAVFile.write(tone, to: path)
                Issue.record("\(path) was replaced")
            } catch {
                #expect(error.errno == code, "\(path)")
                #expect(error.message.hasPrefix("\(path): cannot write: "), "\(error.message)")
                #expect(error.message.contains(words), "\(error.message)")
            }
        }
        var info = stat()
        #expect(lstat("/dev/null", &info) == 0 && info.st_mode & mode_t(S_IFMT) == mode_t(S_IFCHR))
        #expect(lstat(fifo, &info) == 0 && info.st_mode & mode_t(S_IFMT) == mode_t(S_IFIFO))
        #expect(lstat(link, &info) == 0 && info.st_mode & mode_t(S_IFMT) == mode_t(S_IFLNK))
        #expect(FileManager.default.contents(atPath: victim) == Data("precious".utf8))
        #expect(scratch.entries() == ["dir.wav", "fifo.wav", "link.wav", "victim"])
        #expect(scratch.entries("/dir.wav").isEmpty)
    }

    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func aFullDiskIsReportedAndLeavesNothing() throws {
        let scratch = try Scratch("wav-full")
        let directory = scratch.path
        try scratch.mountTmpfs("size=16k")
        let big = PCMBuffer(sampleRate: 22050, channels: 1, samples: [Int16](repeating: 7, count: 22050))
        do {
            try WAVFile.write(big, to: directory + "/big.wav")
            Issue.record("44 KB fit in 16 KB")
        } catch {
            #expect(error.errno == ENOSPC)
            #expect(error.message.contains("No space left on device"))
        }
        #expect(scratch.entries().isEmpty)
    }
}

@Suite struct WAVReadErrorTests {
    @Test func aMissingFileIsOneLineWithErrnosText() {
        do {
            _ = try WAVFile.read(path: "/tmp/ph-no-such-\(getpid()).wav")
            Issue.record("read a missing file")
        } catch {
            #expect(error.errno == ENOENT)
            #expect(error.message == "/tmp/ph-no-such-\(getpid()).wav: cannot read: No such file or directory")
        }
    }

    /// Opened non-blocking and checked with fstat: a FIFO is refused, not waited on forever.
    @Test func aFIFOIsRefusedWithoutBlocking() throws {
        let scratch = try Scratch("wav-readfifo")
        let directory = scratch.path
        let fifo = directory + "/arrr.wav"
        try #require(mkfifo(fifo, 0o644) == 0)
        do {
            _ = try WAVFile.read(path: fifo)
            Issue.record("read a FIFO")
        } catch {
            #expect(error.message == "\(fifo): cannot read: not a regular file")
        }
        #expect(throws: WAVError.self) { try WAVFile.read(path: scratch.path) }
    }
}
