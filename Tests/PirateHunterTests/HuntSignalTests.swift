import Foundation
import Testing
import TestSupport

/// `hunt` as systemd runs it: against a controller behind a unix socket (the H4 transport),
/// reloading its configuration on SIGHUP and stopping cleanly on SIGTERM.
@Suite struct HuntSignalTests {
    @Test func sighupReloadsAndABadFileIsRefusedWithoutStopping() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("ctl.sock").path
        let controller = try PirateHunterBinary.startFakeController(socket: socket, ["--beacon-hz", "10"])
        defer { controller.kill() }
        #expect(FileManager.default.fileExists(atPath: socket + ".ready"))

        let config = directory.appendingPathComponent("hunter.json")
        func write(language: String, region: String = "treasure", device: String = "null", foundHold: Double = 3, web: String = "") throws {
            let json = """
                { "transport": "unix:\(socket)",
                  "regions": [ { "name": "\(region)", "uuid": "50697261-7465-4875-6E74-547265617375" } ],
                  "voice": { "language": "\(language)", "cache_directory": "\(PirateHunterBinary.lineCache)" },
                  "audio": { "device": "\(device)" },
                  "hunt": { "found_hold": \(foundHold) }\(web) }
                """
            try json.write(to: config, atomically: true, encoding: .utf8)
        }
        try write(language: "en-pirate")

        let collected = OutputFile(directory.appendingPathComponent("stderr").path)
        let stdout = OutputFile(directory.appendingPathComponent("stdout").path)
        let hunt = try ChildProcess(PirateHunterBinary.url.path, ["hunt", "--config", config.path, "--json"],
                                    stdout: .file(stdout.path), stderr: .file(collected.path))
        defer { hunt.kill() }
        #expect(collected.waitFor("scanning on unix:", seconds: 30), "\(collected.text)")
        // Next to the treasure from the start: the initial state is inside.
        #expect(collected.waitFor("region treasure is inside", seconds: 15), "\(collected.text)")

        // A good change: Japanese lines from now on.
        try write(language: "ja")
        hunt.send(SIGHUP)
        #expect(collected.waitFor("configuration reloaded: voice", seconds: 30), "\(collected.text)")
        #expect(!collected.text.contains("regions (ranging starts over)"), "the same regions: ranging kept")
        // New regions and hunt rules are applied (ranging starts over); a new sound card waits.
        // The page's settings wait for a restart too, and the log says so (it said nothing).
        try write(language: "ja", region: "chest", device: "default", foundHold: 5, web: #", "web": { "enabled": false }"#)
        hunt.send(SIGHUP)
        #expect(collected.waitFor("configuration reloaded: voice, regions (ranging starts over), hunt; not until a restart: audio.device", seconds: 30), "\(collected.text)")
        #expect(collected.waitFor("web (the parent's page is opened at start)", seconds: 5), "\(collected.text)")
        #expect(collected.waitFor("region chest is inside", seconds: 15), "the new region is ranged: \(collected.text)")
        // A broken file: refused, named, and the hunt goes on.
        try "{ \"regions\": [ { \"name\": 1 } ] }".write(to: config, atomically: true, encoding: .utf8)
        hunt.send(SIGHUP)
        #expect(collected.waitFor("reload refused", seconds: 15), "\(collected.text)")
        #expect(hunt.isRunning)

        hunt.send(SIGTERM)
        let ended = hunt.wait(timeout: 60)
        #expect(ended.succeeded, "\(ended)")
        #expect(collected.text.contains("reload refused, keeping the running configuration: \(config.path): regions[0]."))
        // Ranging state survived the reloads: still inside, no second enter after them.
        let treasure = stdout.text.split(separator: "\n").filter { $0.contains("\"region\": \"treasure\"") }.joined(separator: "\n")
        #expect(treasure.components(separatedBy: "\"event\": \"enter\"").count + treasure.components(separatedBy: "\"state\": \"inside\"").count - 2 == 1)
    }
}

/// The box's reload (SIGHUP): the treasure advertised anew, and what waits for a restart
/// said in the log (the page's settings, the transport, the capture were dropped silently).
@Suite struct TreasureReloadTests {
    @Test func sighupReadvertisesAndSaysWhatWaitsForARestart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("box-hup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("ctl.sock").path
        let controller = try PirateHunterBinary.startFakeController(socket: socket, ["--beacon-hz", "10"])
        defer { controller.kill() }
        let config = directory.appendingPathComponent("treasure.json")
        func write(minor: Int, web: String = "") throws {
            try """
                { "transport": "unix:\(socket)", "web": { "enabled": false\(web) },
                  "treasure": { "uuid": "50495241-5445-2D48-554E-544552000000", "major": 1, "minor": \(minor) } }
                """.write(to: config, atomically: true, encoding: .utf8)
        }
        try write(minor: 1)
        let collected = OutputFile(directory.appendingPathComponent("stderr").path)
        let box = try ChildProcess(PirateHunterBinary.url.path, ["treasure", "--config", config.path, "--json"],
                                   stdout: .file(directory.appendingPathComponent("stdout").path), stderr: .file(collected.path))
        defer { box.kill() }
        #expect(collected.waitFor("unix:", seconds: 30), "\(collected.text)")
        Thread.sleep(forTimeInterval: 1)
        try write(minor: 2, web: #", "port": 9090"#)
        box.send(SIGHUP)
        #expect(collected.waitFor("configuration reloaded: advertising 50495241-5445-2D48-554E-544552000000 1/2; not until a restart: web (the parent's page is opened at start)", seconds: 30), "\(collected.text)")
        #expect(box.isRunning)
        box.send(SIGTERM)
        #expect(box.wait(timeout: 60).succeeded)
    }
}
