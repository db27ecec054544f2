import Bluetooth
import Foundation
import Testing
import TestSupport

@Suite struct ReplayCommandTests {
    let horizon = PirateHunterBinary.fixtures.appendingPathComponent("csacca_horizon74_btsnoop_hci.log").path
    let btsnooper = PirateHunterBinary.fixtures.appendingPathComponent("wangdalian_btsnooper_btsnoop_hci.log").path

    /// An advertising report event of the game's own treasure UUID ("PIRATE-HUNTER"), major 1,
    /// `minor`, heard at `rssi` from the address ending `addressEnd`.
    static func treasureReport(minor: UInt8 = 1, rssi: Int8, addressEnd: UInt8 = 0x66) -> HCIPacket {
        let uuid: [UInt8] = [0x50, 0x49, 0x52, 0x41, 0x54, 0x45, 0x2D, 0x48, 0x55, 0x4E, 0x54, 0x45, 0x52, 0x00, 0x00, 0x00]
        let data: [UInt8] = [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid + [0x00, 0x01, 0x00, minor, UInt8(bitPattern: -59)]
        let report: [UInt8] = [0x02, 0x01, 0x03, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, addressEnd, UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]
        return HCIPacket(type: .event, bytes: [0x3E, UInt8(report.count)] + report)
    }

    @Test func horizonCapturePrintsItsElevenIBeaconsAsTheContractSays() async throws {
        let result = try await PirateHunterBinary.run(["replay", horizon, "--json"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        let objects = try jsonObjects(result)
        let sightings = objects.filter { $0["event"] as? String == "sighting" }
        #expect(sightings.count == 11)
        #expect(objects.count == sightings.count + objects.filter { $0["event"] as? String == "range" }.count)
        for s in sightings {
            #expect(s["kind"] as? String == "ibeacon")
            #expect(s["uuid"] as? String == "494E5445-4C4C-495F-524F-434B535F4857")
            #expect([20594, 20597].contains(s["major"] as? Int ?? 0))
            #expect(s["minor"] as? Int == 62207)
            #expect(s["power"] as? Int == -62)
            #expect((-94...(-49)).contains(s["rssi"] as? Int ?? 0))
            #expect((s["address"] as? String)?.hasPrefix("A4:C1:38:") == true)
        }
        let times = sightings.compactMap { $0["t"] as? Double }
        #expect(times == times.sorted())
        #expect(times.first == 0.696926)
        // Key order is part of the contract.
        #expect(result.lines.first?.hasPrefix(#"{"t": 0.696926, "event": "sighting", "kind": "ibeacon", "address": "A4:C1:38:BF:6F:AB", "uuid": "#) == true)
    }

    /// `replay --hunt` hears each report when the capture says it came, as the live hunter
    /// stamps a report when it comes: not on the virtual clock's 20 ms steps, which put a
    /// report up to 20 ms late and, at 1 Hz, spans the ranging compares with 2.5 s to either
    /// side of it (a find the capture held was lost through the appliance).
    @Test func theHuntHearsEachReportAtTheCapturesOwnTime() async throws {
        let region = ["--region", "494E5445-4C4C-495F-524F-434B535F4857"]
        func rangeTimes(_ result: CommandResult) throws -> Set<Double> {
            Set(try jsonObjects(result).filter { $0["event"] as? String == "range" }.compactMap { $0["t"] as? Double })
        }
        let ranging = try await PirateHunterBinary.run(["replay", horizon, "--json"] + region)
        let hunt = try await PirateHunterBinary.run(["replay", horizon, "--hunt", "--json", "--cache-dir", PirateHunterBinary.lineCache] + region,
                                                    timeout: 60)
        #expect(ranging.status == 0 && hunt.status == 0, "\(hunt.stderr)")
        let heard = try rangeTimes(hunt), captured = try rangeTimes(ranging)
        #expect(heard.count >= 5)
        #expect(heard.isSubset(of: captured), "\(heard.subtracting(captured).sorted())")
        #expect(heard.contains(0.696926) && heard.contains(8.711156))
    }

    /// A btmon capture of two adapters (btvirt's pair, a hunter and a box on one Pi): the
    /// first adapter's reports are replayed, the other's skipped and counted (both were
    /// replayed as one receiver, its beacons mixed in).
    @Test func aMonitorCaptureOfTwoAdaptersReplaysTheFirst() async throws {
        let directory = try Scratch("two")
        let encoder = BTSnoopEncoder(datalink: .linuxMonitor)
        var file = encoder.header
        for i in 0..<20 {
            let adapter = UInt8(i % 2)
            // hci0 hears minor 1, hci1 minor 2.
            var record = encoder.record(Self.treasureReport(minor: adapter + 1, rssi: -60, addressEnd: 0x60 + adapter), received: true,
                                        unixMicroseconds: 1_780_000_000_000_000 + Int64(i) * 100_000)
            // The flags (big-endian, at 8): the adapter index in the upper 16 bits.
            record[9] = adapter
            file += record
        }
        let path = directory.path + "/two.btsnoop"
        try Data(file).write(to: URL(fileURLWithPath: path))
        let result = try await PirateHunterBinary.run(["replay", path, "--json"], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let minors = try jsonObjects(result).filter { $0["event"] as? String == "sighting" }.compactMap { $0["minor"] as? Int }
        #expect(minors.count == 10, "\(minors)")
        #expect(Set(minors) == [1], "\(minors)")
        #expect(result.stderr.contains("the capture holds several adapters: hci0's was replayed, 10 event(s) of the others skipped"), "\(result.stderr)")
    }

    /// A Pi without a clock chip set by NTP mid-capture: the records' clock jumps forward by
    /// days or back by an hour while the tag keeps advertising once a second. `replay`
    /// replays the jump as `replay --hunt` does (forward by at most `CaptureClock.longestGap`,
    /// back as no time): its times only go forward. Before, a jump forward printed times days
    /// on, and after a jump back every record was printed at times before the first and the
    /// ranging took them all as one instant (the engine's clock does not go back).
    @Test(arguments: [259_200_000_000, -3_600_000_000] as [Int64])
    func aCaptureWhoseClockJumpsIsReplayedWithoutTheJump(jump: Int64) async throws {
        let directory = try Scratch("jump")
        let encoder = BTSnoopEncoder(datalink: .h4)
        var file = encoder.header
        for i in 0..<60 {
            let event = Self.treasureReport(rssi: Int8(-70 + i % 3))
            let stamp = 1_780_000_000_000_000 + Int64(i) * 1_000_000 + (i >= 30 ? jump : 0)
            file += encoder.record(event, received: true, unixMicroseconds: stamp)
        }
        let path = directory.path + "/jump.btsnoop"
        try Data(file).write(to: URL(fileURLWithPath: path))
        let result = try await PirateHunterBinary.run(["replay", path, "--json", "--region", "50495241-5445-2D48-554E-544552000000"], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let objects = try jsonObjects(result)
        let times = objects.compactMap { $0["t"] as? Double }
        #expect(times == times.sorted(), "\(times)")
        let last = try #require(times.last)
        #expect(last < 59 + CaptureClock.longestGap + 1)
        #expect(objects.filter { $0["event"] as? String == "sighting" }.count == 60)
        // After the jump the records are a second apart again, as they were.
        let sightingTimes = objects.filter { $0["event"] as? String == "sighting" }.compactMap { $0["t"] as? Double }
        #expect(abs(sightingTimes[31] - sightingTimes[30] - 1) < 1e-6 && abs(sightingTimes[59] - sightingTimes[30] - 29) < 1e-6)
        #expect(result.stderr.contains("the capture's clock jumped 1 time(s)"), "\(result.stderr)")
    }

    /// The find is said when "immediate" has held `found_hold`, not at the hunt's next
    /// periodic tick (up to 0.25 s later): a tag heard far off for a minute, then at hand.
    @Test func theFindIsSaidWhenItIsDueNotAtTheNextTick() async throws {
        let directory = try Scratch("due")
        let encoder = BTSnoopEncoder(datalink: .h4)
        var file = encoder.header
        for i in 0..<300 {
            // Every 0.3 s, off any tick's grid (and no packet when the find falls due); 20 m
            // off for a minute, then held over the tag.
            let event = Self.treasureReport(rssi: Int8((i < 200 ? -85 : -57) + (i % 2 == 0 ? 2 : -2)))
            file += encoder.record(event, received: true, unixMicroseconds: 1_780_000_000_000_000 + Int64(i) * 300_000 + 3_717)
        }
        let path = directory.path + "/arrive.btsnoop"
        try Data(file).write(to: URL(fileURLWithPath: path))
        let result = try await PirateHunterBinary.run(
            ["replay", path, "--hunt", "--json", "--region", "50495241-5445-2D48-554E-544552000000", "--cache-dir", PirateHunterBinary.lineCache],
            timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let objects = try jsonObjects(result)
        let immediate = objects.first { $0["event"] as? String == "proximity" && $0["to"] as? String == "immediate" }?["t"] as? Double
        let found = objects.first { $0["event"] as? String == "say" && $0["event_name"] as? String == "treasure-found" }?["t"] as? Double
        guard let immediate, let found else {
            Issue.record("no immediate or no find: \(result.stdout)")
            return
        }
        #expect(immediate > 60 && immediate < 66)
        #expect(abs(found - (immediate + 0.5)) < 1e-3, "immediate \(immediate), found \(found)")
    }

    @Test func extendedCapturePrintsItsEightIBeacons() async throws {
        let result = try await PirateHunterBinary.run(["replay", btsnooper, "--json"])
        #expect(result.status == 0)
        let sightings = try jsonObjects(result).filter { $0["event"] as? String == "sighting" }
        #expect(sightings.count == 8)
        #expect(Set(sightings.compactMap { $0["major"] as? Int }) == [100, 102, 10240, 39144, 43240])
        #expect(Set(sightings.compactMap { $0["uuid"] as? String }) == ["FDA50693-A4E2-4FB1-AFCF-C6EB07647825"])
        #expect(Set(sightings.compactMap { $0["power"] as? Int }).isSubset(of: Set(-64...(-56))))
    }

    @Test func regionsAddStateEnterExitAndProximityEvents() async throws {
        let result = try await PirateHunterBinary.run(["replay", horizon, "--json", "--region", "494E5445-4C4C-495F-524F-434B535F4857:20594"])
        #expect(result.status == 0)
        let objects = try jsonObjects(result)
        let kinds = Set(objects.compactMap { $0["event"] as? String })
        #expect(kinds.isSuperset(of: ["sighting", "range", "state", "proximity", "nearest"]))
        let state = try #require(objects.first { $0["event"] as? String == "state" })
        #expect(state["region"] as? String == "494E5445-4C4C-495F-524F-434B535F4857:20594")
        #expect(["inside", "outside", "unknown"].contains(state["state"] as? String ?? ""))
        for r in objects where r["event"] as? String == "range" {
            #expect(["immediate", "near", "far", "unknown"].contains(r["proximity"] as? String ?? ""))
            #expect(r["rssi"] is Double)
            #expect(r.keys.contains("distance") && r.keys.contains("sigma"))
        }
    }

    @Test func withoutRegionsNoRegionEvents() async throws {
        let objects = try jsonObjects(try await PirateHunterBinary.run(["replay", horizon, "--json"]))
        #expect(Set(objects.compactMap { $0["event"] as? String }) == ["sighting", "range"])
    }

    @Test func tableWithoutJSON() async throws {
        let result = try await PirateHunterBinary.run(["replay", horizon])
        #expect(result.status == 0)
        #expect(result.lines.first?.hasPrefix("t (s)") == true)
        #expect(result.lines.filter { $0.contains("ibeacon") }.count == 11)
        #expect(result.lines.contains { $0.hasPrefix("0.697     ibeacon") })
    }

    @Test func missingFileExits66() async throws {
        let result = try await PirateHunterBinary.run(["replay", "/nonexistent/capture.log", "--json"])
        #expect(result.status == 66)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stderr.contains("/nonexistent/capture.log"))
    }

    /// A directory is no capture: 66 and one line, with and without --hunt (it was 74, an
    /// I/O error, from its read).
    @Test(arguments: [[], ["--hunt"]])
    func aDirectoryExits66(extra: [String]) async throws {
        let directory = FileManager.default.temporaryDirectory.path
        let result = try await PirateHunterBinary.run(["replay", directory] + extra)
        #expect(result.status == 66, "\(result.stderr)")
        #expect(result.stderr == "pirate-hunter: replay: \(directory): is a directory, not a capture\n", "\(result.stderr)")
    }

    @Test func notBTSnoopExits65WithOneLine() async throws {
        let result = try await PirateHunterBinary.run(["replay", Repository.url.appendingPathComponent("Package.swift").path])
        #expect(result.status == 65)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "pirate-hunter: replay: \(Repository.url.appendingPathComponent("Package.swift").path): not a btsnoop file (no 'btsnoop\\0' magic)\n")
    }

    @Test func truncatedCaptureKeepsWhatCameBeforeAndExits65() async throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: horizon))
        let cut = FileManager.default.temporaryDirectory.appendingPathComponent("cut-\(UUID().uuidString).log")
        try bytes.prefix(15_000).write(to: cut)
        defer { try? FileManager.default.removeItem(at: cut) }
        let result = try await PirateHunterBinary.run(["replay", cut.path, "--json"])
        #expect(result.status == 65)
        #expect(result.stderr.contains("record "))
        let whole = try jsonObjects(try await PirateHunterBinary.run(["replay", horizon, "--json"])).filter { $0["event"] as? String == "sighting" }
        let part = try jsonObjects(result).filter { $0["event"] as? String == "sighting" }
        #expect(!part.isEmpty && part.count < whole.count)
        #expect(part.map { $0["t"] as? Double } == whole.prefix(part.count).map { $0["t"] as? Double })
    }

    @Test func usageErrorsExit64() async throws {
        #expect(try await PirateHunterBinary.run(["replay"]).status == 64)
        #expect(try await PirateHunterBinary.run(["replay", horizon, "--bogus"]).status == 64)
        let bad = try await PirateHunterBinary.run(["replay", horizon, "--region", "not-a-uuid"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--region: 'not-a-uuid'"))
        #expect(try await PirateHunterBinary.run(["no-such-command"]).status == 64)
        #expect(try await PirateHunterBinary.run([]).status == 64)
    }
}

/// `replay --hunt --out F.wav` writes what would have been heard the safe way: into a
/// temporary of ours beside F, put in place at the end; never through a planted link.
@Suite struct ReplayOutTests {
    let horizon = PirateHunterBinary.fixtures.appendingPathComponent("csacca_horizon74_btsnoop_hci.log").path

    @Test func theWAVIsPutInPlaceAndALinkOrAMissingFolderIsRefused() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let common = ["--hunt", "--json", "--region", "494E5445-4C4C-495F-524F-434B535F4857", "--cache-dir", PirateHunterBinary.lineCache]

        let good = directory.appendingPathComponent("heard.wav").path
        let made = try await PirateHunterBinary.run(["replay", horizon] + common + ["--out", good], timeout: 60)
        #expect(made.status == 0, "\(made.stderr)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        #expect(bytes.count > 44 && Array(bytes.prefix(4)) == Array("RIFF".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["heard.wav"], "no temporary left")

        let target = directory.appendingPathComponent("someone-elses.txt").path
        let link = directory.appendingPathComponent("link.wav").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let linked = try await PirateHunterBinary.run(["replay", horizon] + common + ["--out", link], timeout: 60)
        #expect(linked.status == 73)
        #expect(linked.stderr.contains("link.wav: cannot write: it is a symbolic link"), "\(linked.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target), "nothing written through the link")

        let missing = try await PirateHunterBinary.run(["replay", horizon] + common + ["--out", directory.appendingPathComponent("no/such/x.wav").path], timeout: 60)
        #expect(missing.status == 73)
        #expect(missing.stderr.hasSuffix("x.wav: cannot write: No such file or directory\n"), "\(missing.stderr)")
    }

    /// The demo without a sound card writes demo.wav where it was started, the same way.
    @Test func theDemosWAVIsNotWrittenThroughAPlantedLink() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("demo-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let target = directory.appendingPathComponent("someone-elses.txt").path
        try FileManager.default.createSymbolicLink(atPath: directory.appendingPathComponent("demo.wav").path, withDestinationPath: target)
        let process = try ChildProcess(
            PirateHunterBinary.url.path, ["demo", "--virtual-time", "--device", "default", "--cache-dir", PirateHunterBinary.lineCache],
            environment: ["ALSA_CONFIG_PATH": "/nonexistent/alsa.conf"],  // no card here, even on a machine with one
            inheritEnvironment: false, directory: directory.path)
        #expect(process.wait(timeout: 120).status == 73)
        #expect(!FileManager.default.fileExists(atPath: target))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["demo.wav"], "no temporary left")
    }
}
