import Audio
import FoundationEssentials
import Hunt
import Testing
import TestSupport

@testable import Voice

#if canImport(Glibc)
import Glibc
#endif

@Suite struct LineCacheFailureTests {
    private func configuration(cache: String) -> VoiceConfiguration {
        VoiceConfiguration(voicesDirectory: Repository.voicesDirectory, language: "ja", cacheDirectory: cache)
    }

    private func expectSpeaks(_ voice: PirateVoice) {
        for event in LineEvent.allCases where !event.isComposed {
            #expect(!voice.line(event, index: 0).audio.samples.isEmpty, "\(event)")
        }
    }

    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func aReadOnlyCacheIsOneWarningWithTheReasonAndTheVoiceStillSpeaks() throws {
        let scratch = try Scratch("vs-ro")
        try scratch.mountTmpfs("size=64k,mode=0755", readOnly: true)
        let voice = try PirateVoice.load(configuration(cache: scratch.path))
        #expect(voice.report.warnings.count == 1)
        #expect(voice.report.warnings.first?.contains("Read-only file system") == true, "\(voice.report.warnings)")
        #expect(voice.report.warnings.first?.contains(scratch.path) == true)
        #expect(voice.report.synthesized == voice.report.lines)
        expectSpeaks(voice)
    }

    /// A cache filled earlier and then made read-only (a read-only root) is still read.
    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func aReadOnlyCacheFilledEarlierIsStillReadWithOneWarning() throws {
        let scratch = try Scratch("vs-rofull")
        try scratch.mountTmpfs("size=16m,mode=0755")
        let cold = try PirateVoice.load(configuration(cache: scratch.path))
        #expect(cold.report.warnings.isEmpty)
        try #require(mount("tmpfs", scratch.path, "tmpfs", UInt(MS_REMOUNT | MS_RDONLY), "size=16m,mode=0755") == 0)
        let warm = try PirateVoice.load(configuration(cache: scratch.path))
        #expect(warm.report.fromCache == warm.report.lines)
        #expect(warm.report.warnings.count == 1)
        #expect(warm.report.warnings.first?.contains("Read-only file system") == true, "\(warm.report.warnings)")
        expectSpeaks(warm)
    }

    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func aFullCacheIsOneWarningWithTheReasonAndTheVoiceStillSpeaks() throws {
        let scratch = try Scratch("vs-full")
        try scratch.mountTmpfs("size=16k,mode=0755")
        let voice = try PirateVoice.load(configuration(cache: scratch.path))
        #expect(voice.report.cacheWriteFailures > 0)
        #expect(voice.report.warnings.count == 1, "\(voice.report.warnings)")
        #expect(voice.report.warnings.first?.contains("No space left on device") == true, "\(voice.report.warnings)")
        #expect(voice.report.warnings.first?.contains("\(voice.report.cacheWriteFailures) of") == true)
        #expect(!scratch.entries().contains { $0.hasSuffix(".tmp") }, "no temporary left")
        expectSpeaks(voice)
    }

    @Test func aCacheDirectoryThatCannotBeMadeIsOneWarning() throws {
        let scratch = try Scratch("vs-notdir")
        try #require(FileManager.default.createFile(atPath: scratch.path + "/file", contents: Data()))
        let voice = try PirateVoice.load(configuration(cache: scratch.path + "/file/cache"))
        #expect(voice.report.warnings.count == 1)
        #expect(voice.report.warnings.first?.contains("Not a directory") == true, "\(voice.report.warnings)")
        expectSpeaks(voice)
    }

    /// A symlink planted at a cache file's name is neither read, followed nor replaced:
    /// here each points at a valid cache file elsewhere (what a poisoned cache would be).
    @Test func aPlantedSymlinkInTheCacheIsNeitherReadNorWrittenThrough() throws {
        let scratch = try Scratch("vs-cachelink")
        let first = scratch.path + "/first"
        _ = try PirateVoice.load(configuration(cache: first))
        // The lines (.pcm) and the voices' rates at the child's pace (.pace).
        let names = scratch.entries("/first").filter { $0.hasSuffix(".pcm") || $0.hasSuffix(".pace") }
        let lines = names.count { $0.hasSuffix(".pcm") }
        try #require(lines > 0 && lines < names.count)
        let originals = names.map { FileManager.default.contents(atPath: first + "/" + $0) }
        let second = scratch.path + "/second"
        try #require(mkdir(second, 0o755) == 0)
        for name in names { try #require(symlink(first + "/" + name, second + "/" + name) == 0) }

        let voice = try PirateVoice.load(configuration(cache: second))
        #expect(voice.report.fromCache == 0, "a symlinked cache file is a miss")
        #expect(voice.report.cacheWriteFailures == lines)
        #expect(voice.report.warnings.count == 1)
        #expect(voice.report.warnings.first?.contains("symbolic link") == true, "\(voice.report.warnings)")
        #expect(names.map { FileManager.default.contents(atPath: first + "/" + $0) } == originals)
        #expect(scratch.entries("/second") == names.sorted())
        expectSpeaks(voice)
    }

    /// Cache file names are predictable: a directory others can write to is not trusted.
    @Test(.enabled(if: geteuid() == 0, "chown to another uid needs root"))
    func aForeignOwnedOrWorldWritableCacheIsNotUsed() throws {
        let scratch = try Scratch("vs-cacheowner")
        let cache = scratch.path + "/cache"
        let first = try PirateVoice.load(configuration(cache: cache))
        #expect(first.report.warnings.isEmpty)
        try #require(chown(cache, 65534, 65534) == 0)
        let foreign = try PirateVoice.load(configuration(cache: cache))
        #expect(foreign.report.fromCache == 0, "its files are not read")
        #expect(foreign.report.warnings.count == 1)
        #expect(foreign.report.warnings.first?.contains("belongs to uid 65534") == true, "\(foreign.report.warnings)")
        try #require(chown(cache, 0, 0) == 0 && chmod(cache, 0o1777) == 0)
        let open = try PirateVoice.load(configuration(cache: cache))
        #expect(open.report.fromCache == 0)
        #expect(open.report.warnings.first?.contains("writable by everyone (mode 1777)") == true, "\(open.report.warnings)")
        expectSpeaks(open)
    }
}
