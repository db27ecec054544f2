import Audio
import FoundationEssentials
import Hunt
import Testing

@testable import Voice

#if canImport(Glibc)
import Glibc
#endif

@Suite struct LineCacheFailureTests {
    private func configuration(cache: String) -> VoiceConfiguration {
        VoiceConfiguration(voicesDirectory: voicesDirectory, language: "ja", cacheDirectory: cache)
    }

    private func expectSpeaks(_ voice: PirateVoice) {
        for event in LineEvent.allCases {
            #expect(!voice.line(event, index: 0).audio.samples.isEmpty, "\(event)")
        }
    }

    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func aReadOnlyCacheIsOneWarningWithTheReasonAndTheVoiceStillSpeaks() throws {
        let scratch = try Scratch("ro")
        try scratch.mountTmpfs("size=64k", readOnly: true)
        let voice = try PirateVoice.load(configuration(cache: scratch.path))
        #expect(voice.report.warnings.count == 1)
        #expect(voice.report.warnings.first?.contains("Read-only file system") == true, "\(voice.report.warnings)")
        #expect(voice.report.warnings.first?.contains(scratch.path) == true)
        #expect(voice.report.synthesized == voice.report.lines)
        expectSpeaks(voice)
    }

    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func aFullCacheIsOneWarningWithTheReasonAndTheVoiceStillSpeaks() throws {
        let scratch = try Scratch("full")
        try scratch.mountTmpfs("size=16k")
        let voice = try PirateVoice.load(configuration(cache: scratch.path))
        #expect(voice.report.cacheWriteFailures > 0)
        #expect(voice.report.warnings.count == 1, "\(voice.report.warnings)")
        #expect(voice.report.warnings.first?.contains("No space left on device") == true, "\(voice.report.warnings)")
        #expect(voice.report.warnings.first?.contains("\(voice.report.cacheWriteFailures) of") == true)
        #expect(!scratch.entries().contains { $0.hasSuffix(".tmp") }, "no temporary left")
        expectSpeaks(voice)
    }

    @Test func aCacheDirectoryThatCannotBeMadeIsOneWarning() throws {
        let scratch = try Scratch("notdir")
        try #require(FileManager.default.createFile(atPath: scratch.path + "/file", contents: Data()))
        let voice = try PirateVoice.load(configuration(cache: scratch.path + "/file/cache"))
        #expect(voice.report.warnings.count == 1)
        #expect(voice.report.warnings.first?.contains("Not a directory") == true, "\(voice.report.warnings)")
        expectSpeaks(voice)
    }

    /// A symlink planted at a cache file's name is neither read, followed nor replaced:
    /// here each points at a valid cache file elsewhere (what a poisoned cache would be).
    @Test func aPlantedSymlinkInTheCacheIsNeitherReadNorWrittenThrough() throws {
        let scratch = try Scratch("cachelink")
        let first = scratch.path + "/first"
        _ = try PirateVoice.load(configuration(cache: first))
        let names = scratch.entries("/first").filter { $0.hasSuffix(".pcm") }
        try #require(!names.isEmpty)
        let originals = names.map { FileManager.default.contents(atPath: first + "/" + $0) }
        let second = scratch.path + "/second"
        try #require(mkdir(second, 0o755) == 0)
        for name in names { try #require(symlink(first + "/" + name, second + "/" + name) == 0) }

        let voice = try PirateVoice.load(configuration(cache: second))
        #expect(voice.report.fromCache == 0, "a symlinked cache file is a miss")
        #expect(voice.report.cacheWriteFailures == names.count)
        #expect(voice.report.warnings.count == 1)
        #expect(voice.report.warnings.first?.contains("symbolic link") == true, "\(voice.report.warnings)")
        #expect(names.map { FileManager.default.contents(atPath: first + "/" + $0) } == originals)
        #expect(scratch.entries("/second") == names.sorted())
        expectSpeaks(voice)
    }
}
