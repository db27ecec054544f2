import Audio
import Bluetooth
import Game
import GameKey
import GPIO
import Hunt
import ParentPage
import Radio
import Voice

/// The hunter: carries out what `HunterCore` (the game's rules) decides, on an
/// `ApplianceRuntime` (its loop's thread; the PCM has its own): the controller session in,
/// eSpeak NG and ALSA out, the JSON lines and the log.
final class Hunter {
    private var setup: HunterSetup
    private var core: HunterCore
    private let runtime: ApplianceRuntime
    private var loop: EventLoop { runtime.loop }
    private var session: ControllerSession?
    private var controllerLog = ControllerLog(doing: "scanning")
    private let speaker: Speaker
    private var announcementRefused = false
    private var stopping = false
    /// A line said on the way out (the radio that cannot be used): the exit waits for it.
    private var lastWords = false
    /// The parent's page (nil: off, or its port was taken).
    private var console: ParentConsole?
    /// What the page shows of the hunt.
    private var huntView = HuntView()

    /// The runtime is made first: it blocks signals before the PCM's thread starts here.
    init(setup: HunterSetup, runtime: ApplianceRuntime) throws(CLIError) {
        self.setup = setup
        self.runtime = runtime
        core = HunterCore(configuration: setup.game, authenticator: setup.key?.authenticator, challenge: setup.challenge ?? GameKey.randomChallenge())
        speaker = try Speaker(setup, runtime: runtime)
    }

    private var now: Double { runtime.now }

    /// Nothing is being said and nothing waits to be (the end of a replay waits for this).
    var isQuiet: Bool { speaker.isQuiet }

    /// The capture being replayed is over (the ranging stops judging silence).
    func radioEnded() { run(.radioEnded) }

    private func run(_ input: HunterCore.Input) {
        carryOut(core.handle(input, at: now))
    }

    /// Joins the runtime: the controller session on `source`, the hunt's timers, reload.
    func start(on source: ControllerSource) {
        speaker.start(
            lineFinished: { [unowned self] in run(.speechFinished) }, rewardReady: { [unowned self] in run(.rewardReady) },
            speakerFound: { [unowned self] in run(.speakerFound) })
        var options = ControllerSession.Options()
        options.advertises = (setup.announce?.seconds ?? 0) > 0
        session = runtime.session(
            source, settings: ControllerSettings(scanning: .passive), options: options,
            onStopped: { report in if let failure = report.failure { Log.warning("stopping the controller: \(failure)") } },
            events: { [unowned self] event in controller(event, retry: options.advertisingRetry) })
        runtime.onReload = { [unowned self] in reload() }
        // A last line (the radio that cannot be used) is let finish.
        runtime.onStop { [unowned self] in speaker.shutdown(waiting: lastWords ? .seconds(10) : .milliseconds(500)) }
        schedulePeriodic()
        startButton()
        startPage()
    }

    /// The parent's page, when `web.enabled` (docs/web.md).
    private func startPage() {
        guard setup.web.enabled else { return }
        huntView.volumeDB = setup.playback?.volumeDB ?? 0
        huntView.trailSteps = setup.hunt?.trail.count ?? 0
        speaker.onSaid = { [unowned self] _, text in
            huntView.lastSaid = text
            console?.huntChanged()
        }
        console = ParentConsole.start(port: setup.web.port, file: setup.file, runtime: runtime, ranging: setup.ranging, tags: setup.tags, gate: setup.pageGate)
        guard let console else { return }
        console.hooks.hunt = { [unowned self] in huntView }
        console.hooks.say = { [unowned self] text in speaker.preview(text) }
        console.hooks.playRecording = { [unowned self] path in
            do throws(WAVError) {
                try speaker.preview(recording: path)
                return nil
            } catch {
                return error.description
            }
        }
        console.hooks.setVolume = { [unowned self] volume in
            speaker.setVolume(dB: volume)
            huntView.volumeDB = volume
        }
        console.hooks.control = { [unowned self] action in
            guard let control = action == "restart" ? .start : HunterCore.HuntControl(rawValue: action) else { return "'\(action)' is not start, restart or stop" }
            let (applied, effects) = core.control(control, at: now)
            refreshRunning()
            carryOut(effects)
            return "hunt \(action): \(applied.isEmpty ? "nothing to do" : applied.joined(separator: ", "))"
        }
        console.hooks.checks = { [unowned self] in pageChecks() }
        // Where the page is and its code, for the grown-up by the speaker: when is the hunt
        // rules' business (once, after the start-up line, never over a line).
        carryOut(core.handle(.pageOpened(host: ParentConsole.hostname(), port: Int(console.server.port), code: console.gate.code), at: now))
    }

    /// What the page shows as running: a hunt configured and not stopped from the page.
    private func refreshRunning() { huntView.running = core.stoppedHunt == nil && setup.hunt != nil }

    /// The page's "Ready?" list: what this running hunter knows of itself.
    private func pageChecks() -> [CheckItem] {
        var items: [CheckItem] = []
        let transport = session?.transport?.name
        items.append(transport != nil ? CheckItem(status: .ok, text: "Bluetooth: \(transport ?? "") is scanning")
            : CheckItem(status: .problem, text: "Bluetooth: no controller", fix: "Switch Bluetooth on (rfkill unblock bluetooth) and run pirate-hunter check on the Pi"))
        items.append(setup.playback == nil ? CheckItem(status: .warning, text: "Speaker: none (quiet)", fix: "Start the hunt without --quiet")
            : CheckItem(status: .ok, text: "Speaker: \(setup.playback?.device ?? "")"))
        items.append(setup.key != nil ? CheckItem(status: .ok, text: "Game key: paired")
            : CheckItem(status: .warning, text: "Game key: not paired: other hunters and boxes are not believed", fix: "pirate-hunter check --new-game, then pirate-hunter pair CODE on every Pi of the game"))
        let trail = setup.hunt?.trail ?? []
        let inView = Set(console?.tags.strongestFirst().map(\.key) ?? [])
        if trail.isEmpty {
            items.append(CheckItem(status: .warning, text: "Trail: none, the single chest of the file's regions", fix: "Make one on the Trail page"))
        } else {
            for (i, step) in trail.enumerated() {
                let heard = inView.contains { step.region.contains($0) }
                items.append(heard ? CheckItem(status: .ok, text: "Treasure \(i + 1): its tag is in view")
                    : CheckItem(status: .problem, text: "Treasure \(i + 1): its tag is not heard", fix: "Switch the tag on (a new battery?) and bring it closer; the Tags page shows what is heard"))
            }
        }
        items.append(setup.file != nil ? CheckItem(status: .ok, text: "Settings: \(setup.file ?? "") (the page saves here)")
            : CheckItem(status: .warning, text: "Settings: no file", fix: "Start with --config /etc/pirate-hunter/hunter.json to save from this page"))
        return items
    }

    private func controller(_ event: ControllerSession.Event, retry: Double) {
        switch event {
        case var .sighting(s):
            s.time -= runtime.start
            console?.sighting(s)
            carryOut(core.handle(.sighting(s), at: s.time))
        case let .report(report, _):
            run(.report(report))
        case let .advertisingRefused(failure):
            guard !announcementRefused else { return }
            announcementRefused = true
            Log.warning("the controller refuses the announcement (\(failure)); the hunt goes on, trying again every \(Int(retry)) s")
        case let .state(state):
            let change = controllerLog.update(state, transport: session?.transport?.name ?? "?", at: now)
            if case .ready = state {
                run(.radioReady(afterOutage: change == .ready(afterOutage: true)))
            } else if case .lost = change {
                run(.radioLost(session?.connectFailure.flatMap(Self.problem)))
            }
        case let .fatal(error):
            // A radio that cannot be used at all (no Bluetooth, no permission) ends the hunt,
            // and systemd starts it again: whether it was told since boot is remembered on
            // disk, whether to say it again is the core's rule.
            let told = !BootMemory.firstTime("\(error)")
            lastWords = !told
            run(.radioUnusable(Self.problem(error), toldThisBoot: told))
        case .applied, .notice:
            break
        }
    }

    /// What a grown-up must fix, from the transport's failure (nil: nothing they can fix,
    /// or not known).
    static func problem(_ error: TransportError) -> RadioProblem? {
        switch error {
        case .blocked, .adapterDown: .bluetoothOff
        case .notFound: .noAdapter
        case .permission: .noPermission
        case .unsupported: .noBluetooth
        case .adapterGone, .system: nil
        }
    }

    /// The tick the core asked for besides the period (`HunterCore.Effect.wake`).
    private var wakeTimer: Int?

    private func schedulePeriodic() {
        loop.schedule(after: HunterCore.tickInterval) { [unowned self] in
            run(.tick)
            if !stopping { schedulePeriodic() }
        }
    }

    /// What the core decided, done in its order.
    private func carryOut(_ effects: [HunterCore.Effect]) {
        for effect in effects {
            switch effect {
            case let .output(event):
                if setup.json, let line = event.jsonLine { runtime.out.line(line) }
                if console != nil { page(event) }
            case let .log(level, message):
                // What was printed before it comes first where both streams meet (a terminal).
                runtime.out.flush()
                switch level {
                case .info: Log.info(message)
                case .warning: Log.warning(message)
                case .error: Log.error(message)
                }
            case let .sound(sound): speaker.play(sound)
            case let .detector(rate): speaker.detect(rate)
            case let .say(event): speaker.say(event, reward: core.reward)
            case let .tell(event, detail): speaker.tell(event, detail)
            case let .scanActively(active):
                guard var settings = session?.settings else { continue }
                settings.scanning = active ? .active : .passive
                session?.apply(settings)
            case let .advertise(advertisement):
                guard var settings = session?.settings else { continue }
                settings.advertisement = advertisement
                session?.apply(settings)
            case let .reward(text, address):
                RewardDisplay.show(text, address: address, at: now, json: setup.json, svg: setup.rewardSVG, out: runtime.out)
                speaker.readSlowly(text)
            case .stop:
                stopping = true
                runtime.stop(.ok)
            case let .wake(at):
                if let timer = wakeTimer { loop.cancel(timer) }
                wakeTimer = loop.schedule(at: at + runtime.start) { [unowned self] in
                    wakeTimer = nil
                    if !stopping { run(.tick) }
                }
            }
        }
        runtime.out.flush()
    }

    /// What the page shows of an output: the detector's rate, the standings.
    private func page(_ event: OutputEvent) {
        switch event {
        case let .detector(_, rate): huntView.detector = rate
        case let .standings(_, finishers):
            huntView.standings = finishers.map { "Hunter \($0.hunter) found treasure \($0.treasure) at \(Int($0.time.rounded())) s" }
        default: return
        }
        console?.huntChanged()
    }

    /// The file again (the flags still win): everything a file change can change is applied
    /// (voice and line pack, volume, and through the core regions, ranging, hunt rules and
    /// the announcement), and the log says what was and what waits for a restart, and why.
    private func reload() {
        guard let reload = setup.reload else { return }
        var next: HunterSetup
        do {
            next = try reload()
            next.reload = reload
            next.rewardSVG = setup.rewardSVG
            next.stopAfterFound = setup.stopAfterFound
            try speaker.reload(next)
        } catch {
            Log.error("reload refused, keeping the running configuration: \(error.message)")
            for further in error.further { Log.error("reload refused: \(further)") }
            return
        }
        var applied = next.voice != nil ? ["voice"] : []
        var waiting: [String] = []
        if let volume = next.playback?.volumeDB, volume != setup.playback?.volumeDB {
            speaker.setVolume(dB: volume)
            applied.append("audio.volume_db")
        }
        if next.playback?.device != setup.playback?.device { waiting.append("audio.device (the sound card is opened at start)") }
        waiting += setup.waitingForRestart(in: next)
        if next.button != setup.button { waiting.append("button (the GPIO line is requested at start)") }
        if next.key != setup.key {
            core.authenticator = next.key?.authenticator
            applied.append(next.key == nil ? "game.key (removed: unpaired)" : "game.key")
        }
        let (game, effects) = core.reconfigure(next.game, at: now)
        setup = next
        huntView.trailSteps = next.hunt?.trail.count ?? 0
        refreshRunning()
        speaker.json = next.json
        carryOut(effects)
        let what = applied + game
        Log.info("configuration reloaded: \(what.isEmpty ? "nothing changed" : what.joined(separator: ", "))" + HunterSetup.notUntilRestart(waiting))
    }
}

// MARK: - The button (issue #23): a press says the current clue again

extension Hunter {
    /// Requests the configured GPIO line and watches it on the loop: each press the
    /// debouncer lets through is `clueAsked`. A button that cannot be had (no chip, a line
    /// in use, no permission) is a warning: the hunt goes on without it.
    fileprivate func startButton() {
        guard let wanted = setup.button else { return }
        let bias = wanted.resolvedBias
        let button: GPIOButton
        do {
            button = try GPIOButton(chip: wanted.chip, line: wanted.line, activeLow: wanted.activeLow, bias: bias)
        } catch {
            Log.warning("button: \(error); the hunt goes on without the button")
            return
        }
        if !button.biasApplied {
            Log.warning("button: \(button.chipPath) cannot set \(bias.rawValue) on line \(button.line); the line is used as it is")
        }
        Log.info("button: line \(button.line) of \(button.chipPath), \(wanted.activeLow ? "active low" : "active high"), bias \(button.biasApplied ? bias.rawValue : "as-is") (\(GPIOButton.library)): a press says the clue again")
        var debouncer = ButtonDebouncer()
        var edgesSeen = 0
        var watch = 0
        // The closure keeps the button (and its line) for as long as it is watched.
        watch = loop.watch(button.fd) { [unowned self] in
            let edges: [GPIOButton.Edge]
            do {
                edges = try button.readEdges()
            } catch {
                // A chip gone (ENODEV) would keep the fd readable: stop watching it.
                Log.warning("button: \(error); the hunt goes on without the button")
                loop.unwatch(watch)
                return
            }
            for edge in edges {
                edgesSeen += 1
                guard debouncer.edge(active: edge.active, at: edge.time) == .press else { continue }
                // How late the loop is to the kernel's timestamp (both monotonic).
                let late = loop.isVirtual ? "" : ", \(Int(((loop.now - edge.time) * 1000).rounded())) ms after it"
                Log.info("button: pressed: the clue again (edge \(edgesSeen) of the line\(late))")
                run(.clueAsked)
            }
        }
    }
}
