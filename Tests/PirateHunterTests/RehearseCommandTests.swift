import Audio
import Foundation
import Testing
import TestSupport

/// `rehearse`: the parent's own trail, heard before the party, through the real pipeline.
@Suite struct RehearseCommandTests {
    @Test func theParentsTrailIsWalkedStepByStepIntoAWAV() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rehearse-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        let config = directory + "/hunter.json", out = directory + "/trail.wav"
        try Data(#"""
            {"hunt": {"trail": [
              {"region": "\#(uuid):1:1", "clue": "Look under the big oak tree."},
              {"region": "\#(uuid):1:2", "clue": "Now find the chest by the garden gate.", "reward": "Look under the bed"},
              {"region": "\#(uuid):7", "clue": "The last one is in the shed."}]}}
            """#.utf8).write(to: URL(fileURLWithPath: config))
        let result = try await PirateHunterBinary.run(
            ["rehearse", "--config", config, "--out", out, "--json", "--cache-dir", PirateHunterBinary.lineCache], timeout: 120)
        #expect(result.status == 0, "\(result.stderr)")
        let said = try jsonObjects(result).filter { $0["event"] as? String == "say" }
        let clues = said.filter { $0["event_name"] as? String == "clue" }.compactMap { $0["text"] as? String }
        #expect(clues.count == 3, "\(clues)")
        for (clue, words) in zip(clues, ["big oak tree", "garden gate", "in the shed"]) { #expect(clue.contains(words)) }
        #expect(said.filter { $0["event_name"] as? String == "treasure-found" }.count == 3)
        #expect(said.last?["event_name"] as? String == "finale")
        #expect(try jsonObjects(result).contains { $0["event"] as? String == "reward" && $0["reward"] as? String == "Look under the bed" })
        let heard = try WAVFile.read(path: out)
        #expect(heard.durationSeconds > 90, "\(heard.durationSeconds) s")

        // What hunt refuses, rehearse refuses the same way.
        try Data(#"{"hunt": {"trail": [{"region": "\#(uuid):1:1", "clue_wav": "missing.wav"}]}}"#.utf8).write(to: URL(fileURLWithPath: config))
        let refused = try await PirateHunterBinary.run(["rehearse", "--config", config, "--out", out], timeout: 60)
        #expect(refused.status == 66 && refused.stderr.contains("hunt.trail[0].clue_wav: \(directory)/missing.wav: cannot read"), "\(refused.stderr)")
    }
}
