import Audio
import Foundation
import Testing
import TestSupport

/// `say --volume --config`, `hunt --out`, `--device file:x.wav`: what a parent tries when
/// testing the speaker, each through the real binary.
@Suite struct AudioFlagsTests {
    static func scratch() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("audio-flags-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    static func peak(_ path: String) throws -> Int {
        try WAVFile.read(path: path).samples.map { abs(Int($0)) }.max() ?? 0
    }

    @Test func sayTakesTheVolumeAndTheConfigurationsVoice() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let loud = directory + "/loud.wav", quiet = directory + "/quiet.wav", fromFile = directory + "/file.wav"
        for (path, extra) in [(loud, [String]()), (quiet, ["--volume", "-12"])] {
            let result = try await PirateHunterBinary.run(["say", "Ahoy there", "--out", path] + extra, timeout: 60)
            #expect(result.status == 0, "\(result.stderr)")
        }
        let ratio = Double(try Self.peak(quiet)) / Double(try Self.peak(loud))
        #expect(abs(ratio - 0.251) < 0.02, "peak ratio \(ratio) at -12 dB")
        // The file's volume and language, as the hunt would use them.
        let config = directory + "/hunter.json"
        try Data(#"{"audio": {"volume_db": -12}, "voice": {"language": "ja"}}"#.utf8).write(to: URL(fileURLWithPath: config))
        let result = try await PirateHunterBinary.run(["say", "--line", "startup", "--config", config, "--out", fromFile], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Self.peak(fromFile) < 12_000)
        let bad = try await PirateHunterBinary.run(["say", "x", "--config", directory + "/nowhere.json"], timeout: 60)
        #expect(bad.status == 66 && bad.stderr.contains("no such configuration file"), "\(bad.stderr)")
        let wrong = try await PirateHunterBinary.run(["say", "x", "--volume", "40"], timeout: 60)
        #expect(wrong.status == 64 && wrong.stderr.contains("--volume"), "\(wrong.stderr)")
    }

    @Test func huntWritesWhatWouldBeHeardToAWAV() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let out = directory + "/hunt.wav"
        let result = try await PirateHunterBinary.run(
            ["hunt", "--hci", "simulator", "--virtual-time", "--duration", "8", "--out", out, "--cache-dir", PirateHunterBinary.lineCache], timeout: 90)
        #expect(result.status == 0, "\(result.stderr)")
        let heard = try WAVFile.read(path: out)
        #expect(heard.durationSeconds > 5, "\(heard.durationSeconds) s")
        #expect(try Self.peak(out) > 3000)  // the start-up line is in it
        #expect(FileManager.default.subpathsOrEmpty(directory) == ["hunt.wav"])  // no temporary left
        let both = try await PirateHunterBinary.run(["hunt", "--hci", "simulator", "--out", out, "--device", "null"], timeout: 30)
        #expect(both.status == 64, "\(both.stderr)")
    }

    @Test func aFileDeviceNamedLikeAWAVIsAWAV() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/typed.wav"
        let result = try await PirateHunterBinary.run(["say", "Ahoy", "--device", "file:" + path], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let heard = try WAVFile.read(path: path)
        #expect(heard.durationSeconds > 0.3)
    }
}

extension FileManager {
    fileprivate func subpathsOrEmpty(_ path: String) -> [String] { ((try? contentsOfDirectory(atPath: path)) ?? []).sorted() }
}
