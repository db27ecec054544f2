import Foundation
import Glibc
import POSIX
import Testing
import TestSupport

@Suite struct AtomicFileTests {
    @Test func aRegularFileIsReplacedWithTheGivenModeAndNoTemporaryIsLeft() throws {
        let scratch = try Scratch("posix-replace")
        let path = scratch.path + "/reward.svg"
        try AtomicFile.write(Array("one".utf8), to: path)
        try AtomicFile.write(Array("two".utf8), to: path, mode: 0o600)
        #expect(fileContents(path) == Array("two".utf8))
        var info = stat()
        try #require(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600 & ~umask(umask(0)))
        #expect(scratch.entries() == ["reward.svg"])
    }

    /// A settings file replaced (the parent's page, `pair`) keeps its mode exactly, whatever
    /// the writer's umask (the service's 0077 made 0644 settings 0600), and, replaced by
    /// root (`sudo pirate-hunter pair`), its owner and group (the service's user, who must
    /// read it). A new file gets the mode asked under the umask.
    @Test func aReplacedFileKeepsItsModeAndForRootItsOwner() throws {
        let scratch = try Scratch("posix-keep")
        let path = scratch.path + "/hunter.json"
        try AtomicFile.write(Array("{}".utf8), to: path)
        // A mode no umask of 022 or more would leave: only the copied bits give it back.
        try #require(chmod(path, 0o666) == 0)
        let root = geteuid() == 0
        if root { try #require(chown(path, 4321, 4322) == 0) }
        try AtomicFile.replace(Array(#"{"a": 1}"#.utf8), at: path)
        #expect(fileContents(path) == Array(#"{"a": 1}"#.utf8))
        var info = stat()
        try #require(stat(path, &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o666)
        if root { #expect(info.st_uid == 4321 && info.st_gid == 4322) }
        #expect(scratch.entries() == ["hunter.json"])
        let fresh = scratch.path + "/new.json"
        try AtomicFile.replace([1], at: fresh, newFileMode: 0o640)
        try #require(stat(fresh, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o640 & ~umask(umask(0)))
    }

    @Test func aMissingDirectoryIsENOENTNamingTheTarget() throws {
        let scratch = try Scratch("posix-missing")
        do {
            try AtomicFile.write([1], to: scratch.path + "/missing/reward.svg")
            Issue.record("wrote into a missing directory")
        } catch {
            #expect(error.errno == ENOENT)
            #expect(error.description.contains("/missing/reward.svg"), "names the user's path: \(error)")
            #expect(!error.description.contains(".tmp"))
        }
        do {
            try AtomicFile.write([1], to: "")
            Issue.record("wrote to an empty path")
        } catch {
            #expect(error.errno == ENOENT)
        }
    }

    /// A directory, a FIFO, a symlink and a device: refused before anything is written,
    /// left as they were, no temporary beside them.
    @Test func whatIsNotARegularFileIsRefusedAndLeftAsItWas() throws {
        let scratch = try Scratch("posix-refuse")
        let directory = scratch.path + "/out"
        try #require(mkdir(directory, 0o755) == 0)
        let fifo = scratch.path + "/fifo"
        try #require(mkfifo(fifo, 0o644) == 0)
        let victim = scratch.path + "/victim"
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        let link = scratch.path + "/link"
        try #require(symlink(victim, link) == 0)
        let dangling = scratch.path + "/dangling"
        try #require(symlink(scratch.path + "/nowhere", dangling) == 0)

        for (path, code, words, was) in [
            (directory, EISDIR, nil, mode_t(S_IFDIR)), (fifo, EEXIST, "is a FIFO", mode_t(S_IFIFO)),
            (link, EEXIST, "is a symbolic link", mode_t(S_IFLNK)), (dangling, EEXIST, "is a symbolic link", mode_t(S_IFLNK)),
            ("/dev/null", EEXIST, "is a character device", mode_t(S_IFCHR)),
        ] as [(String, Int32, String?, mode_t)] {
            do {
                try AtomicFile.write([1, 2, 3], to: path)
                Issue.record("\(path) was replaced")
            } catch {
                #expect(error.errno == code, "\(path)")
                if let words { #expect(error.reason == "\(words), not a regular file: refusing to replace it") }
                #expect(error.description.hasPrefix("open \(path): "))
            }
            #expect(fileKind(path) == was, "\(path) is as it was")
        }
        #expect(fileContents(victim) == Array("precious".utf8))
        #expect(fileKind(scratch.path + "/nowhere") == nil, "nothing written through the dangling link")
        #expect(scratch.entries() == ["dangling", "fifo", "link", "out", "victim"], "no temporary left")
        #expect((try FileManager.default.contentsOfDirectory(atPath: directory)).isEmpty)
        #expect(try !FileManager.default.contentsOfDirectory(atPath: "/dev").contains { $0.hasPrefix(".null.") })
    }

    /// The target checked again at the rename: what became a directory or a symlink while
    /// the file was written is still not replaced, and the temporary goes.
    @Test func aTargetThatChangedBeforeTheRenameIsRefusedThere() throws {
        let scratch = try Scratch("posix-race")
        let path = scratch.path + "/r.btsnoop"
        let staged = try AtomicFile.Staged(for: path)
        try staged.write([1, 2, 3])
        #expect(scratch.temporaries().count == 1)
        try #require(mkdir(path, 0o755) == 0)
        #expect(throws: SystemError("open \(path)", errno: EISDIR)) { try staged.commit() }
        #expect(fileKind(path) == mode_t(S_IFDIR))
        #expect(scratch.entries() == ["r.btsnoop"])

        let other = scratch.path + "/other"
        let second = try AtomicFile.Staged(for: other)
        try #require(symlink(scratch.path + "/nowhere", other) == 0)
        #expect(throws: SystemError.self) { try second.commit() }
        #expect(fileKind(other) == mode_t(S_IFLNK))
        #expect(scratch.entries() == ["other", "r.btsnoop"])
    }

    @Test func stagedNamesAreHiddenRandomAndBesideTheTarget() throws {
        let scratch = try Scratch("posix-names")
        let path = scratch.path + "/r.btsnoop"
        let first = try AtomicFile.Staged(for: path)
        let second = try AtomicFile.Staged(for: path)
        #expect(first.temporary != second.temporary)
        for staged in [first, second] {
            #expect(staged.temporary.hasPrefix(scratch.path + "/.r.btsnoop."))
            #expect(staged.temporary.hasSuffix(".tmp"))
        }
        #expect(fileKind(path) == nil, "the file gets its name only when complete")
        try first.write(Array("first".utf8))
        try second.write(Array("second".utf8))
        second.discard()
        #expect(scratch.temporaries() == [String(first.temporary.split(separator: "/").last ?? "")])
        try first.commit()
        #expect(fileContents(path) == Array("first".utf8))
        #expect(scratch.entries() == ["r.btsnoop"])
    }

    /// A planted symlink at a would-be temporary name is never followed: the name is
    /// random and opened O_EXCL | O_NOFOLLOW (the old `FILE.partial` was neither).
    @Test func aPlantedPartialSymlinkIsLeftAlone() throws {
        let scratch = try Scratch("posix-plant")
        let victim = scratch.path + "/victim"
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        let path = scratch.path + "/reward.svg"
        try #require(symlink(victim, path + ".partial") == 0)
        try AtomicFile.write(Array("svg".utf8), to: path)
        #expect(fileContents(victim) == Array("precious".utf8))
        #expect(fileContents(path) == Array("svg".utf8))
        #expect(scratch.entries() == ["reward.svg", "reward.svg.partial", "victim"])
    }

    @Test func aTemporaryFilledByAnotherWriterIsPutInPlace() throws {
        let scratch = try Scratch("posix-other")
        let path = scratch.path + "/demo.wav"
        let staged = try AtomicFile.StagedForAnotherWriter(for: path)
        #expect(fileKind(staged.temporary) == mode_t(S_IFREG))
        try Data("RIFF".utf8).write(to: URL(fileURLWithPath: staged.temporary))
        try staged.commit()
        #expect(fileContents(path) == Array("RIFF".utf8))
        #expect(scratch.entries() == ["demo.wav"])

        let dropped = try AtomicFile.StagedForAnotherWriter(for: path)
        dropped.discard()
        #expect(scratch.entries() == ["demo.wav"])
    }

    /// The other writer's temporary swapped for a symlink or a FIFO is refused (ELOOP, EINVAL),
    /// without following the link or hanging on the FIFO, and removed; the target stays.
    @Test func aSwappedTemporaryIsRefusedAndRemoved() throws {
        let scratch = try Scratch("posix-swap")
        let path = scratch.path + "/demo.wav"
        try Data("old".utf8).write(to: URL(fileURLWithPath: path))
        let victim = scratch.path + "/victim"
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))

        let linked = try AtomicFile.StagedForAnotherWriter(for: path)
        try #require(unlink(linked.temporary) == 0 && symlink(victim, linked.temporary) == 0)
        #expect(throws: SystemError("open \(path)", errno: ELOOP)) { try linked.commit() }

        let piped = try AtomicFile.StagedForAnotherWriter(for: path)
        try #require(unlink(piped.temporary) == 0 && mkfifo(piped.temporary, 0o600) == 0)
        #expect(throws: SystemError("open \(path)", errno: EINVAL)) { try piped.commit() }

        #expect(fileContents(path) == Array("old".utf8))
        #expect(fileContents(victim) == Array("precious".utf8))
        #expect(scratch.entries() == ["demo.wav", "victim"])
    }
}
