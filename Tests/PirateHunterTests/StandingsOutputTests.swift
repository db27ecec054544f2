import Game
import Foundation
import Hunt
import Testing
import TestSupport

@testable import PirateHunter

/// The standings as other tools read them: `{"t", "event": "standings", "finishers": [...]}`.
@Suite struct StandingsOutputTests {
    @Test func theLineHoldsEveryFinisherInOrder() {
        var standings = Standings()
        standings.record(hunter: 2, treasure: 1, at: 41.25)
        standings.record(hunter: 1, treasure: 1, at: 50)
        #expect(OutputEvent.standings(time: 50, standings.finishers).jsonLine == #"{"t": 50.0, "event": "standings", "finishers": [{"hunter": 2, "treasure": 1, "t": 41.25}, {"hunter": 1, "treasure": 1, "t": 50.0}]}"#)
        #expect(OutputEvent.standings(time: 1, []).jsonLine == #"{"t": 1.0, "event": "standings", "finishers": []}"#)
    }

    /// The simulator's hunter 7 announces it found the box's treasure: greeted, and the box's
    /// standings (printed once, not at every announcement heard) name it, from its first
    /// announcement the box ranges within the 6 m it seals for (the simulated visitor
    /// announces from its start, before the greeting's 2 s at "immediate").
    @Test func theBoxPrintsItsStandingsOnceWhenAHunterFinishes() async throws {
        let result = try await PirateHunterBinary.run(
            ["treasure", "--hci", "simulator", "--no-kiosk", "--json", "--duration", "16", "--minor", "1"], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let events = try jsonObjects(result)
        let greet = try #require(events.firstIndex { $0["event"] as? String == "greet" })
        let lines = events.indices.filter { events[$0]["event"] as? String == "standings" }
        #expect(lines.count == 1)
        let line = try #require(lines.first)
        let finishers = try #require(events[line]["finishers"] as? [[String: Any]])
        #expect(finishers.count == 1)
        #expect(finishers.first?["hunter"] as? Int == 7)
        #expect(finishers.first?["treasure"] as? Int == 1)
        let found = try #require(finishers.first?["t"] as? Double)
        let greeted = try #require(events[greet]["t"] as? Double)
        #expect(found <= greeted && found == events[line]["t"] as? Double)
    }

    /// A box whose file has the trail knows which chest it is: its finishers are named by it.
    @Test func aBoxOnATrailNamesItsChestByItsNumber() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("box-\(UUID().uuidString).json").path
        try Data(#"""
            {"hunt": {"trail": [{"region": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:1"}, {"region": "50495241-5445-2D48-554E-544552000000:1:1"}]}}
            """#.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await PirateHunterBinary.run(
            ["treasure", "--config", path, "--hci", "simulator", "--no-kiosk", "--json", "--duration", "16", "--minor", "1"], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let standings = try #require(try jsonObjects(result).last { $0["event"] as? String == "standings" })
        let finishers = try #require(standings["finishers"] as? [[String: Any]])
        #expect(finishers.map { $0["treasure"] as? Int } == [2])
        #expect(finishers.map { $0["hunter"] as? Int } == [7])
    }
}
