import Foundation
import Testing
import TestSupport

/// What the hunt says about its radio: the start-up line only once it scans, a missing radio
/// said once it stays missing, and an unusable one once per cause and boot, not per restart.
@Suite struct RadioLinesTests {
    func said(_ result: CommandResult) throws -> [String] {
        try jsonObjects(result).filter { $0["event"] as? String == "say" }.compactMap { $0["event_name"] as? String }
    }

    func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("radio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func theStartUpLineWaitsForTheRadio() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = ["--cache-dir", PirateHunterBinary.lineCache, "--device", "null", "--json"]
        // No controller behind the socket for 15 s: no "the hunt begins", the missing radio
        // once (said after 5 s of outage; the duration also covers the voice's start-up, which
        // a loaded machine with a cold line cache took most of 7 s over once).
        let missing = try await PirateHunterBinary.run(["hunt", "--hci", "unix:" + directory.appendingPathComponent("none.sock").path, "--duration", "15"] + cache, timeout: 60)
        #expect(missing.status == 0, "\(missing.stderr)")
        #expect(try said(missing) == ["notice-no-adapter"], "\(missing.stdout)")
        // A radio: the start-up line comes after scanning started.
        let working = try await PirateHunterBinary.run(["hunt", "--hci", "simulator", "--virtual-time", "--duration", "5"] + cache, timeout: 60)
        #expect(try said(working).first == "startup")
        let log = working.stderr.split(separator: "\n").map(String.init)
        let scanning = try #require(log.firstIndex { $0.contains("scanning on simulator") })
        let startup = try #require(log.firstIndex { $0.contains("say [startup]") })
        #expect(scanning < startup)
    }

    @Test func anUnusableRadioIsSaidOncePerCauseAndBoot() async throws {
        // This machine's kernel has no Bluetooth sockets: hunt exits 69 and systemd would
        // start it again and again. The child hears it the first time only.
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = ["hunt", "--hci", "hci0", "--json", "--device", "null", "--cache-dir", PirateHunterBinary.lineCache]
        let environment = ["RUNTIME_DIRECTORY": directory.path]
        let first = try await PirateHunterBinary.run(arguments, environment: environment, timeout: 60)
        let second = try await PirateHunterBinary.run(arguments, environment: environment, timeout: 60)
        #expect(first.status == 69 && second.status == 69)
        #expect(try said(first) == ["notice-no-bluetooth"])
        #expect(try said(second).isEmpty, "said again on a restart: \(second.stdout)")
        // Another boot (an empty runtime directory): said again.
        let marks = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("said-") }
        #expect(marks.count == 1)
        for mark in marks { try FileManager.default.removeItem(at: directory.appendingPathComponent(mark)) }
        #expect(try said(try await PirateHunterBinary.run(arguments, environment: environment, timeout: 60)) == ["notice-no-bluetooth"])
    }

    /// A controller socket closed every 2 s: not a word to the child, and one log line, not
    /// one per reconnection.
    @Test func aFlakyControllerIsNeitherSpokenNorLoggedEachTime() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("ctl.sock").path
        let controller = try PirateHunterBinary.startFakeController(socket: socket, ["--beacon-hz", "10", "--close-every", "2"])
        defer { controller.kill() }
        let result = try await PirateHunterBinary.run(
            ["hunt", "--hci", "unix:" + socket, "--region", "50697261-7465-4875-6E74-547265617375", "--json", "--device", "null",
             "--cache-dir", PirateHunterBinary.lineCache, "--duration", "11"], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let unavailable = result.stderr.components(separatedBy: "controller unavailable").count - 1
        #expect(unavailable == 1, "\(result.stderr)")
        let said = try said(result)
        #expect(!said.contains("adapter-missing") && !said.contains("adapter-back"), "\(said)")
        #expect(said.first == "startup")
    }
}
