import Foundation
import GameKey
import Testing
import TestSupport

/// Issue #25's attacks through the real binary and a fake controller on a unix socket
/// (`scripts/bench/fake-controller.py`: made-up hunters and rewards with guessed MACs, and
/// the old plain layouts), on a hunter and a box with the game key and without one: nothing
/// fake is said, printed or counted. The real game with the key is the demo's
/// (DemoEndToEndTests, DemoCoreTests).
@Suite struct AttackTests {
    static let treasureUUID = "50697261-7465-4875-6E74-547265617375"
    static let key = (try? GameKey(bytes: Array(100..<132))) ?? GameKey.random()

    /// `race`: a one-step race of the chest (another hunter's find is news); else a one-step
    /// trail whose chest is a treasure box (`box`: found only on the box's proof).
    static func config(_ scratch: Scratch, socket: String, paired: Bool, race: Bool) throws -> String {
        let game = paired ? #", "game": {"key": "\#(key.text)"}"# : ""
        return try scratch.write("hunter.json", """
            { "transport": "unix:\(socket)",
              "regions": [ { "name": "treasure", "uuid": "\(treasureUUID)" } ],
              "voice": { "cache_directory": "\(PirateHunterBinary.lineCache)" },
              "audio": { "device": "null" },
              "hunt": \(race ? #"{ "mode": "race" }"# : #"{ "trail": [ { "region": "\#(treasureUUID):1:1", "box": true } ] }"#)\(game) }
            """)
    }

    /// Runs `arguments` (a hunt or a box on the fake controller started with `attack`).
    static func run(_ name: String, paired: Bool, race: Bool = false, attack: [String], _ arguments: (String, String) -> [String]) async throws -> CommandResult {
        let scratch = try Scratch(name)
        let socket = scratch.path + "/ctl.sock"
        let controller = try PirateHunterBinary.startFakeController(socket: socket, attack)
        defer { controller.kill() }
        let config = try Self.config(scratch, socket: socket, paired: paired, race: race)
        return try await PirateHunterBinary.run(arguments(config, socket), timeout: 90)
    }

    static func said(_ events: [[String: Any]]) -> [String] {
        events.filter { $0["event"] as? String == "say" }.compactMap { $0["event_name"] as? String }
    }

    static func standingsHunters(_ events: [[String: Any]]) -> Set<Int> {
        Set(events.filter { $0["event"] as? String == "standings" }
            .flatMap { ($0["finishers"] as? [[String: Any]] ?? []).compactMap { $0["hunter"] as? Int } })
    }

    /// 200 made-up rivals announcing the chest, 50 reports a second for 30 s.
    @Test(arguments: [true, false]) func fakeRivalsAreNeverSaidNorCounted(paired: Bool) async throws {
        let result = try await Self.run("rivals", paired: paired, race: true, attack: ["--beacon-hz", "10", "--fake-rivals", "200", "--attack-hz", "50"]) { config, _ in
            ["hunt", "--config", config, "--json", "--duration", "30"]
        }
        #expect(result.status == 0, "\(result.stderr)")
        let events = try jsonObjects(result)
        #expect(!Self.said(events).contains("rival-found"), "\(Self.said(events))")
        #expect(Self.standingsHunters(events).filter { $0 >= 1000 }.isEmpty)
        #expect(Self.said(events).first == "startup")
        let log = result.stderr.split(separator: "\n")
        if paired {
            // Summarised: one line for the first minute.
            #expect(log.filter { $0.contains("did not verify with the game key") }.count == 1, "\(result.stderr)")
        } else {
            #expect(log.contains { $0.contains("not paired with the treasure box") })
            #expect(Self.said(events).filter { $0 == "notice-unpaired" }.count == 1)
        }
        #expect(log.count < 40, "the journal is not flooded: \(log.count) lines")
    }

    /// A copy of the chest at its address answering scan requests with a reward, plain and
    /// in a sealed layout with guessed MACs, 5x as often as the chest advertises.
    @Test(arguments: [true, false]) func aFakeRewardIsNeverSaidNorPrinted(paired: Bool) async throws {
        let result = try await Self.run("reward", paired: paired,
                                        attack: ["--beacon-hz", "10", "--rssi", "-45", "--fake-reward", "FAKE-CODE-666", "--attack-hz", "50"]) { config, _ in
            ["hunt", "--config", config, "--json", "--duration", "22"]
        }
        #expect(result.status == 0, "\(result.stderr)")
        let events = try jsonObjects(result)
        // A copy of a box's beacon is no find: no found line, no finale, the hunt goes on.
        #expect(!Self.said(events).contains("treasure-found"), "\(Self.said(events))")
        #expect(!result.stdout.contains("FAKE") && !result.stderr.contains("FAKE"))
        #expect(!events.contains { $0["event"] as? String == "reward" })
        #expect(!Self.said(events).contains("reward"))
        #expect(!Self.said(events).contains("finale"))
        #expect(Self.standingsHunters(events).isEmpty)
        if paired {
            #expect(result.stderr.contains("no proof from its box"), "\(result.stderr)")
        } else {
            #expect(Self.said(events).contains("notice-unpaired"))
        }
    }

    /// 100 made-up finders at the box (-45 dBm), 200 reports a second for 20 s.
    @Test(arguments: [true, false]) func fakeFindersAreNeverGreeted(paired: Bool) async throws {
        let result = try await Self.run("finders", paired: paired, attack: ["--fake-finders", "100", "--attack-hz", "200"]) { config, socket in
            ["treasure", "--config", config, "--hci", "unix:\(socket)", "--no-kiosk", "--json", "--duration", "20", "--reward", "REAL-GOLD"]
        }
        #expect(result.status == 0, "\(result.stderr)")
        let events = try jsonObjects(result)
        #expect(!events.contains { $0["event"] as? String == "greet" })
        #expect(Self.standingsHunters(events).isEmpty)
        let log = result.stderr.split(separator: "\n")
        let summaries = log.filter { $0.contains("ignored") }
        #expect(summaries.count == 1, "one line a minute: \(summaries)")
        #expect(!log.contains { $0.contains("hunter 10") }, "no made-up hunter named in the log")
        #expect(log.count < 20, "\(log.count) lines in 20 s")
    }
}
