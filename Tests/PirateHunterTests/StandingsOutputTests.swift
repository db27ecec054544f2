import Foundation
import Hunt
import Testing

@testable import PirateHunter

/// The standings as other tools read them: `{"t", "event": "standings", "finishers": [...]}`.
@Suite struct StandingsOutputTests {
    @Test func theLineHoldsEveryFinisherInOrder() {
        var standings = Standings()
        standings.record(hunter: 2, treasure: 1, at: 41.25)
        standings.record(hunter: 1, treasure: 1, at: 50)
        #expect(JSONLine.standings(standings, at: 50) == #"{"t": 50.0, "event": "standings", "finishers": [{"hunter": 2, "treasure": 1, "t": 41.25}, {"hunter": 1, "treasure": 1, "t": 50.0}]}"#)
        #expect(JSONLine.standings(Standings(), at: 1) == #"{"t": 1.0, "event": "standings", "finishers": []}"#)
    }

    /// The simulator's hunter 7 announces it found the box's treasure: greeted, and the box's
    /// standings (printed once, not at every announcement heard) name it.
    @Test func theBoxPrintsItsStandingsOnceWhenAHunterFinishes() throws {
        let result = try PirateHunterBinary.run(
            ["treasure", "--hci", "simulator", "--no-kiosk", "--json", "--duration", "8", "--minor", "1"], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let events = try jsonObjects(result)
        let greet = try #require(events.firstIndex { $0["event"] as? String == "greet" })
        let lines = events.indices.filter { events[$0]["event"] as? String == "standings" }
        #expect(lines.count == 1)
        let line = try #require(lines.first)
        #expect(line > greet)
        let finishers = try #require(events[line]["finishers"] as? [[String: Any]])
        #expect(finishers.count == 1)
        #expect(finishers.first?["hunter"] as? Int == 7)
        #expect(finishers.first?["treasure"] as? Int == 1)
        #expect(finishers.first?["t"] as? Double == events[greet]["t"] as? Double)
    }
}
