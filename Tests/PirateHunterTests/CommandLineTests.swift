import Bluetooth
import Foundation
import Ranging
import Testing
import TestSupport
@testable import PirateHunter

/// The command-line table as a user meets it: every command's --help, --version, and the
/// shared flags behaving the same in every command that talks to a controller.
@Suite struct CommandLineTests {
    static let commands = ["hunt", "treasure", "scan", "demo", "replay", "say", "check", "help"]

    @Test(arguments: commands)
    func everyCommandAnswersHelpWithItsOwnUsage(_ command: String) async throws {
        for spelling in ["--help", "-h"] {
            let result = try await PirateHunterBinary.run([command, spelling])
            #expect(result.status == 0, "\(command) \(spelling): \(result.stderr)")
            #expect(result.stdout.hasPrefix("usage: pirate-hunter \(command)"), "\(result.stdout)")
            #expect(result.stdout.contains("--help, -h"))
            #expect(result.stderr.isEmpty)
        }
    }

    @Test func helpAfterOtherFlagsStillHelpsAndSayCanSpeakADash() async throws {
        #expect(try await PirateHunterBinary.run(["scan", "--json", "--help"]).status == 0)
        // "--" ends the options: say speaks "-h" into a file instead of printing its help.
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("dash-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let said = try await PirateHunterBinary.run(["say", "--out", out, "--", "-h"])
        #expect(said.status == 0, "\(said.stderr)")
        #expect(FileManager.default.fileExists(atPath: out))
    }

    @Test func versionAndTopLevelHelp() async throws {
        let version = try await PirateHunterBinary.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.range(of: #"^pirate-hunter \d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil, "\(version.stdout)")
        let help = try await PirateHunterBinary.run(["help"])
        #expect(help.status == 0)
        for command in Self.commands { #expect(help.stdout.contains("\n  \(command)"), "help lists \(command)") }
        #expect(try await PirateHunterBinary.run(["--help"]).stdout == help.stdout)
    }

    @Test func theReadmesTableIsTheCommandTable() async throws {
        let table = try await PirateHunterBinary.run(["help", "--markdown"])
        #expect(table.status == 0)
        let readme = try String(contentsOf: Repository.url.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains(table.stdout), "README.md's command table differs from 'pirate-hunter help --markdown'")
    }

    /// A shared flag with a bad value: the same exit code and the same message in every
    /// command that takes it (only the command's name differs).
    static let sharedFlagCases: [(flags: [String], code: Int32, message: String, commands: [String])] = [
        (["--hci", "bogus"], 64, "--hci: 'bogus' is not a transport", ["hunt", "treasure", "scan"]),
        (["--adapter", "hci0x"], 64, "--adapter: 'hci0x' is not a transport", ["hunt", "treasure", "scan"]),
        (["--hci", "serial:/dev/ttyS0@1234"], 64, "--hci: 'serial:/dev/ttyS0@1234' is not a transport", ["hunt", "treasure", "scan"]),
        (["--hci", "unix:/" + String(repeating: "x", count: 120)], 64, "is not a transport", ["hunt", "treasure", "scan"]),
        (["--duration", "0"], 64, "--duration: '0' is not a positive number of seconds", ["hunt", "treasure", "scan", "demo"]),
        (["--duration", "soon"], 64, "--duration: 'soon' is not a positive number of seconds", ["hunt", "treasure", "scan", "demo"]),
        (["--config", "/nonexistent/pirate.json"], 66, "/nonexistent/pirate.json", ["hunt", "treasure", "scan", "demo"]),
        (["--config"], 64, "--config needs a value", ["hunt", "treasure", "scan", "demo"]),
        (["--json=yes"], 64, "--json takes no value", ["hunt", "treasure", "scan", "demo"]),
        (["--record", "/nonexistent-dir/x.btsnoop", "--hci", "simulator", "--duration", "1"], 73,
         "--record /nonexistent-dir/x.btsnoop: No such file or directory", ["hunt", "treasure", "scan"]),
        (["--record", "/dev/null", "--hci", "simulator", "--duration", "1"], 73,
         "--record /dev/null: is a character device, not a regular file", ["hunt", "treasure", "scan"]),
        (["--frobnicate"], 64, "unknown option '--frobnicate'", ["hunt", "treasure", "scan", "demo", "replay", "say", "check"]),
    ]

    @Test(arguments: 0..<sharedFlagCases.count)
    func aSharedFlagMeansTheSameEverywhere(_ index: Int) async throws {
        let c = Self.sharedFlagCases[index]
        for command in c.commands {
            let extra = command == "replay" ? ["x.btsnoop"] : command == "say" ? ["ahoy"] : []
            let result = try await PirateHunterBinary.run([command] + extra + c.flags, timeout: 30)
            #expect(result.status == c.code, "\(command) \(c.flags): \(result.stderr)")
            let last = result.stderr.split(separator: "\n").last.map(String.init) ?? ""
            #expect(last.hasPrefix("pirate-hunter: \(command): "), "\(command): \(last)")
            #expect(last.contains(c.message), "\(command): \(last)")
            #expect(result.stdout.isEmpty)
        }
    }

    @Test func controlCharactersInAFlagAreNotEchoed() async throws {
        let result = try await PirateHunterBinary.run(["scan", "--hci", "\u{1B}[2J" + String(repeating: "A", count: 5000)])
        #expect(result.status == 64)
        #expect(!result.stderr.contains("\u{1B}"), "\(result.stderr.prefix(120))")
        #expect(result.stderr.count < 500, "a long value is cut: \(result.stderr.count) characters")
        #expect(result.stderr.contains("\\u{001B}[2J"), "the escape shown as text: \(result.stderr.prefix(120))")
    }

    @Test(arguments: ["hunt", "treasure", "scan"])
    func theSimulatorIsATransportLikeAnyOther(_ command: String) async throws {
        // 5 s: the run is timed from the start, and a loaded machine takes seconds to get there.
        let result = try await PirateHunterBinary.run([command, "--hci", "simulator", "--duration", "5", "--json", "--quiet"].filter { command == "hunt" || $0 != "--quiet" }, timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("on simulator"), "\(result.stderr)")
    }

    /// `scan` reads the configuration's ranging section: with the near edge moved to 2 cm,
    /// a beacon standing 2 m away is "far", and nothing is "near".
    /// One Pi is enough: any iBeacon can be a treasure, and `scan` gives the text to paste.
    @Test func scanGivesEachBeaconTheRegionTextOfATrailStep() async throws {
        let result = try await PirateHunterBinary.run(["scan", "--hci", "simulator", "--virtual-time", "--json", "--duration", "3"], timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        let sightings = try jsonObjects(result).filter { $0["event"] as? String == "sighting" && $0["kind"] as? String == "ibeacon" }
        #expect(!sightings.isEmpty)
        for s in sightings {
            let expected = "\(s["uuid"] as? String ?? ""):\(s["major"] as? Int ?? -1):\(s["minor"] as? Int ?? -1)"
            #expect(s["region"] as? String == expected)
        }
        // The text is what --region takes: the capture's beacon is hunted with it.
        let horizon = PirateHunterBinary.fixtures.appendingPathComponent("csacca_horizon74_btsnoop_hci.log").path
        let replayed = try await PirateHunterBinary.run(["replay", horizon, "--json"])
        let region = try #require(try jsonObjects(replayed).first { $0["event"] as? String == "sighting" }?["region"] as? String)
        let hunted = try await PirateHunterBinary.run(["replay", horizon, "--json", "--region", region])
        #expect(hunted.status == 0, "\(hunted.stderr)")
        #expect(try jsonObjects(hunted).contains { $0["event"] as? String == "state" && $0["state"] as? String == "inside" })
    }

    /// The set-up calibrates the box's measured power from `scan` at 1 m: the table shows the
    /// filtered level next to the last packet's RSSI (one packet is off by the channel's offset
    /// and the noise, up to ±10 dB; the level is what the distance comes from).
    @Test func scanShowsTheFilteredLevelToCalibrateWith() async throws {
        let result = try await PirateHunterBinary.run(["scan", "--hci", "simulator", "--virtual-time", "--duration", "6"], timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let header = try #require(lines.last { $0.hasPrefix("kind") && $0.contains("level") })
        let rssiAt = try #require(header.range(of: "rssi")).lowerBound.utf16Offset(in: header)
        let levelAt = try #require(header.range(of: "level")).lowerBound.utf16Offset(in: header)
        func column(_ line: String, _ from: Int, _ to: Int) -> Int? {
            let u = Array(line.utf16)
            guard u.count >= to else { return nil }
            return Int(String(decoding: u[from..<to], as: UTF16.self).trimmingCharacters(in: .whitespaces))
        }
        let rows = lines.filter { $0.hasPrefix("ibeacon") }
        let pairs = rows.compactMap { line -> (Int, Int)? in
            guard let rssi = column(line, rssiAt, levelAt), let level = column(line, levelAt, levelAt + 7) else { return nil }
            return (rssi, level)
        }
        #expect(!pairs.isEmpty, "\(rows)")
        for (rssi, level) in pairs {
            #expect((-110 ... -1).contains(level))
            #expect(abs(rssi - level) <= 30, "rssi \(rssi), level \(level)")
        }
        // The level is the filter's, not the packet's again: the simulated channels alone
        // put packets ±5 dB off it.
        #expect(pairs.contains { $0.0 != $0.1 }, "\(pairs)")
    }

    /// Two transmitters with one iBeacon identity (two boxes left at the same major and minor)
    /// are one beacon to the ranging, so `scan` says so on their rows (by identity, whatever
    /// power each advertises), where the parent sets up; one transmitter is not flagged.
    @Test(arguments: [true, false])
    func scanFlagsTwoTransmittersSharingAnIdentity(_ twin: Bool) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("twin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("ctl.sock").path
        let controller = try PirateHunterBinary.startFakeController(socket: socket, ["--beacon-hz", "10"] + (twin ? ["--twin"] : []))
        defer { controller.kill() }
        let result = try await PirateHunterBinary.run(["scan", "--hci", "unix:" + socket, "--duration", "4"], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        // The last table: with a twin, two rows (the powers differ), one identity, both flagged.
        let tables = result.stdout.components(separatedBy: "pirate-hunter scan  ")
        let rows = (tables.last ?? "").split(separator: "\n").filter { $0.hasPrefix("ibeacon") }
        #expect(rows.count == (twin ? 2 : 1), "\(rows)")
        #expect(rows.allSatisfy { $0.contains("TWO TRANSMITTERS") } == twin, "\(rows)")
    }

    /// From a checkout, the voices are found wherever the command is started (they were
    /// looked for relative to the caller's source file, which moved into a subfolder).
    @Test func theVoicesAreFoundFromAnyWorkingDirectory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cwd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let process = try ChildProcess(
            PirateHunterBinary.url.path,
            ["hunt", "--hci", "simulator", "--virtual-time", "--duration", "3", "--device",
             "file:FILE=\(directory.appendingPathComponent("t.wav").path),FORMAT=wav", "--cache-dir", PirateHunterBinary.lineCache],
            directory: directory.path)
        let ended = process.wait(timeout: 120)
        #expect(ended.succeeded, "\(ended)")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("t.wav").path))
    }

    @Test func scanRangesWithTheConfiguredSettings() async throws {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("scan-\(UUID().uuidString).json")
        try #"{"ranging": {"immediate_edge": 0.01, "near_edge": 0.02}}"#.write(to: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: config) }
        func proximities(_ extra: [String]) async throws -> [String] {
            let result = try await PirateHunterBinary.run(["scan", "--hci", "simulator", "--json", "--duration", "4"] + extra, timeout: 30)
            #expect(result.status == 0, "\(result.stderr)")
            let events = try jsonObjects(result)
            #expect(events.contains { $0["event"] as? String == "sighting" })
            return events.filter { $0["event"] as? String == "range" }.compactMap { $0["proximity"] as? String }
        }
        let tuned = try await proximities(["--config", config.path])
        #expect(tuned.contains("far"))
        #expect(!tuned.contains("near") && !tuned.contains("immediate"), "\(tuned)")
        let defaults = try await proximities([])
        #expect(defaults.contains("near"), "the 2 m beacon is near with the default edges: \(defaults)")
    }

    /// A tag calibrated in the hunter's file (`tags[].power`) is ranged by `scan` as the hunt
    /// ranges it: from the measured power, with the calibrated room's ± (the set-up walks the
    /// route watching scan's proximity after calibrating on the page); the others as before.
    @Test func scanRangesACalibratedTagFromItsMeasuredPower() async throws {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("scan-\(UUID().uuidString).json")
        try #"{"tags": [{"region": "50495241-5445-2D48-554E-544552000000:1:2", "power": -79}]}"#.write(to: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: config) }
        let result = try await PirateHunterBinary.run(["scan", "--hci", "simulator", "--virtual-time", "--json", "--duration", "6",
                                                       "--config", config.path], timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        /// The last range of a minor: metres and the log-normal sigma (sigma in metres is
        /// the 68 % band's half-width: m·sinh(ln-sigma)).
        func lastRange(minor: Int) throws -> (meters: Double, logSigma: Double) {
            let r = try #require(try jsonObjects(result).last {
                $0["event"] as? String == "range" && $0["minor"] as? Int == minor && $0["distance"] as? Double != nil
            })
            let meters = try #require(r["distance"] as? Double), sigma = try #require(r["sigma"] as? Double)
            return (meters, asinh(sigma / meters))
        }
        let calibrated = try lastRange(minor: 2), plain = try lastRange(minor: 3)
        // 2 m away, -59 advertised, -79 measured: 20 dB less path loss, a tenth of the distance.
        #expect(calibrated.meters < 0.5, "\(calibrated)")
        let ranging = RangingConfiguration.default
        let perDB = log(10) / (10 * ranging.pathLossExponent)
        // (The JSON gives metres to 1 cm: at 0.2 m that is a few hundredths of ln-sigma.)
        #expect(calibrated.logSigma >= ranging.calibratedEnvironmentSigma * perDB - 0.06
                && calibrated.logSigma < (ranging.calibratedEnvironmentSigma + 2) * perDB, "\(calibrated)")
        #expect(plain.meters > 3 && plain.logSigma >= ranging.environmentSigma * perDB - 0.01, "\(plain)")
    }
}

/// `hunt --json | head -1`: the reader goes away; the hunt stops as on SIGTERM (scanning
/// off, the recording completed), exit 0, not killed by SIGPIPE.
@Suite struct BrokenPipeTests {
    @Test func aReaderThatGoesAwayStopsTheHuntCleanly() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pipe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let capture = directory.appendingPathComponent("r.btsnoop").path
        // stdout a pipe only the hunt writes to and only this test reads, stderr a file.
        let fifo = directory.appendingPathComponent("stdout").path
        let reader = try openFIFOForReading(fifo)
        let errPath = directory.appendingPathComponent("stderr").path
        let process = try ChildProcess(
            PirateHunterBinary.url.path, ["hunt", "--hci", "simulator", "--json", "--quiet", "--record", capture, "--duration", "30"],
            stdout: .file(fifo), stderr: .file(errPath))
        // Read the first line, then close our end, as `head -1` does.
        var first = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !first.contains(0x0A) {
            let count = read(reader, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            first.append(contentsOf: buffer[0..<count])
        }
        close(reader)
        let ended = process.wait(timeout: 20)
        let stderr = String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: errPath))) ?? Data(), as: UTF8.self)
        #expect(!ended.signalled, "not killed by a signal")
        #expect(ended.status == 0, "\(stderr)")
        #expect(String(decoding: first, as: UTF8.self).hasPrefix("{\"t\": "))
        // The recording is complete, under its name, and ends with scanning switched off.
        #expect(!FileManager.default.fileExists(atPath: capture + ".partial"))
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: capture)))
        let parsed = BTSnoopParser.parseAll(bytes)
        #expect(parsed.error == nil)
        let commands = parsed.records.compactMap { record -> [UInt8]? in
            guard let datalink = parsed.datalink, let packet = try? record.packet(datalink: datalink), packet.type == .command else { return nil }
            return packet.bytes
        }
        #expect(commands.last == [0x0C, 0x20, 0x02, 0x00, 0x00], "the last command is LE Set Scan Enable off: \(commands.last ?? [])")
    }
}

@Suite struct ConfigurationFIFOTests {
    /// `--config` on a FIFO nobody writes to used to block the start forever.
    @Test func aFIFONobodyWritesToIsRefusedAtOnce() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fifo-\(UUID().uuidString).json").path
        #expect(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        let result = try await PirateHunterBinary.run(["scan", "--config", path, "--duration", "1"], timeout: 30)
        // Refused at once: this message, not the one after waiting `pipeTimeout` for bytes,
        // and not killed by the timeout (no wall-clock bound here: the tests run together).
        #expect(result.status == 66)
        #expect(result.stderr == "pirate-hunter: scan: \(path): a FIFO nobody writes to, not a configuration file\n")
    }
}

/// A recording onto a filesystem that fills up: said at once in one line, the command goes
/// on, the file ends at its last whole record, exit 74.
@Suite struct RecordingFullTests {
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aFullDiskIsSaidAtOnceAndTheCaptureStaysWhole() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("full-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let mount = try await Program.run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", directory.path])
        try #require(mount.status == 0, "\(mount.stderr)")
        defer { _ = try? Program.run("/bin/umount", [directory.path]) }
        let capture = directory.appendingPathComponent("r.btsnoop").path
        let result = try await PirateHunterBinary.run(["scan", "--hci", "simulator", "--virtual-time", "--duration", "120", "--json", "--record", capture], timeout: 60)
        #expect(result.status == 74, "\(result.stderr)")
        let errors = result.stderr.split(separator: "\n").filter { $0.contains("--record") }
        #expect(errors.count == 1, "\(errors)")
        #expect(errors.first?.contains("No space left on device") == true)
        #expect(result.stdout.split(separator: "\n").count > 1000, "scanning went on after the disk filled")
        let parsed = BTSnoopParser.parseAll([UInt8](try Data(contentsOf: URL(fileURLWithPath: capture))))
        #expect(parsed.error == nil, "the capture ends at a whole record")
        #expect(parsed.records.count > 100)
    }
}

/// `scan`'s rows: telemetry a row per transmitter (its counters change every frame: keyed by
/// value, each frame was a new row, and a minute of one TLM tag filled the screen), every
/// other beacon a row per value (a changed major or power is a row of its own).
@Suite struct ScanRowTests {
    @Test func telemetryIsOneRowPerTransmitter() throws {
        let a = BDAddress(bytes: (1, 2, 3, 4, 5, 6)), b = BDAddress(bytes: (1, 2, 3, 4, 5, 7))
        func tlm(_ count: UInt32, _ address: BDAddress) -> BeaconSighting {
            BeaconSighting(time: Double(count), address: address, addressType: 0, rssi: -60,
                           beacon: .eddystone(.tlm(batteryMillivolts: 3000, temperature: 21.5, advertisingCount: count, uptimeDeciseconds: count * 10)),
                           report: .legacy)
        }
        #expect(Set((1...50).map { ScanCommand.rowKey(tlm($0, a)) }).count == 1)
        #expect(ScanCommand.rowKey(tlm(1, a)) != ScanCommand.rowKey(tlm(1, b)))
        let uuid = try #require(parseUUID("FDA50693-A4E2-4FB1-AFCF-C6EB07647825"))
        func ibeacon(_ minor: UInt16, _ address: BDAddress) -> BeaconSighting {
            BeaconSighting(time: 0, address: address, addressType: 0, rssi: -60,
                           beacon: .iBeacon(IBeacon(uuid: uuid, major: 1, minor: minor, measuredPower: -59)), report: .legacy)
        }
        #expect(ScanCommand.rowKey(ibeacon(1, a)) == ScanCommand.rowKey(ibeacon(1, b)), "one identity, one row (twins are flagged in it)")
        #expect(ScanCommand.rowKey(ibeacon(1, a)) != ScanCommand.rowKey(ibeacon(2, a)))
    }
}

/// Flags that cannot do what they say together are refused (64), not silently ignored:
/// `hunt --quiet --out` wrote no file, `say --device --out` played nowhere, and
/// `replay --no-detector` without `--hunt` had no detector to switch off.
@Suite struct ContradictoryFlagTests {
    @Test(arguments: [
        (["hunt", "--hci", "simulator", "--virtual-time", "--no-web", "--duration", "1", "--quiet", "--out", "/nonexistent-dir/q.wav"],
         "pirate-hunter: hunt: give --quiet or --out, not both\n"),
        (["say", "ahoy", "--device", "null", "--out", "/nonexistent-dir/s.wav"], "pirate-hunter: say: give --device or --out, not both\n"),
        (["replay", "/dev/null", "--no-detector"], "pirate-hunter: replay: --no-detector goes with --hunt\n"),
    ])
    func areRefused(arguments: [String], expected: String) async throws {
        let result = try await PirateHunterBinary.run(arguments, timeout: 60)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr == expected)
    }
}
