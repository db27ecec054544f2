import Foundation
import QRCode
import Testing
import TestSupport

@Suite struct TreasureCommandTests {
    @Test(arguments: [
        (["--major", "70000"], "pirate-hunter: treasure: --major (treasure.major): '70000' is out of range; allowed: 0 to 65535"),
        (["--minor", "65536"], "pirate-hunter: treasure: --minor (treasure.minor): '65536' is out of range; allowed: 0 to 65535"),
        (["--power", "21"], "pirate-hunter: treasure: --power (treasure.power): '21' is out of range; allowed: -127 to 20"),
        (["--uuid", "not-a-uuid"], "pirate-hunter: treasure: --uuid (treasure.uuid): 'not-a-uuid' is not a UUID; allowed: 8-4-4-4-12 hex digits"),
        (["--reward", String(repeating: "X", count: 21)],
         "pirate-hunter: treasure: --reward (treasure.reward): is 21 bytes long; allowed: printable text of 1 to 20 UTF-8 bytes (it must fit a sealed scan response; a longer one goes in a trail step's own reward)"),
    ])
    func aBadIdentityExits78NamingTheField(_ arguments: [String], _ message: String) async throws {
        let result = try await PirateHunterBinary.run(["treasure", "--hci", "simulator"] + arguments, timeout: 30)
        #expect(result.status == 78)
        #expect(result.stderr == message + "\n")
        #expect(result.stdout.isEmpty)
    }

    @Test func aBadFileValueExits78NamingTheField() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("treasure-\(UUID().uuidString).json").path
        try Data(#"{"treasure": {"power": -128}}"#.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await PirateHunterBinary.run(["treasure", "--config", path], timeout: 30)
        #expect(result.status == 78)
        #expect(result.stderr.contains("treasure.power: -128 is out of range"))
    }

    @Test func anUnknownOptionIsAUsageError() async throws {
        let result = try await PirateHunterBinary.run(["treasure", "--frobnicate"], timeout: 30)
        #expect(result.status == 64)
        #expect(result.stderr == "pirate-hunter: treasure: unknown option '--frobnicate' (see 'pirate-hunter treasure --help')\n")
    }

    /// The simulator's visiting hunter 7 announces it found the treasure: the box greets it
    /// with the reward's QR code (log lines, as under systemd), then switches advertising off.
    @Test func theSimulatedBoxGreetsAVisitingHunterWithTheQRCode() async throws {
        let reward = "Found! ☠ 10% off"
        let result = try await PirateHunterBinary.run(
            ["treasure", "--hci", "simulator", "--no-kiosk", "--json", "--duration", "16", "--minor", "1", "--reward", reward], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let greet = try #require(try jsonObjects(result).first { $0["event"] as? String == "greet" })
        #expect(greet["hunter"] as? Int == 7)
        #expect(greet["reward"] as? String == reward)
        let log = result.stderr.split(separator: "\n").map(String.init)
        #expect(log.contains("pirate-hunter: advertising on simulator (extended commands)"))
        #expect(log.contains("pirate-hunter: ahoy, hunter 7! ye found the treasure; reward: \(reward)"))
        let qr = try QRCode(encoding: reward).terminalLines(inverted: true).map { "pirate-hunter: " + $0 }
        let shown = try #require(log.firstIndex(of: "pirate-hunter: reward QR code for hunter 7:"))
        #expect(Array(log.dropFirst(shown + 1).prefix(qr.count)) == qr)
        #expect(log.last == "pirate-hunter: advertising off")
    }

    /// On a terminal: the full-screen kiosk (alternate screen in, frames drawn in place,
    /// alternate screen out on exit), here through `script`'s pseudo-terminal.
    @Test func onATerminalTheKioskIsDrawnInPlace() async throws {
        let command = "\(PirateHunterBinary.url.path) treasure --hci simulator --duration 16 --minor 1 --reward ARRR-KIOSK"
        let result = try await Program.run("/usr/bin/script", ["-qec", command, "/dev/null"], environment: ["TERM": "xterm-256color", "NO_COLOR": ""], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let out = result.stdout
        #expect(out.hasPrefix("\u{1B}[?1049h"), "enters the alternate screen")
        #expect(out.contains("\u{1B}[?1049l"), "leaves it on exit")
        let frames = out.components(separatedBy: "\u{1B}[H").count - 1
        #expect(frames >= 3, "redrawn in place: \(frames) frames")
        #expect(out.contains("Ahoy hunter 7!"))
        #expect(out.contains("ARRR-KIOSK"))
        #expect(out.contains(";38;5;"), "coloured by the nearest hunter's proximity")
    }

    /// `make install` installs the treasure box's unit, and the command line in it works with
    /// the example file `make install` puts at /etc/pirate-hunter/treasure.json.
    @Test func theInstalledUnitRunsTheTreasureCommand() async throws {
        let make = try await Program.run(
            "/usr/bin/make", ["-n", "-C", Repository.url.path, "install", "DESTDIR=/nonexistent"], timeout: 60)
        #expect(make.status == 0, "\(make.stderr)")
        #expect(make.stdout.contains("for unit in pirate-hunter.service pirate-treasure.service;"))
        #expect(make.stdout.contains("config/$name.example.json") && make.stdout.contains("for name in hunter treasure;"))
        let unit = try String(contentsOf: Repository.url.appendingPathComponent("systemd/pirate-treasure.service"), encoding: .utf8)
        let execStart = try #require(unit.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        var arguments = execStart.dropFirst("ExecStart=".count).split(separator: " ").map(String.init).dropFirst()
        #expect(Array(arguments) == ["treasure", "--config", "/etc/pirate-hunter/treasure.json"])
        arguments[arguments.startIndex + 2] = Repository.url.appendingPathComponent("config/treasure.example.json").path
        // 5 s: the run is timed from the start, and a loaded machine takes seconds to advertise.
        let result = try await PirateHunterBinary.run(Array(arguments) + ["--hci", "simulator", "--duration", "5"], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("advertising on simulator"))
    }
}
