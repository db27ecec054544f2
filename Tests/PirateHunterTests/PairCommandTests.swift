import Foundation
import GameKey
import Testing
import TestSupport

@testable import PirateHunter

/// `pirate-hunter pair CODE`: the key written into the file, every other byte kept, the file
/// replaced whole or not at all; `check --new-game` and `check`'s pairing line.
@Suite struct PairCommandTests {
    static let key = (try? GameKey(bytes: Array(0..<32))) ?? GameKey.random()

    @Test func theKeyGoesIntoTheFileAndTheRestStays() async throws {
        let scratch = try Scratch("pair")
        let original = "{\n  \"json\": true,\n  \"treasure\": {\"reward\": \"ARRR {\\\"x\\\"}\"},\n  \"announce\": {\"hunter_id\": 3}\n}\n"
        let path = try scratch.write("hunter.json", original)
        #expect(chmod(path, 0o640) == 0)
        let code = Self.key.text.lowercased().replacingOccurrences(of: "-", with: " ")
        let result = try await PirateHunterBinary.run(["pair", code, "--config", path], timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written == "{\"game\": {\"key\": \"\(Self.key.text)\"}, " + original.dropFirst())
        let configuration = try HunterConfiguration.decode(Array(written.utf8), file: path)
        #expect(configuration.game.key == Self.key)
        #expect(configuration.announce.hunterID == 3 && configuration.treasure.reward == "ARRR {\"x\"}")
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o640, "the file's permissions kept")
        #expect(scratch.temporaries().isEmpty)
        // Paired again with another key: the value replaced in place.
        let other = GameKey.random()
        #expect(try await PirateHunterBinary.run(["pair", other.text, "--config", path], timeout: 30).status == 0)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == written.replacingOccurrences(of: Self.key.text, with: other.text))
    }

    @Test func aGameSectionGetsTheKeyAndAMissingFileIsMade() throws {
        let quoted = "\"\(Self.key.text)\""
        #expect(try PairCommand.withKey(Self.key, in: #"{"game": {"hunters": [1, 2]}}"#, file: "f")
            == #"{"game": {"key": "# + quoted + #", "hunters": [1, 2]}}"#)
        #expect(try PairCommand.withKey(Self.key, in: #"{"game": {}}"#, file: "f") == #"{"game": {"key": "# + quoted + "}}")
        #expect(try PairCommand.withKey(Self.key, in: "{}", file: "f") == #"{"game": {"key": "# + quoted + "}}")
        #expect(try PairCommand.withKey(Self.key, in: "", file: "f") == #"{"game": {"key": "# + quoted + "}}\n")
        // A "game" inside a string or a nested object is not the section.
        #expect(try PairCommand.withKey(Self.key, in: #"{"hunt": {"game": 1}, "x": "\"game\""}"#, file: "f")
            == #"{"game": {"key": "# + quoted + #"}, "hunt": {"game": 1}, "x": "\"game\""}"#)
    }

    @Test func aBadCodeOrFileIsOneLineAndItsCode() async throws {
        let scratch = try Scratch("pair")
        let path = try scratch.write("hunter.json", "{\"json\": true}\n")
        let short = try await PirateHunterBinary.run(["pair", "ABCD-EFGH", "--config", path], timeout: 30)
        #expect(short.status == 65)
        #expect(short.stderr == "pirate-hunter: pair: the code has 8 of its 52 letters and digits (dashes and spaces do not count): copy it again (pirate-hunter check --new-game)\n")
        let bad = try await PirateHunterBinary.run(["pair", "!" + Self.key.text, "--config", path], timeout: 30)
        #expect(bad.status == 65)
        #expect(try await PirateHunterBinary.run(["pair", "--config", path], timeout: 30).status == 64)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{\"json\": true}\n", "left as it was")
        // A file the hunt would refuse is not touched (78), nor a link in the file's place.
        let broken = try scratch.write("broken.json", "{\"jsno\": true}\n")
        #expect(try await PirateHunterBinary.run(["pair", Self.key.text, "--config", broken], timeout: 30).status == 78)
        #expect(symlink(path, scratch.path + "/link.json") == 0)
        let link = try await PirateHunterBinary.run(["pair", Self.key.text, "--config", scratch.path + "/link.json"], timeout: 30)
        #expect(link.status == 73)
        #expect(link.stderr.contains("symbolic link"))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{\"json\": true}\n")
        // A --config that is not there is a typo (treasure.jsn), not a new file: 66, nothing made.
        let typo = try await PirateHunterBinary.run(["pair", Self.key.text, "--config", scratch.path + "/treasure.jsn"], timeout: 30)
        #expect(typo.status == 66, "\(typo.stderr)")
        #expect(typo.stderr.contains("treasure.jsn: no such configuration file"), "\(typo.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path + "/treasure.jsn"))
    }

    /// The new game's key lives only in what is printed: a stdout that cannot take it (a full
    /// disk) is exit 74 and a line, not 0 with the key lost; the checklist alike.
    @Test(arguments: [["check", "--new-game"], ["check", "--json", "--silent"]])
    func aStdoutThatCannotTakeItIs74(arguments: [String]) throws {
        let scratch = try Scratch("full")
        let err = scratch.path + "/err"
        let process = try ChildProcess(PirateHunterBinary.url.path, arguments, stdout: .file("/dev/full"), stderr: .file(err))
        let ended = process.wait(timeout: 60)
        let stderr = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        #expect(ended.status == 74, "\(ended) \(stderr)")
        #expect(stderr.contains("standard output: No space left on device"), "\(stderr)")
    }

    @Test func checkMakesANewGameAndSaysWhetherThisPiIsPaired() async throws {
        let made = try await PirateHunterBinary.run(["check", "--new-game"], timeout: 30)
        #expect(made.status == 0)
        let lines = made.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let key = try #require(lines.compactMap { try? GameKey(text: $0) }.first)
        #expect(made.stdout.contains("pirate-hunter pair \(key.text)"))
        let again = try await PirateHunterBinary.run(["check", "--new-game"], timeout: 30)
        #expect(!again.stdout.contains(key.text), "a new key each time")

        var facts = CheckFacts.Configuration()
        #expect(Checklist.pairing(facts).status == .warn)
        #expect(Checklist.pairing(facts).fix?.contains("pirate-hunter pair CODE") == true)
        facts.game = key.fingerprint
        #expect(Checklist.pairing(facts).status == .ok)
    }
}
