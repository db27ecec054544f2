#if canImport(Glibc)
import Glibc
#endif
import Bluetooth
import Game
import GameKey
import Hunt
import CLinux
import Kiosk
import ParentPage
import QRCode
import Radio
import Ranging

/// The treasure box: advertises the treasure (and its reward) and carries out what
/// `TreasureBoxCore` (the box's game) decides about the hunters it hears: greetings with the
/// reward's QR code, standings, the kiosk screen or its log lines. One thread runs the loop;
/// in the demo the loop is the hunter's.
final class TreasureBox {
    private var setup: TreasureSetup
    private let runtime: ApplianceRuntime
    private var loop: EventLoop { runtime.loop }
    private var core: TreasureBoxCore
    private var session: ControllerSession?
    private var controllerLog: ControllerLog
    private var advertisement: Advertisement
    private var qrLines: [String] = []
    private var state: ControllerState = .connecting
    private var logged: KioskState?
    private var shown: String?
    private var stopped = false
    /// The controller's last refusal of our advertisement, until it advertises again.
    private var refusal: CommandFailure?
    /// The box's page (nil: off, or its port was taken).
    private var console: ParentConsole?

    init(setup: TreasureSetup, runtime: ApplianceRuntime) throws(CLIError) {
        self.setup = setup
        self.runtime = runtime
        advertisement = try setup.advertisement()
        controllerLog = ControllerLog(doing: nil, prefix: setup.logPrefix)
        core = TreasureBoxCore(configuration: setup.game, authenticator: setup.key?.authenticator)
        qrLines = Self.qrLines(setup.treasure.reward)
    }

    private var now: Double { runtime.now }

    static func qrLines(_ reward: String?) -> [String] {
        guard let reward, let code = try? QRCode(encoding: reward) else { return [] }
        return code.terminalLines(inverted: true)
    }

    /// Joins the runtime: advertising and scanning on `source`, the kiosk or the log, reload
    /// and redraw. `recorded: false` keeps a second session (the demo's
    /// box) out of the hunter's recording.
    func start(on source: ControllerSource, recorded: Bool = true) {
        if setup.kiosk { writeOut(KioskScreen.enterFullScreen) }
        if let key = setup.key {
            log(info: "paired: game \(key.fingerprint) (every Pi of the game shows the same in pirate-hunter check)")
        } else {
            log(warning: "not paired (no game.key): no reward is sent and no hunter greeted; pair it: pirate-hunter check --new-game, then pirate-hunter pair CODE")
        }
        var options = ControllerSession.Options()
        options.advertises = true
        // Hunters only announce after a find: long silences are normal, not a stuck scan.
        options.reportWatchdog = 120
        let settings = ControllerSettings(scanning: .passive, advertisement: advertisement)
        session = runtime.session(
            source, settings: settings, options: options, recorded: recorded,
            onStopped: { [unowned self] report in controllerStopped(report) },
            events: { [unowned self] event in controller(event, retry: options.advertisingRetry) })
        if setup.ownsSignals {
            runtime.onReload = { [unowned self] in reload() }
            runtime.onResize = { [unowned self] in redraw() }
        }
        periodic()
        startPage()
        refresh()
    }

    /// The box's page (docs/web.md): its beacon, reward, greetings and standings.
    private func startPage() {
        guard setup.web.enabled else { return }
        console = ParentConsole.start(port: setup.web.port, file: nil, runtime: runtime, ranging: setup.ranging, tags: [], isBox: true)
        console?.hooks.box = { [unowned self] in
            let state = kioskState()
            var view = BoxView(beacon: "\(state.uuid):\(state.major):\(state.minor), power \(state.power) dBm, every \(state.intervalMilliseconds) ms")
            view.reward = state.reward
            view.paired = setup.key != nil
            view.greetings = core.greetings.map { "Hunter \($0.hunter) at \(Int($0.at.rounded())) s\($0.rewardSent ? ", reward sent" : "")" }
            view.standings = state.standingsInOrder.map { "Hunter \($0.hunter) found treasure \($0.treasure) at \(Int($0.at.rounded())) s" }
            return view
        }
        console?.hooks.boxControl = { [unowned self] action in
            guard action == "new-round" else { return "unknown box action" }
            carryOut(core.newRound(at: now))
            refresh()
            return "new round: standings and greetings start again"
        }
        console?.hooks.checks = { [unowned self] in
            [
                setup.key != nil ? CheckItem(status: .ok, text: "Game key: paired") : CheckItem(status: .problem, text: "Not paired: no reward is sent", fix: "pirate-hunter check --new-game, then pirate-hunter pair CODE on every Pi"),
                setup.treasure.reward != nil ? CheckItem(status: .ok, text: "Reward: set") : CheckItem(status: .warning, text: "No reward", fix: "treasure.reward in treasure.json"),
                session?.transport != nil ? CheckItem(status: .ok, text: "Bluetooth: advertising") : CheckItem(status: .problem, text: "Bluetooth: no controller", fix: "Switch Bluetooth on and run pirate-hunter check"),
            ]
        }
    }

    private func periodic() {
        loop.schedule(after: TreasureBoxCore.tickInterval) { [unowned self] in
            guard !stopped else { return }
            carryOut(core.tick(at: now))
            refresh()
            periodic()
        }
    }

    private func controller(_ event: ControllerSession.Event, retry: Double) {
        switch event {
        case let .sighting(sighting): self.sighting(sighting)
        case let .state(new): controller(new)
        case let .advertisingRefused(failure):
            if refusal == nil { log(warning: "the controller refuses to advertise (\(failure)); trying again every \(Int(retry)) s") }
            refusal = failure
            refresh()
        case let .applied(settings):
            guard settings.advertisement != nil, refusal != nil else { return }
            refusal = nil
            refresh()
        case .report, .fatal, .notice:
            break
        }
    }

    private func controller(_ new: ControllerState) {
        // A new scan response (the reward sealed for another hunter) reconfigures a ready
        // controller: it goes on advertising, so the kiosk and the log do not say "waiting".
        if case .configuring = new, case .ready = state { return }
        state = new
        // Logged once per outage (retries must not fill the journal), and not on the kiosk's
        // own terminal, which shows it.
        _ = controllerLog.update(new, transport: session?.transport?.name ?? "?", at: now, log: !logsShareTheScreen)
        refresh()
    }

    /// The screen is drawn again when a sighting did something (a greeting, the standings, a
    /// new seal); a hunter's distance and class are drawn at the next tick (0.5 s). Drawn for
    /// every packet, the trail's tags and the hunters at 10 Hz made a hundred frames a second,
    /// and a transmitter sending made-up announcements a thousand.
    private func sighting(_ sighting: BeaconSighting) {
        var s = sighting
        s.time -= runtime.start
        let effects = core.sighting(s)
        carryOut(effects)
        if !effects.isEmpty { refresh() }
    }

    private func carryOut(_ effects: [TreasureBoxCore.Effect]) {
        for effect in effects {
            switch effect {
            case let .scanResponse(response):
                advertisement.scanResponse = response ?? []
                if var settings = session?.settings {
                    settings.advertisement = advertisement
                    session?.apply(settings)
                }
            case let .output(event):
                guard setup.json, let line = event.jsonLine else { continue }
                runtime.out.line(line)
                runtime.out.flush()
            case let .log(line):
                // The same lines with the kiosk as without (the journal gets them; `log` keeps
                // them off the kiosk's own terminal).
                log(info: line)
            case let .logQRCode(hunter):
                guard !qrLines.isEmpty else { continue }
                log(info: "reward QR code for hunter \(hunter):")
                for row in qrLines { log(info: row) }
            }
        }
    }

    func kioskState() -> KioskState {
        let adapter = session?.transport?.name ?? "controller"
        let status: KioskState.Advertising
        switch state {
        case let .ready(family):
            status = refusal.map { .waiting("the controller refuses to advertise: \($0)") } ?? .advertising(adapter: adapter, family: family.rawValue)
        case .lost, .connecting, .configuring:
            // One steady state for a whole outage (its first reason), not one per retry.
            status = .waiting(controllerLog.outage.map { "controller unavailable (\($0)), retrying" } ?? "connecting to \(setup.transport.description)")
        }
        var state = core.kioskState(advertising: status, qrLines: qrLines, at: now)
        // The key's fingerprint (never the key: children read this screen), or what to do.
        state.game = setup.key.map { "game \($0.fingerprint)" } ?? "NOT PAIRED: no reward sent (pirate-hunter check)"
        // The grown-ups' page and its setup code (children cannot use it without a phone on
        // the Wi-Fi and the code; the kiosk is where the box's code is read).
        if let console { state.page = "\(console.address) code \(console.gate.code)" }
        return state
    }

    /// The screen redrawn (kiosk), and what changed logged (always: the journal gets the
    /// same lines with the kiosk as without it; `log` keeps them off the kiosk's own terminal).
    private func refresh() {
        guard !stopped else { return }
        let state = kioskState()
        if setup.kiosk {
            let (width, height) = Self.terminalSize()
            let frame = KioskScreen.render(state, width: width, height: height, color: Self.colour, now: now)
            if frame != shown {
                shown = frame
                writeOut(frame)
            }
        }
        // The greeting (without the kiosk) and an outage have their own lines (with the QR
        // code, with a warning).
        let outage = controllerLog.outage != nil || refusal != nil
        let ownLine = { (line: String) in line.hasPrefix("greeted") || outage && line.hasPrefix("waiting:") }
        for line in KioskLog.changes(from: logged, to: state) where !ownLine(line) {
            log(info: line)
        }
        logged = state
    }

    /// Colour unless NO_COLOR is set (non-empty, as no-color.org says) or the terminal is dumb.
    static let colour: Bool = (getenv("NO_COLOR").map { String(cString: $0) } ?? "").isEmpty
        && (getenv("TERM").map { String(cString: $0) } ?? "dumb") != "dumb"

    static func terminalSize() -> (Int, Int) {
        var size = winsize()
        guard ph_ioctl_pointer(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    private func writeOut(_ text: String) {
        runtime.out.text(text)
        runtime.out.flush()
    }

    /// With the kiosk on the same terminal as stderr, log lines would scroll the full-screen
    /// frame: the screen shows the state instead, and warnings and errors are kept for when
    /// the screen is left (the journal, a different stderr, gets every line as usual).
    private lazy var logsShareTheScreen = setup.kiosk && isatty(2) == 1
    private var heldLog: [String] = []

    private func log(info message: String) {
        guard !logsShareTheScreen else { return }
        Log.info(setup.logPrefix + message)
    }
    private func log(warning message: String) {
        guard !logsShareTheScreen else { return hold(message) }
        Log.warning(setup.logPrefix + message)
    }
    private func log(error message: String) {
        guard !logsShareTheScreen else { return hold(message) }
        Log.error(setup.logPrefix + message)
    }
    private func hold(_ message: String) {
        heldLog.append(message)
        if heldLog.count > 20 { heldLog.removeFirst() }
    }

    /// The terminal changed size: the whole frame again.
    private func redraw() {
        shown = nil
        refresh()
    }

    /// The file again (the flags still win): ids and reward, advertised again.
    private func reload() {
        guard let reload = setup.reload else { return }
        do {
            var next = try reload()
            next.reload = reload
            let ad = try next.advertisement()
            // What the game runs with is taken (the trail's hunters ranged and its ranging
            // too, and the output); what is opened at start waits, and the log says so.
            var waiting = setup.waitingForRestart(in: next)
            setup.treasure = next.treasure
            setup.roster = next.roster
            setup.trail = next.trail
            setup.ranging = next.ranging
            // The kiosk's screen was chosen at start over JSON lines: they would be printed
            // into its frame.
            if setup.kiosk, next.json != setup.json {
                waiting.append("json (the kiosk screen is drawn)")
            } else {
                setup.json = next.json
            }
            if next.key != setup.key {
                setup.key = next.key
                core.authenticator = next.key?.authenticator
            }
            core.reconfigure(setup.game)
            advertisement = ad
            qrLines = Self.qrLines(next.treasure.reward)
            if var settings = session?.settings {
                settings.advertisement = ad
                session?.apply(settings)
            }
            log(info: "configuration reloaded: advertising \(next.treasure.uuid.uuidString) \(next.treasure.major)/\(next.treasure.minor)"
                + TreasureSetup.notUntilRestart(waiting))
            refresh()
        } catch {
            log(error: "reload refused, keeping the running configuration: \(error.message)")
        }
    }

    /// After the runtime switched the controller off: the full screen left first, so that
    /// what follows (and what was held) is seen.
    private func controllerStopped(_ report: ApplianceRuntime.StopReport) {
        stopped = true
        if setup.kiosk {
            writeOut(KioskScreen.leaveFullScreen)
            for message in heldLog { Log.warning(setup.logPrefix + message) }
            heldLog = []
            logsShareTheScreen = false
        }
        if let failure = report.failure {
            log(warning: "switching advertising off: \(failure)")
        } else if report.wasConnected {
            log(info: "advertising off")
        } else {
            log(warning: "no controller to switch advertising off on (it was unavailable)")
        }
    }
}
