import Foundation
import Testing
import TestSupport

/// `pirate-hunter check` run for real on this machine: no Bluetooth in the kernel, no sound
/// card, the repository's voices. The right failures, each with its fix.
@Suite struct CheckCommandTests {
    static func find(_ objects: [[String: Any]], _ section: String, _ check: String) -> [String: Any]? {
        objects.first { $0["section"] as? String == section && $0["check"] as? String == check }
    }

    /// This machine and CI's: no AF_BLUETOOTH, no /proc/asound (the VM test covers the others).
    static let bare: Bool = {
        let fd = socket(31, Int32(SOCK_RAW.rawValue), 1)
        if fd >= 0 { close(fd) }
        return fd < 0 && !FileManager.default.fileExists(atPath: "/proc/asound/cards")
    }()

    @Test(.enabled(if: bare))
    func onThisMachineBluetoothAndTheCardAreMissingAndTheVoiceIsThere() async throws {
        let result = try await PirateHunterBinary.run(["check", "--json", "--silent", "--config", "config/hunter.example.json"])
        #expect(result.status == 69, "\(result.stderr)")
        let objects = try jsonObjects(result)
        let kernel = try #require(Self.find(objects, "bluetooth", "kernel"))
        #expect(kernel["status"] as? String == "fail")
        #expect((kernel["fix"] as? String)?.contains("modprobe bluetooth") == true)
        let cards = try #require(Self.find(objects, "audio", "cards"))
        #expect(cards["status"] as? String == "fail" && cards["exit"] as? Int == 69)
        #expect((Self.find(objects, "audio", "device")?["detail"] as? String)?.contains("auto: no sound card at all") == true)
        #expect(Self.find(objects, "audio", "test line")?["status"] as? String == "skip")
        for check in ["espeak-ng", "line pack", "voice file"] {
            #expect(Self.find(objects, "voice", check)?["status"] as? String == "ok", "\(check)")
        }
        #expect(Self.find(objects, "configuration", "file")?["detail"] as? String == "config/hunter.example.json is valid")
        #expect(objects.last?["summary"] as? String == "not ready")
        #expect(objects.filter { $0["status"] as? String == "fail" }.allSatisfy { ($0["fix"] as? String)?.isEmpty == false })
    }

    @Test func aBrokenConfigurationIsNamedAndTheRestStillChecked() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("check-\(UUID().uuidString).json").path
        try Data(#"{"audio": {"volume_db": 99}}"#.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await PirateHunterBinary.run(["check", "--silent", "--config", path])
        let file = try #require(result.stdout.split(separator: "\n").first { $0.contains("[FAIL] file:") })
        #expect(file.contains("volume_db"), "\(result.stdout)")
        #expect(result.stdout.contains("fix: fix what the line names"))
        #expect(result.stdout.contains("[ ok ] espeak-ng"))
        #expect(result.stdout.hasSuffix("(exit \(result.status))\n"))
    }

    @Test func thePlayedTestLineFailsWithTheDeviceNamedWhenThereIsNone() async throws {
        let result = try await PirateHunterBinary.run(["check", "--device", "plughw:CARD=Nope,DEV=0"])
        #expect(result.stdout.contains("[FAIL] test line: cannot open audio device 'plughw:CARD=Nope,DEV=0'"), "\(result.stdout)")
        #expect(result.stdout.contains("fix: name a device from aplay -L"))
    }
}
