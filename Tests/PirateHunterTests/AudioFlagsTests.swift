import Audio
import Foundation
import Glibc
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

    /// `hunt --out` on a disk that fills up (a 200 KiB tmpfs of a mount namespace of its own:
    /// the hunt's minute takes 2.6 MB): exit 74, one line naming the file, and no WAV left.
    /// ALSA's file plugin ignores its write errors and heads what it wrote: the cut WAV was put
    /// in place as whole, exit 0. The same hunt on room enough is whole.
    @Test func aWAVCutShortByAFullDiskIsNotPutInPlace() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let mount = directory + "/small"
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: false)
        func hunt(size: String, seconds: Int) async throws -> CommandResult {
            // Root (CI, and its trixie chroot, where no user namespace may be made) needs none.
            // The namespace's mounts are made private from inside (in a chroot, whose root is
            // no mount point, unshare cannot do it itself; its parent's are private there).
            try await Program.run("/usr/bin/unshare", [geteuid() == 0 ? "-m" : "-rm", "--propagation", "unchanged", "sh", "-c",
                "mount --make-rprivate / 2>/dev/null; mount -t tmpfs -o size=\(size) none \"$0\" || exit 99; \"$1\" hunt --hci simulator --virtual-time --duration \(seconds) --out \"$0/hunt.wav\" --cache-dir \"$2\" >/dev/null; status=$?; ls -A \"$0\" >&2; exit $status",
                mount, PirateHunterBinary.url.path, PirateHunterBinary.lineCache], timeout: 120)
        }
        let full = try await hunt(size: "200k", seconds: 60)
        try #require(full.status != 99, "no tmpfs in a mount namespace here: \(full.stderr)")
        #expect(full.status == 74, "\(full.stderr)")
        #expect(full.stderr.contains("\(mount)/hunt.wav: cannot write: the disk is full"), "\(full.stderr)")
        #expect(!full.stderr.contains("hunt.wav\n"), "a WAV was left: \(full.stderr)")
        let roomy = try await hunt(size: "4m", seconds: 10)
        #expect(roomy.status == 0, "\(roomy.stderr)")
        #expect(roomy.stderr.hasSuffix("hunt.wav\n"), "\(roomy.stderr)")
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
