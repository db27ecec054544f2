import Audio
import Foundation
import Hunt
import Ranging
import Testing
import TestSupport

@testable import PirateHunter

private func decode(_ json: String) throws(CLIError) -> HunterConfiguration {
    try HunterConfiguration.decode(Array(json.utf8), file: "hunter.json")
}

private let chests = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

/// `hunt.trail` and its rules, from the file to what the hunter runs with.
@Suite struct TrailConfigurationTests {
    @Test func aTrailIsReadInOrderWithItsCluesHintsAndRules() throws {
        let configuration = try decode("""
            {"hunt": {"trail": [
                {"region": "\(chests):1:1", "clue": "Look under the big tree.", "hint": "It be green."},
                {"region": "\(chests):1:2", "clue_wav": "/srv/clues/two.wav", "found": "The second chest!"},
                {"region": "\(chests):2"}
              ], "order": "any_order", "hint_after": 45, "hint_interval": 30, "mode": "race"}}
            """)
        let hunt = configuration.huntConfiguration()
        let uuid = try #require(UUID(uuidString: chests))
        #expect(hunt.trail == [
            TrailStep(region: Region(name: "\(chests):1:1", uuid: uuid, major: 1, minor: 1), clue: .text("Look under the big tree."), hint: "It be green."),
            TrailStep(region: Region(name: "\(chests):1:2", uuid: uuid, major: 1, minor: 2), clue: .recording("/srv/clues/two.wav"), found: "The second chest!"),
            TrailStep(region: Region(name: "\(chests):2", uuid: uuid, major: 2)),
        ])
        #expect(hunt.region == "\(chests):1:1", "the first step is hunted first")
        #expect(hunt.trailRules.order == .anyOrder && hunt.trailRules.mode == .race)
        #expect(hunt.trailRules.hintAfter == 45 && hunt.trailRules.hintInterval == 30)
        // The ranging engine watches every step's region.
        #expect(configuration.hunterSetup().regions.map(\.name) == ["\(chests):1:1", "\(chests):1:2", "\(chests):2"])
    }

    @Test func theDefaultsAreASingleChestInOrderAloneWithAHintAfter90Seconds() throws {
        let hunt = try decode("{}").huntConfiguration()
        #expect(hunt.trail.isEmpty)
        #expect(hunt.trailRules.order == .inOrder && hunt.trailRules.mode == .solo)
        #expect(hunt.trailRules.hintAfter == 90 && hunt.trailRules.hintInterval == 60)
    }

    @Test func farWaitsForTheRangingsNearEdge() throws {
        #expect(try decode("{}").huntConfiguration().farEdge == 3.0)
        #expect(try decode(#"{"ranging": {"near_edge": 2.5}}"#).huntConfiguration().farEdge == 2.5)
    }

    @Test func aRaceWithoutATrailIsAOneStepTrailOfTheFirstRegion() throws {
        let configuration = try decode(#"{"regions": [{"name": "chest", "uuid": "\#(chests)"}], "hunt": {"mode": "race"}}"#)
        let hunt = configuration.huntConfiguration()
        #expect(hunt.trail.map(\.region.name) == ["chest"])
        #expect(hunt.region == "chest")
    }

    @Test func aRegionFlagReplacesTheFilesTrail() throws {
        var configuration = try decode(#"{"hunt": {"trail": [{"region": "\#(chests):1:1"}]}}"#)
        configuration.apply(try commandLineFlags(["--region", chests]))
        #expect(configuration.huntConfiguration().trail.isEmpty)
        #expect(configuration.hunterSetup().regions.map(\.name) == [RegionID(chests)])
    }

    static let cases: [(String, String)] = [
        (#"{"hunt": {"trail": []}}"#,
         "hunter.json: hunt.trail: is empty; allowed: \(TrailList.allowed)"),
        (#"{"hunt": {"trail": {"region": "\#(chests)"}}}"#,
         "hunter.json: hunt.trail: must be an array; allowed: \(TrailList.allowed)"),
        (#"{"hunt": {"trail": [{"region": "\#(chests):1:x"}]}}"#,
         "hunter.json: hunt.trail[0].region: '\(chests):1:x' is not a region; allowed: UUID[:MAJOR[:MINOR]], major and minor 0-65535 (what `scan` prints for a beacon)"),
        (#"{"hunt": {"trail": [{"region": "\#(chests):1"}, {"region": "not-a-uuid"}]}}"#,
         "hunter.json: hunt.trail[1].region: 'not-a-uuid' is not a region; allowed: UUID[:MAJOR[:MINOR]], major and minor 0-65535 (what `scan` prints for a beacon)"),
        (#"{"hunt": {"trail": [{"clue": "where?"}]}}"#,
         "hunter.json: hunt.trail[0].region: is missing; allowed: UUID[:MAJOR[:MINOR]], major and minor 0-65535 (what `scan` prints for a beacon)"),
        (#"{"hunt": {"trail": [{"region": "\#(chests):1"}, {"region": "\#(chests):1"}]}}"#,
         "hunter.json: hunt.trail[1].region: '\(chests):1' is already step 1; allowed: each treasure once on a trail"),
        // The same beacons written another way (a UUID's case, a minor's leading zero): one chest.
        (#"{"hunt": {"trail": [{"region": "\#(chests):1:1"}, {"region": "\#(chests.lowercased()):01:1"}]}}"#,
         "hunter.json: hunt.trail[1].region: '\(chests.lowercased()):01:1' is already step 1; allowed: each treasure once on a trail"),
        (#"{"hunt": {"trail": [{"region": "\#(chests)", "clue": "a", "clue_wav": "/a.wav"}]}}"#,
         "hunter.json: hunt.trail[0].clue_wav: is given with clue; allowed: either clue (text) or clue_wav (a recording)"),
        (#"{"hunt": {"trail": [{"region": "\#(chests)", "hint": ""}]}}"#,
         "hunter.json: hunt.trail[0].hint: is empty; allowed: text of 1 to 400 characters, said as written"),
        (#"{"hunt": {"trail": [{"region": "\#(chests)", "clue": "\#(String(repeating: "a", count: 401))"}]}}"#,
         "hunter.json: hunt.trail[0].clue: is 401 characters long; allowed: text of 1 to 400 characters, said as written"),
        (#"{"hunt": {"trail": [{"region": "\#(chests)", "riddle": "x"}]}}"#,
         "hunter.json: hunt.trail[0].riddle: unknown key; allowed: region, clue, clue_wav, hint, found, reward, box"),
        (#"{"hunt": {"trail": [{"region": "\#(chests)", "box": true, "reward": "x"}]}}"#,
         "hunter.json: hunt.trail[0].box: is true with the step's own reward; allowed: true (a treasure box's reward, sealed) or a reward of the step's own, not both"),
        (#"{"hunt": {"order": "backwards"}}"#,
         "hunter.json: hunt.order: 'backwards' is not one of them; allowed: in_order, any_order"),
        (#"{"hunt": {"order": 1}}"#, "hunter.json: hunt.order: must be a string; allowed: in_order, any_order"),
        (#"{"hunt": {"mode": "relay"}}"#, "hunter.json: hunt.mode: 'relay' is not one of them; allowed: solo, race"),
        (#"{"hunt": {"hint_after": 1}}"#, "hunter.json: hunt.hint_after: 1 is out of range; allowed: a number, 5 to 3600 s"),
        (#"{"hunt": {"hint_interval": 7200}}"#, "hunter.json: hunt.hint_interval: 7200 is out of range; allowed: a number, 5 to 3600 s"),
    ]

    @Test(arguments: 0..<cases.count)
    func aBadTrailIsOneLineNamingTheFieldAndExits78(_ index: Int) throws {
        let (json, expected) = Self.cases[index]
        do {
            _ = try decode(json)
            Issue.record("decoded without an error: \(json)")
        } catch {
            #expect(error.code == .config)
            #expect(error.message == expected)
            #expect(!error.message.contains("\n"))
        }
    }

    @Test func theBinaryRefusesABadTrailWithExit78AndOneLine() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("trail-\(UUID().uuidString).json").path
        try Data(#"{"hunt": {"trail": [{"region": "E2C56DB5"}]}}"#.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await PirateHunterBinary.run(["hunt", "--config", path], timeout: 30)
        #expect(result.status == 78)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(lines.first?.contains("hunt.trail[0].region: 'E2C56DB5' is not a region") == true, "\(result.stderr)")
    }

    /// A recorded clue that is missing is exit 66, one that is not a WAV 78, each one line
    /// naming the step; one that is a WAV is played after the clue's lead-in.
    @Test func recordedCluesAreCheckedAtStartAndPlayed() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("clues-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func hunt(clue path: String?, heard: String = "null") async throws -> CommandResult {
            let config = directory + "/hunter.json"
            let clue = path.map { #", "clue_wav": "\#($0)""# } ?? ""
            try Data(#"""
                {"transport": "simulator", "hunt": {"trail": [{"region": "50495241-5445-2D48-554E-544552000000:1:9"\#(clue)}]}}
                """#.utf8).write(to: URL(fileURLWithPath: config))
            return try await PirateHunterBinary.run(
                ["hunt", "--config", config, "--virtual-time", "--json", "--duration", "12", "--device", heard, "--cache-dir", PirateHunterBinary.lineCache],
                timeout: 60)
        }
        /// How long the clue sounds in what ALSA's file: device was handed: from its start to
        /// the first second of silence (the trail's chest, 1:9, is not on the simulator's air:
        /// nothing is said after the clue).
        func clueSeconds(clue path: String?) async throws -> Double {
            let wav = directory + "/heard-\(UUID().uuidString).wav"
            let result = try await hunt(clue: path, heard: "file:FILE=\(wav),FORMAT=wav")
            #expect(result.status == 0, "\(result.stderr)")
            let start = try #require(try jsonObjects(result).first { $0["event_name"] as? String == "clue" }?["t"] as? Double)
            let data = try Data(contentsOf: URL(fileURLWithPath: wav))
            let samples = data.dropFirst(44).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
            let window = 220  // 10 ms at 22050 Hz
            var loudUntil = Int(start * 22050)
            var i = loudUntil
            while i + window < samples.count, i - loudUntil < 22050 {
                let energy = samples[i..<(i + window)].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(window)
                if energy.squareRoot() > 300 { loudUntil = i + window }
                i += window
            }
            return Double(loudUntil) / 22050 - start
        }
        let missing = try await hunt(clue: directory + "/nowhere.wav")
        #expect(missing.status == 66)
        #expect(missing.stderr.split(separator: "\n").count == 1 && missing.stderr.contains("hunt.trail[0].clue_wav: "), "\(missing.stderr)")
        let notWAV = directory + "/notes.wav"
        try Data("dear diary".utf8).write(to: URL(fileURLWithPath: notWAV))
        let bad = try await hunt(clue: notWAV)
        #expect(bad.status == 78)
        #expect(bad.stderr.split(separator: "\n").count == 1 && bad.stderr.contains("hunt.trail[0].clue_wav: "), "\(bad.stderr)")
        let recorded = directory + "/clue.wav"
        let made = try await PirateHunterBinary.run(["say", "Look under the big tree", "--out", recorded], timeout: 60)
        #expect(made.status == 0, "\(made.stderr)")
        let good = try await hunt(clue: recorded)
        #expect(good.status == 0, "\(good.stderr)")
        let clue = try #require(try jsonObjects(good).first { $0["event_name"] as? String == "clue" })
        // The JSON says the lead-in; the recording is heard after it (a breath, then about
        // 1.5 s of the parent's words: the same lead-in, as the lines are picked from a seed).
        #expect((clue["text"] as? String)?.contains("1") == true)
        #expect((clue["text"] as? String)?.contains("big tree") == false)
        let recording = try WAVFile.read(path: recorded).durationSeconds
        let leadIn = try await clueSeconds(clue: nil)
        let withRecording = try await clueSeconds(clue: recorded)
        #expect(leadIn > 1)
        #expect(abs(withRecording - leadIn - recording) < 0.8, "lead-in \(leadIn) s, with the recording \(withRecording) s, recording \(recording) s")
    }

    /// A reward on a trail step needs no second Pi: read after the find, shown as a QR code.
    @Test func aStepsRewardIsReadAndShownWithoutABox() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("step-reward-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/hunter.json", svg = directory + "/reward.svg"
        try Data(#"""
            {"transport": "simulator", "hunt": {"trail": [{"region": "50495241-5445-2D48-554E-544552000000:1:1", "clue": "Find the chest.", "reward": "Look under the bed"}]}}
            """#.utf8).write(to: URL(fileURLWithPath: config))
        let result = try await PirateHunterBinary.run(
            ["hunt", "--config", config, "--virtual-time", "--json", "--duration", "90", "--device", "null", "--reward-svg", svg,
             "--cache-dir", PirateHunterBinary.lineCache], timeout: 90)
        #expect(result.status == 0, "\(result.stderr)")
        let objects = try jsonObjects(result)
        let found = try #require(objects.firstIndex { $0["event_name"] as? String == "treasure-found" })
        let reward = try #require(objects.firstIndex { $0["event"] as? String == "reward" })
        #expect(objects[reward]["reward"] as? String == "Look under the bed")
        #expect(reward > found)
        #expect(objects[reward...].contains { $0["event_name"] as? String == "reward" }, "the reward line was not said")
        // The reward's own words follow the pack's lead-in (the line said only the lead-in).
        let said = objects[reward...].first { $0["event_name"] as? String == "reward" }
        #expect((said?["text"] as? String)?.hasSuffix(" Look under the bed") == true, "\(said ?? [:])")
        let drawn = try String(contentsOfFile: svg, encoding: .utf8)
        #expect(drawn.hasPrefix("<?xml") || drawn.contains("<svg"))
        #expect(!result.stderr.contains("scanning actively"), "a box's reward was listened for")
        // Too long for a child to hear (and a QR code to hold comfortably): refused by name.
        #expect(throws: CLIError.self) {
            try decode(#"{"hunt": {"trail": [{"region": "\#(chests)", "reward": "\#(String(repeating: "gold ", count: 30))"}]}}"#)
        }
    }

    @Test func theDocumentationNamesEveryTrailKey() throws {
        let docs = try String(contentsOfFile: Repository.path + "/docs/configuration.md", encoding: .utf8)
        for key in HuntDirector.Configuration.keys + ["region", "clue", "clue_wav", "hint", "found", "reward"] {
            #expect(docs.contains("`\(key)`"), "docs/configuration.md does not document `\(key)`")
        }
    }

    @Test func theTrailExampleInTheDocsIsValid() throws {
        let docs = try String(contentsOfFile: Repository.path + "/docs/hunt.md", encoding: .utf8)
        let blocks = docs.components(separatedBy: "```json\n").dropFirst().compactMap { $0.components(separatedBy: "```").first }
        #expect(blocks.count >= 1)
        for block in blocks {
            let hunt = try decode(block).huntConfiguration()
            #expect(hunt.trail.count >= 2)
        }
    }
}
