import Audio
import FoundationEssentials
import Hunt
import Testing
import TestSupport

@testable import Voice

#if canImport(Glibc)
import Glibc
#endif

private func expectRefused(_ directory: String, saying words: String) {
    do {
        try VoiceStaging.checkPrivate(directory)
        Issue.record("\(directory) was accepted")
    } catch {
        #expect(error.message.contains(words), "\(error.message)")
        #expect(error.message.contains("refused"), "\(error.message)")
    }
}

@Suite struct VoiceStagingTests {
    @Test(.enabled(if: geteuid() == 0, "chown to another uid needs root"))
    func aForeignOwnedDirectoryIsRefused() throws {
        let scratch = try Scratch("vs-foreign")
        let foreign = scratch.path + "/ph-voice-foreign"
        try #require(mkdir(foreign, 0o700) == 0)
        try #require(chown(foreign, 65534, 65534) == 0)
        expectRefused(foreign, saying: "belongs to uid 65534")
    }

    @Test func aSymlinkAWideOpenDirectoryOrAFileIsRefusedAndOurOwnIsTaken() throws {
        let scratch = try Scratch("vs-kinds")
        let ours = scratch.path + "/ours"
        try #require(mkdir(ours, 0o700) == 0)
        try VoiceStaging.checkPrivate(ours)
        let link = scratch.path + "/link"
        try #require(symlink(ours, link) == 0)
        expectRefused(link, saying: "symbolic link")
        let open = scratch.path + "/open"
        try #require(mkdir(open, 0o700) == 0 && chmod(open, 0o777) == 0)
        expectRefused(open, saying: "mode 777")
        let file = scratch.path + "/file"
        try #require(FileManager.default.createFile(atPath: file, contents: Data()))
        expectRefused(file, saying: "not a directory")
    }

    /// What an attacker could do to the old fixed `/tmp/ph-voice-<uid>`: pre-create it as
    /// their own directory holding their voice, or symlink it. A name that is taken is
    /// never used, whoever made it; another random one is drawn.
    @Test func aPlantedDirectoryOrSymlinkUnderTheChosenNameIsNeverUsed() throws {
        let scratch = try Scratch("vs-plant")
        let attacker = scratch.path + "/attacker"
        try #require(mkdir(attacker, 0o777) == 0 && chmod(attacker, 0o777) == 0)
        try #require(FileManager.default.createFile(atPath: attacker + "/voice", contents: Data("name evil\n".utf8)))
        try #require(symlink(attacker, scratch.path + "/ph-voice-planted1") == 0)
        try #require(mkdir(scratch.path + "/ph-voice-planted2", 0o700) == 0)
        if geteuid() == 0 { try #require(chown(scratch.path + "/ph-voice-planted2", 65534, 65534) == 0) }
        var names = ["ph-voice-planted1", "ph-voice-planted2", "ph-voice-fresh"].makeIterator()
        let staging = try VoiceStaging.create(in: scratch.path) { names.next() ?? "ph-voice-spare" }
        #expect(staging.directory == scratch.path + "/ph-voice-fresh")
        try staging.stage(Array("name ours\n".utf8), from: "test")
        #expect(FileManager.default.contents(atPath: attacker + "/voice") == Data("name evil\n".utf8))
        #expect(scratch.entries("/attacker") == ["voice"])
        #expect(scratch.entries("/ph-voice-planted2").isEmpty)
        staging.remove()
        #expect(scratch.entries() == ["attacker", "ph-voice-planted1", "ph-voice-planted2"])

        // Only taken names: refused, nothing made.
        #expect(throws: VoiceError.self) { try VoiceStaging.create(in: scratch.path) { "ph-voice-planted1" } }
        #expect(scratch.entries() == ["attacker", "ph-voice-planted1", "ph-voice-planted2"])
    }

    @Test func aLongMixedCasePathIsStagedShortLowercasePrivateAndRemovedAfter() throws {
        let scratch = try Scratch("vs-stage")
        let source = scratch.path + "/A-Rather-Long-Directory-Name-With-Capitals/Pirate"
        try FileManager.default.createDirectory(
            atPath: scratch.path + "/A-Rather-Long-Directory-Name-With-Capitals", withIntermediateDirectories: true)
        let voice = Data("name pirate\nlanguage en\n".utf8)
        try #require(FileManager.default.createFile(atPath: source, contents: voice))
        let parent = scratch.path + "/p"
        try #require(mkdir(parent, 0o755) == 0)

        let seen = try VoiceStaging.withUsablePath(for: source, parent: parent) { (usable: String) throws(VoiceError) -> String in
            usable
        }
        #expect(seen.hasPrefix(parent + "/ph-voice-"))
        #expect(seen.utf8.count <= 59 && seen == seen.lowercased())
        #expect(scratch.entries("/p").isEmpty, "the copy and its directory are gone")

        var contents: Data?
        var mode: mode_t = 0
        do {
            _ = try VoiceStaging.withUsablePath(for: source, parent: parent) { (usable: String) throws(VoiceError) -> Void in
                contents = FileManager.default.contents(atPath: usable)
                var info = stat()
                _ = lstat(LinePack.parentDirectory(of: usable), &info)
                mode = info.st_mode & 0o7777
                throw VoiceError("the body failed")
            }
        } catch {
            #expect(error.message == "the body failed")
        }
        #expect(contents == voice)
        #expect(mode == 0o700)
        #expect(scratch.entries("/p").isEmpty, "removed when the body throws too")

        // A parent eSpeak NG could not take is an error, and leaves nothing.
        let long = scratch.path + "/A-Parent-Far-Too-Long-For-eSpeak-NG"
        try #require(mkdir(long, 0o755) == 0)
        #expect(throws: VoiceError.self) {
            try VoiceStaging.withUsablePath(for: source, parent: long) { (u: String) throws(VoiceError) -> String in u }
        }
        #expect(scratch.entries("/A-Parent-Far-Too-Long-For-eSpeak-NG").isEmpty)

        // A voice file that cannot be read says why, in words.
        do {
            _ = try VoiceStaging.withUsablePath(for: scratch.path + "/Missing/Voice", parent: parent) { (u: String) throws(VoiceError) -> String in u }
            Issue.record("staged a missing file")
        } catch {
            #expect(error.message == scratch.path + "/Missing/Voice: cannot read voice file: No such file or directory")
            #expect(error.kind == .missingFile)
        }

        // A short lowercase path is used as it is.
        let short = try VoiceStaging.withUsablePath(for: "/tmp/x/voice", parent: parent) { (u: String) throws(VoiceError) -> String in u }
        #expect(short == "/tmp/x/voice")
    }
}

/// A line pack that cannot be read says why and whose fault it is: a missing file is 66, a
/// file the service may not read 77 (it said "cannot read line pack", 66, either way), and a
/// FIFO in its place is refused at once instead of blocking the start.
@Suite struct LinePackReadTests {
    @Test func anUnreadablePackSaysWhyAndAFIFOIsNotWaitedOn() throws {
        let scratch = try Scratch("pack-read")
        let missing = scratch.path + "/none.json"
        #expect(throws: VoiceError("\(missing): cannot read line pack: No such file or directory", kind: .missingFile)) {
            _ = try LinePack.load(path: missing)
        }
        let fifo = scratch.path + "/fifo.json"
        try #require(mkfifo(fifo, 0o600) == 0)
        #expect(throws: VoiceError("\(fifo): cannot read line pack: not a regular file", kind: .missingFile)) {
            _ = try LinePack.load(path: fifo)
        }
        // Tests run as root, whom permissions do not stop: the mapping itself.
        #expect(VoiceError.unreadable("line pack", FileError(path: "p", action: "read", errno: EACCES)).kind == .noPermission)
        #expect(VoiceError.unreadable("voice file", FileError(path: "p", action: "read", errno: EACCES)).message
                    == "p: cannot read voice file: Permission denied")
    }
}
