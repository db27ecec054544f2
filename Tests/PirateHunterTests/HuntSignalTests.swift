import Foundation
import Testing

/// `hunt` as systemd runs it: against a controller behind a unix socket (the H4 transport),
/// reloading its configuration on SIGHUP and stopping cleanly on SIGTERM.
@Suite struct HuntSignalTests {
    @Test func sighupReloadsAndABadFileIsRefusedWithoutStopping() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("ctl.sock").path
        let controller = try PirateHunterBinary.startFakeController(socket: socket, ["--beacon-hz", "10"])
        defer { kill(controller.processIdentifier, SIGKILL) }
        #expect(FileManager.default.fileExists(atPath: socket + ".ready"))

        let config = directory.appendingPathComponent("hunter.json")
        func write(language: String, region: String = "treasure", device: String = "null", foundHold: Double = 3) throws {
            let json = """
                { "transport": "unix:\(socket)",
                  "regions": [ { "name": "\(region)", "uuid": "50697261-7465-4875-6E74-547265617375" } ],
                  "voice": { "language": "\(language)", "cache_directory": "\(PirateHunterBinary.lineCache)" },
                  "audio": { "device": "\(device)" },
                  "hunt": { "found_hold": \(foundHold) } }
                """
            try json.write(to: config, atomically: true, encoding: .utf8)
        }
        try write(language: "en-pirate")

        let hunt = Process()
        hunt.executableURL = PirateHunterBinary.url
        hunt.arguments = ["hunt", "--config", config.path, "--json"]
        let err = Pipe()
        let out = Pipe()
        hunt.standardError = err
        hunt.standardOutput = out
        try hunt.run()
        let collected = LockedText()
        err.fileHandleForReading.readabilityHandler = { collected.append($0.availableData) }
        let stdout = LockedText()
        out.fileHandleForReading.readabilityHandler = { stdout.append($0.availableData) }

        func waitFor(_ text: String, seconds: Double) -> Bool {
            let end = Date().addingTimeInterval(seconds)
            while Date() < end {
                if collected.text.contains(text) { return true }
                usleep(50_000)
            }
            return false
        }
        #expect(waitFor("scanning on unix:", seconds: 30), "\(collected.text)")
        // Next to the treasure from the start: the initial state is inside.
        #expect(waitFor("region treasure is inside", seconds: 15), "\(collected.text)")

        // A good change: Japanese lines from now on.
        try write(language: "ja")
        kill(hunt.processIdentifier, SIGHUP)
        #expect(waitFor("configuration reloaded: voice", seconds: 30), "\(collected.text)")
        #expect(!collected.text.contains("regions (ranging starts over)"), "the same regions: ranging kept")
        // New regions and hunt rules are applied (ranging starts over); a new sound card waits.
        try write(language: "ja", region: "chest", device: "default", foundHold: 5)
        kill(hunt.processIdentifier, SIGHUP)
        #expect(waitFor("configuration reloaded: voice, regions (ranging starts over), hunt; not until a restart: audio.device", seconds: 30), "\(collected.text)")
        #expect(waitFor("region chest is inside", seconds: 15), "the new region is ranged: \(collected.text)")
        // A broken file: refused, named, and the hunt goes on.
        try "{ \"regions\": [ { \"name\": 1 } ] }".write(to: config, atomically: true, encoding: .utf8)
        kill(hunt.processIdentifier, SIGHUP)
        #expect(waitFor("reload refused", seconds: 15), "\(collected.text)")
        #expect(hunt.isRunning)

        kill(hunt.processIdentifier, SIGTERM)
        hunt.waitUntilExit()
        err.fileHandleForReading.readabilityHandler = nil
        out.fileHandleForReading.readabilityHandler = nil
        #expect(hunt.terminationStatus == 0)
        #expect(collected.text.contains("reload refused, keeping the running configuration: \(config.path): regions[0]."))
        // Ranging state survived the reloads: still inside, no second enter after them.
        let treasure = stdout.text.split(separator: "\n").filter { $0.contains("\"region\": \"treasure\"") }.joined(separator: "\n")
        #expect(treasure.components(separatedBy: "\"event\": \"enter\"").count + treasure.components(separatedBy: "\"state\": \"inside\"").count - 2 == 1)
    }
}

/// Text appended from a pipe's handler thread, read from the test's.
final class LockedText: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func append(_ more: Data) {
        lock.lock()
        data.append(more)
        lock.unlock()
    }
    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }
}
