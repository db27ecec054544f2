import Audio
import Foundation
import Testing
import TestSupport

/// What a grown-up must fix, heard through ALSA's `file:` device as a speaker would play
/// it: the settings' mistake said once (never looped, even across restarts of the unit) and
/// the hunt started once the file is fixed; a speaker that appears late is said to be found,
/// then the line it missed. Real time (a real-time smoke test of the waiting paths).
@Suite(.serialized) struct PlainWordsTests {
    static func scratch() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("plain-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory + "/run", withIntermediateDirectories: true)
        return directory
    }

    /// Seconds of the WAV louder than speech's floor (10 ms windows).
    static func loudSeconds(_ path: String) throws -> Double {
        let heard = try WAVFile.read(path: path)
        let window = heard.sampleRate / 100
        var loud = 0
        var i = 0
        while i + window <= heard.samples.count {
            let energy = heard.samples[i..<(i + window)].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(window)
            if energy.squareRoot() > 500 { loud += 1 }
            i += window
        }
        return Double(loud) / 100
    }

    func hunt(_ arguments: [String], directory: String, environment: [String: String] = [:], whileRunning: (_ stdout: String, _ stderr: OutputFile) throws -> Void) throws -> (status: Int32, stdout: String, stderr: String) {
        var env = environment
        env["RUNTIME_DIRECTORY"] = env["RUNTIME_DIRECTORY"] ?? directory + "/run"
        let out = directory + "/out-\(UUID().uuidString)", err = directory + "/err-\(UUID().uuidString)"
        let process = try ChildProcess(PirateHunterBinary.url.path, arguments, environment: env, stdout: .file(out), stderr: .file(err))
        defer { process.kill() }
        try whileRunning(out, OutputFile(err))
        let ended = process.wait(timeout: 60)
        return (ended.signalled ? 128 + ended.status : ended.status,
                (try? String(contentsOfFile: out, encoding: .utf8)) ?? "", (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }

    /// SIGTERM (`systemctl stop`) ends the process with exit 0.
    static func stopsCleanly(_ process: ChildProcess, _ err: OutputFile, sourceLocation: SourceLocation = #_sourceLocation) {
        process.send(SIGTERM)
        let ended = process.wait(timeout: 60)
        #expect(ended.succeeded, "\(ended) \(err.text)", sourceLocation: sourceLocation)
    }

    /// `hunt --wait-for-fix --json` started on settings with a mistake (a clue's WAV that is
    /// not there), with `arguments` after: the process, the settings' path, its outputs.
    /// `more`: further members of the settings (after a comma).
    static func waitingForAFix(in directory: String, _ arguments: [String], more: String = "") throws -> (ChildProcess, String, OutputFile, OutputFile) {
        let config = directory + "/hunter.json"
        try Data((#"{"transport": "simulator", "hunt": {"trail": [{"region": "50495241-5445-2D48-554E-544552000000:1:1", "clue_wav": "one.wav"}]}"#
                  + more + "}").utf8)
            .write(to: URL(fileURLWithPath: config))
        let out = OutputFile(directory + "/out"), err = OutputFile(directory + "/err")
        let process = try ChildProcess(PirateHunterBinary.url.path,
                                       ["hunt", "--config", config, "--wait-for-fix", "--json", "--cache-dir", PirateHunterBinary.lineCache] + arguments,
                                       environment: ["RUNTIME_DIRECTORY": directory + "/run"], stdout: .file(out.path), stderr: .file(err.path))
        return (process, config, out, err)
    }

    /// A fix saved while the notice is still being said starts the hunt (the page's wait
    /// took the file as it found it then, the fix included, and waited for another change
    /// forever). The notice's voice and speaker threads start before the hunt's signalfd
    /// (which blocks SIGHUP and SIGTERM in the thread that makes it): they must not take those
    /// signals, or `systemctl reload` and `stop` ended the fixed hunt by default (no clean
    /// stop, the adapter left scanning) instead of reloading and stopping it.
    @Test func afterTheNoticeTheFixedHuntStillReloadsOnSighupAndStopsCleanlyOnSigterm() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (process, config, out, err) = try Self.waitingForAFix(in: directory, ["--device", "file:FILE=\(directory)/notice.wav,FORMAT=wav"])
        defer { process.kill() }
        #expect(out.waitFor("notice-settings-step", seconds: 30), "\(err.text)")
        Thread.sleep(forTimeInterval: 2)
        try Data(#"{"transport": "simulator"}"#.utf8).write(to: URL(fileURLWithPath: config))
        #expect(out.waitFor(#""event_name": "startup""#, seconds: 30), "the hunt did not start after the fix: \(err.text)")
        process.send(SIGHUP)
        #expect(err.waitFor("configuration reloaded", seconds: 15), "\(err.text)")
        #expect(process.isRunning, "SIGHUP ended the hunt")
        Self.stopsCleanly(process, err)
    }

    /// `systemctl reload` (SIGHUP) while the settings wait to be fixed reads the file again
    /// and waits on; `stop` (SIGTERM) ends the wait with exit 0. SIGHUP killed the process by
    /// default, which systemd counts as a clean exit and does not restart: the hunter stayed
    /// dead until someone started it. With the parent's page and without it.
    @Test(arguments: [["--web-port", "0"], ["--no-web"]])
    func aReloadWhileTheSettingsWaitReadsThemAgainAndAStopEndsTheWait(page: [String]) throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (process, _, out, err) = try Self.waitingForAFix(in: directory, ["--device", "null"] + page)
        defer { process.kill() }
        #expect(out.waitFor("notice-settings-step", seconds: 30), "\(err.text)")
        let logged = err.text.components(separatedBy: "clue_wav").count
        process.send(SIGHUP)
        // Read again at once (the file did not change): its mistake logged again.
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline, err.text.components(separatedBy: "clue_wav").count == logged { Thread.sleep(forTimeInterval: 0.1) }
        #expect(err.text.components(separatedBy: "clue_wav").count > logged, "no reread on SIGHUP: \(err.text)")
        #expect(process.isRunning, "SIGHUP ended the wait")
        Self.stopsCleanly(process, err)
    }

    /// A mistake mended outside the settings file (the missing clue's WAV copied in) starts
    /// the hunt: the wait read the file again only when the file itself changed, so the hunt
    /// waited for a reload or a restart. The polls of the unchanged file log nothing new.
    @Test(arguments: [["--web-port", "0"], ["--no-web"]])
    func aClueCopiedInStartsTheWaitingHunt(page: [String]) throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (process, _, out, err) = try Self.waitingForAFix(in: directory, ["--device", "null"] + page)
        defer { process.kill() }
        #expect(out.waitFor("notice-settings-step", seconds: 30), "\(err.text)")
        let logged = err.text.components(separatedBy: "clue_wav").count
        // Three polls of the unchanged file: the same mistake is not logged again.
        Thread.sleep(forTimeInterval: 6.5)
        #expect(err.text.components(separatedBy: "clue_wav").count == logged, "\(err.text)")
        let clue = PCMBuffer(sampleRate: 22050, channels: 1, samples: (0..<11025).map { Int16(truncatingIfNeeded: ($0 % 50) * 400 - 10000) })
        try WAVFile.write(clue, to: directory + "/one.wav")
        #expect(out.waitFor(#""event_name": "startup""#, seconds: 30), "the hunt did not start once the clue was there: \(err.text)")
        Self.stopsCleanly(process, err)
    }

    /// A page the parent switched off in the file (`web.enabled` false) stays off while the
    /// settings wait to be fixed: the wait took only the flags and opened it anyway.
    @Test func aPageSwitchedOffInTheFileStaysOffWhileTheSettingsWait() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The port flag alone (an ephemeral port: a page would surely open) does not switch it on.
        let (process, _, out, err) = try Self.waitingForAFix(in: directory, ["--device", "null", "--web-port", "0"], more: #", "web": {"enabled": false}"#)
        defer { process.kill() }
        #expect(out.waitFor("notice-settings-step", seconds: 30), "\(err.text)")
        #expect(err.waitFor("waiting for the settings to be fixed", seconds: 15), "\(err.text)")
        Thread.sleep(forTimeInterval: 1)
        #expect(!err.text.contains("parent's page"), "\(err.text)")
        Self.stopsCleanly(process, err)
    }

    @Test func aMistakeInTheSettingsIsSaidOnceAndTheHuntStartsWhenItIsFixed() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/hunter.json"
        let broken = #"{"transport": "simulator", "hunt": {"trail": [{"region": "50495241-5445-2D48-554E-544552000000:1:1"}, {"region": "50495241-5445-2D48-554E-544552000000:1:2", "clue_wav": "two.wav"}]}}"#
        try Data(broken.utf8).write(to: URL(fileURLWithPath: config))
        let heard = directory + "/notice.wav"
        let arguments = ["hunt", "--config", config, "--wait-for-fix", "--json", "--duration", "3", "--device", "file:FILE=\(heard),FORMAT=wav",
                         "--cache-dir", PirateHunterBinary.lineCache]
        let first = try hunt(arguments, directory: directory) { _, _ in
            // The notice is said (about 6 s at the child's pace), then the fix is made: waited
            // for (a loaded machine is slow to start and to speak), at most a minute.
            let end = Date().addingTimeInterval(60)
            while Date() < end, ((try? Self.loudSeconds(heard)) ?? 0) <= 2.5 { Thread.sleep(forTimeInterval: 0.25) }
            Thread.sleep(forTimeInterval: 1)
            #expect(try Self.loudSeconds(heard) > 2.5, "the notice was not heard")
            try Data(#"{"transport": "simulator"}"#.utf8).write(to: URL(fileURLWithPath: config))
        }
        #expect(first.status == 0, "\(first.stderr)")
        let said = first.stdout.split(separator: "\n").filter { $0.contains(#""event": "say""#) }
        #expect(said.first?.contains(#""event_name": "notice-settings-step""#) == true, "\(first.stdout)")
        #expect(said.first?.contains("step 2 of the treasure trail has a mistake. Run pirate hunter check") == true)
        #expect(said.contains { $0.contains(#""event_name": "startup""#) }, "the hunt did not start after the fix")
        #expect(first.stderr.contains("hunt.trail[1].clue_wav: \(directory)/two.wav: cannot read"))
        #expect(first.stderr.components(separatedBy: "say [notice-settings-step]").count == 2)

        // The unit restarted with the same mistake since boot: logged, not said again.
        try Data(broken.utf8).write(to: URL(fileURLWithPath: config))
        let again = try hunt(arguments, directory: directory) { _, stderr in
            // The broken file read and judged before it is fixed (waited for, not guessed).
            #expect(stderr.waitFor("already said since boot", seconds: 60), "\(stderr.text)")
            try Data(#"{"transport": "simulator"}"#.utf8).write(to: URL(fileURLWithPath: config))
        }
        #expect(again.status == 0, "\(again.stderr)")
        #expect(!again.stdout.contains("notice-settings"), "\(again.stdout)")
        #expect(again.stderr.contains("already said since boot"))
        // Without --wait-for-fix (a person at a terminal): the exit code, as before.
        try Data(broken.utf8).write(to: URL(fileURLWithPath: config))
        let plain = try PirateHunterBinary.run(Array(arguments.filter { $0 != "--wait-for-fix" }))
        #expect(plain.status == 66)
    }

    @Test func aSpeakerFoundLateIsSaidAndTheFirstClueFollows() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // An ALSA configuration of our own: the device "late" is defined only after the start.
        let alsa = directory + "/alsa.conf"
        try FileManager.default.copyItem(atPath: "/usr/share/alsa/alsa.conf", toPath: alsa)
        let heard = directory + "/late.wav"
        let config = directory + "/hunter.json"
        try Data(#"""
            {"transport": "simulator", "audio": {"device": "late"},
             "hunt": {"trail": [{"region": "50495241-5445-2D48-554E-544552000000:1:9", "clue": "Look under the big tree."}]}}
            """#.utf8).write(to: URL(fileURLWithPath: config))
        let result = try hunt(
            ["hunt", "--config", config, "--json", "--duration", "18", "--cache-dir", PirateHunterBinary.lineCache],
            directory: directory, environment: ["ALSA_CONFIG_PATH": alsa]
        ) { stdout, _ in
            // The speaker appears once the clue has gone to none (not after a fixed time: on a
            // loaded machine the debug build took longer than 4 s to get there).
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, !((try? String(contentsOfFile: stdout, encoding: .utf8)) ?? "").contains(#""event_name": "clue""#) {
                Thread.sleep(forTimeInterval: 0.1)
            }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: alsa))
            handle.seekToEndOfFile()
            handle.write(Data("\npcm.late { type file slave.pcm null file \"\(heard)\" format wav }\n".utf8))
            try handle.close()
        }
        #expect(result.status == 0, "\(result.stderr)")
        let events = result.stdout.split(separator: "\n").filter { $0.contains(#""event": "say""#) }.compactMap { line -> String? in
            guard let range = line.range(of: #""event_name": ""#) else { return nil }
            return String(line[range.upperBound...].prefix { $0 != "\"" })
        }
        // The start-up line and the clue went to no speaker; the clue is said again after it.
        #expect(events.prefix(4) == ["startup", "clue", "notice-speaker-found", "clue"], "\(events)")
        #expect(result.stderr.contains("audio: speaker found"))
        #expect(try Self.loudSeconds(heard) > 2, "nothing heard after the speaker appeared")
    }
}
