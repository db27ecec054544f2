#if canImport(Glibc)
import Glibc
#endif
import Audio
import FoundationEssentials
import Game
import Hunt
import ParentPage
import Radio
import Voice

/// `hunt --wait-for-fix` (what the service runs): a configuration the hunt refuses is not an
/// exit a parent with no screen would never hear of. Its lines go to the journal; the
/// grown-up hears, once per mistake and boot (`BootMemory`), in plain words and the pack's
/// language, that the settings have a mistake and to run `pirate-hunter check`; then the
/// file is read again every `pollInterval` seconds and the hunt starts as soon as it can be
/// hunted (a new mistake is said once too). SIGTERM and SIGINT end the wait (exit 0, as a
/// hunt stopped); SIGHUP (`systemctl reload`) reads the file again at once, changed or not.
/// Both are taken through a signalfd made before anything is said: by default SIGHUP ended
/// the process, which systemd counts as a clean exit and does not restart.
enum SettingsNotice {
    static let pollInterval = 2.0

    /// Whether editing the file can mend `error` (a usage error cannot).
    static func canWaitFor(_ error: CLIError) -> Bool {
        [.config, .noInput, .noPermission].contains(error.code)
    }

    /// How a page's wait ended.
    private enum PageWait {
        case loaded(HunterSetup)
        case stopped
        /// The page could not run: the plain wait follows.
        case noPage
    }

    /// Waits until `load` succeeds, saying each new problem once; returns what it loaded, or
    /// nil when SIGTERM or SIGINT ended the wait.
    static func wait(
        after error: CLIError, flags: ConfigurationFlags, json: Bool,
        load: @escaping () throws(CLIError) -> HunterSetup
    ) -> HunterSetup? {
        // Before anything is said (the voice's threads inherit the mask).
        let signals = try? SignalSource([SIGINT, SIGTERM, SIGHUP])
        var problem = error
        var told = Set<String>()
        let path = flags.configPath ?? HunterConfiguration.defaultPath
        var stamp = fileStamp(path)
        tell(problem, flags: flags, json: json, told: &told)
        switch waitWithPage(problem: problem, path: path, since: stamp, signals: signals, flags: flags, json: json, told: &told, load: load) {
        case let .loaded(setup): return setup
        case .stopped: return nil
        case .noPage: break
        }
        while true {
            var reload = false
            if let signals {
                var ready = pollfd(fd: signals.fd, events: Int16(POLLIN), revents: 0)
                if poll(&ready, 1, Int32(pollInterval * 1000)) > 0 {
                    for signal in signals.drain() {
                        if signal == SIGHUP { reload = true } else {
                            Log.info("signal \(signal): stopping the wait")
                            return nil
                        }
                    }
                }
            } else {
                var pause = timespec(tv_sec: Int(pollInterval), tv_nsec: 0)
                var left = timespec()
                while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
            }
            if let setup = look(at: path, stamp: &stamp, forced: reload, problem: &problem, load: load, tell: {
                tell($0, flags: flags, json: json, told: &told)
            }) {
                return setup
            }
        }
    }

    /// One look at the settings in a wait: read again when the file changed (or `forced`: a
    /// SIGHUP), or at every look while the mistake can be mended elsewhere. The setup once it
    /// can be hunted; else nil, `problem` the mistake now, told unless it is the same mistake
    /// in an unchanged file (the looks for a mend made elsewhere log nothing new).
    private static func look(
        at path: String, stamp: inout [Int]?, forced: Bool, problem: inout CLIError,
        load: () throws(CLIError) -> HunterSetup, tell: (CLIError) -> Void
    ) -> HunterSetup? {
        let now = fileStamp(path)
        let changed = now != stamp || forced
        guard changed || mendedElsewhere(problem) else { return nil }
        stamp = now
        do {
            let setup = try load()
            Log.info("the settings can be hunted now: starting")
            return setup
        } catch {
            let again = !changed && error.message == problem.message
            problem = error
            if !again { tell(problem) }
            return nil
        }
    }

    /// The wait with the parent's page up (docs/web.md), when the flags leave it on and its
    /// port is free: Ready? lists what is wrong, the Trail page can mend a trail's mistake
    /// (saved through the validator), and the file is read again every `pollInterval`
    /// seconds and after each save; nil when the page cannot run (the plain wait then).
    /// Its runtime takes no signals: SIGTERM ends the wait as before. `since` is the file as
    /// it was refused: a fix saved while the notice was said (before the page is up) is a
    /// change, not the file the wait starts from.
    private static func waitWithPage(
        problem first: CLIError, path: String, since refused: [Int]?, signals: SignalSource?, flags: ConfigurationFlags, json: Bool,
        told: inout Set<String>, load: @escaping () throws(CLIError) -> HunterSetup
    ) -> PageWait {
        var settings = HunterConfiguration()
        if let web = webSection(of: path) { settings.web = web }
        settings.apply(flags)
        guard settings.web.enabled, let runtime = try? ApplianceRuntime(RuntimeOptions(signals: [])),
            let console = ParentConsole.start(port: settings.web.port, file: path, runtime: runtime, ranging: settings.ranging, tags: [])
        else { return .noPage }
        var problem = first
        var loaded: HunterSetup?
        var stamp = refused
        var stopped = false
        func items() -> [CheckItem] {
            [CheckItem(status: .problem, text: "The settings have a mistake: the hunt waits for it to be mended", fix: "Mend it here (Trail) or in \(path); pirate-hunter check lists the same")]
                + ([problem.message] + problem.further).map { CheckItem(status: .problem, text: $0) }
        }
        console.hooks.checks = items
        var idle = HuntView()
        idle.running = false
        console.hooks.hunt = { idle }
        var toldNow = told
        let tryLoad = { () -> Void in
            guard let setup = look(at: path, stamp: &stamp, forced: false, problem: &problem, load: load, tell: {
                tell($0, flags: flags, json: json, told: &toldNow)
            }) else { return }
            loaded = setup
            // Not from inside the page's answer to the save: after it.
            runtime.loop.schedule(after: 0) { runtime.stop(.ok) }
        }
        runtime.onReload = tryLoad
        if let signals {
            runtime.loop.watch(signals.fd) {
                for signal in signals.drain() {
                    if signal == SIGHUP {
                        // Read again whether or not the file changed.
                        stamp = [-1]
                        tryLoad()
                    } else {
                        Log.info("signal \(signal): stopping the wait")
                        stopped = true
                        runtime.stop(.ok)
                    }
                }
            }
        }
        runtime.loop.repeatEvery(pollInterval) { _ in
            tryLoad()
            return loaded == nil
        }
        Log.info("waiting for the settings to be fixed; the parent's page shows what is wrong: \(console.address)")
        _ = try? runtime.run(keeping: [console])
        told = toldNow
        guard var setup = loaded else { return stopped ? .stopped : .noPage }
        setup.pageGate = console.gate
        return .loaded(setup)
    }

    /// Whether `problem` can be mended without touching the settings file: a file it names
    /// (a clue's WAV, a voice) missing or unreadable. The file is then read again at every
    /// poll, changed or not; before, copying the WAV in never started the hunt.
    static func mendedElsewhere(_ problem: CLIError) -> Bool {
        problem.code == .noInput || problem.code == .noPermission
    }

    /// The `web` section of a file the hunt refused, when it can still be read (JSON whose
    /// mistake is elsewhere): a page the parent switched off stays off while the settings
    /// wait, on the port the parent chose. nil when the file is no JSON object (then the
    /// flags and the defaults decide, as for a file that is not there).
    static func webSection(of path: String) -> HunterConfiguration.Web? {
        struct WebOnly: Decodable {
            struct Section: Decodable {
                var enabled: Bool?
                var port: Int?
            }
            var web: Section?
        }
        guard let bytes = try? SafeFile.read(path, limit: 1 << 20),
            let file = try? JSONDecoder().decode(WebOnly.self, from: Data(ConfigurationText.withoutByteOrderMark(bytes)))
        else { return nil }
        var web = HunterConfiguration.Web()
        if let enabled = file.web?.enabled { web.enabled = enabled }
        if let port = file.web?.port, let valid = UInt16(exactly: port) { web.port = valid }
        return web
    }

    /// The lines of `problem` in the log, and said once (per boot, per first line).
    private static func tell(_ problem: CLIError, flags: ConfigurationFlags, json: Bool, told: inout Set<String>) {
        for line in [problem.message] + problem.further { Log.error(CLIError.printable(line, limit: 400)) }
        guard !told.contains(problem.message) else { return }
        told.insert(problem.message)
        guard BootMemory.firstTime("settings: " + problem.message) else {
            Log.info("waiting for the settings to be fixed (already said since boot); run pirate-hunter check")
            return
        }
        Log.info("waiting for the settings to be fixed; run pirate-hunter check")
        say(problem, flags: flags, json: json)
    }

    /// Step N of the trail when the first problem is in one (`hunt.trail[N-1]`).
    static func step(of problem: CLIError) -> Int? {
        let marker = "hunt.trail["
        var rest = Substring(problem.message)
        while !rest.isEmpty, !rest.hasPrefix(marker) { rest = rest.dropFirst() }
        guard !rest.isEmpty else { return nil }
        let digits = rest.dropFirst(marker.count).prefix { $0.isASCII && $0.isNumber }
        return Int(digits).map { $0 + 1 }
    }

    /// Says the notice with the voice and device the flags (not the broken file) give.
    private static func say(_ problem: CLIError, flags: ConfigurationFlags, json: Bool) {
        var settings = HunterConfiguration()
        settings.apply(flags)
        settings.resolveDirectories(environment: ProcessInfo.processInfo.environment, executablePath: VoiceLocations.currentExecutablePath())
        let step = step(of: problem)
        let event: LineEvent = step == nil ? .noticeSettings : .noticeSettingsStep
        let text: String
        let speech: PCMBuffer
        do {
            let pack = try LinePack.load(language: settings.voice.language, voicesDirectory: settings.voiceConfiguration().voicesDirectory)
            let engine = try EspeakSynthesizer.shared()
            let line = pack.lines(for: event).first ?? event.rawValue
            text = LineDetail(treasure: step ?? 0).fill(line)
            speech = try engine.synthesize(text, voice: pack.voice)
        } catch {
            return Log.warning("cannot say that the settings have a mistake: \(error.message)")
        }
        if json, let line = OutputEvent.say(time: 0, event: event, text: text).jsonLine {
            let out = StandardOutput()
            out.line(line)
            out.flush()
        }
        Log.info("say [\(event.rawValue)] \(text)")
        var configuration = settings.playbackConfiguration()
        configuration.sampleRate = speech.sampleRate
        configuration.log = { Log.warning("audio: " + $0) }
        if configuration.device.hasPrefix("file:") || configuration.device == "null" { configuration.emulateClock = true }
        let audio = ALSAPlayback(configuration: configuration)
        audio.play(speech, slot: .speech)
        _ = audio.waitUntilIdle(timeout: .seconds(Int64(speech.durationSeconds) + 30))
        audio.shutdown()
    }

    /// What tells a changed file: its inode, size and modification time (nil: not there).
    private static func fileStamp(_ path: String) -> [Int]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        // The change time too: a chmod that lets the hunt read the file is a change.
        return [Int(info.st_ino), Int(info.st_size), Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec),
                Int(info.st_ctim.tv_sec), Int(info.st_ctim.tv_nsec)]
    }
}
