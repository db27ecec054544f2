#if canImport(Glibc)
import Glibc
#endif
import Audio
import Bluetooth
import Radio

/// Where a command's controller comes from: the transport the user named (kernel socket,
/// H4 over a UART or a unix socket), or one made in this process (the simulator, a capture
/// being replayed) with the world that moves it on the loop's clock.
enum ControllerSource {
    case spec(TransportSpec)
    case inProcess(HCITransport, world: ((Double) -> Void)?)
}

/// How a command runs: its clock, the signals it takes, what it records, how long.
struct RuntimeOptions {
    var clock: LoopClock = .monotonic
    /// Handled on the loop: SIGINT and SIGTERM stop, SIGHUP reloads, SIGWINCH redraws.
    /// Empty: the command takes no signals (a replay).
    var signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]
    /// `--record FILE.btsnoop`: every packet of every session, both ways.
    var record: String?
    /// `--duration S`: stop by itself.
    var duration: Double?
    /// The services' loop (`hunt`, `treasure`): systemd's watchdog pinged while it runs
    /// (`ServiceWatchdog`; only under systemd, only on the real clock).
    var watchdog = false
}

/// The one runtime every controller command runs on: the event loop and its clock, signals,
/// the recorder, the controller sessions, stdout, and shutdown (controller off, then each
/// part's own stop, then the recording closed) with one exit code. `hunt`, `treasure`,
/// `scan`, `demo` and `replay --hunt` are configurations of it.
final class ApplianceRuntime {
    struct StopReport {
        /// The controller refused or did not answer the switch-off.
        var failure: CommandFailure?
        /// A controller was there to switch off.
        var wasConnected: Bool
    }

    private struct ManagedSession {
        var session: ControllerSession
        var onStopped: (StopReport) -> Void
    }

    let loop: EventLoop
    private let signals: SignalSource?
    private let recorder: CaptureFileWriter?
    private var sessions: [ManagedSession] = []
    private var stopHandlers: [() -> Void] = []
    /// t = 0 of every command's output and of the ranging clock.
    let start: Double
    /// Capture timestamps start from the wall clock at start and go on by the loop's clock.
    private let wallOrigin: Int64
    let out = StandardOutput()
    private(set) var exitCode: ExitCode = .ok
    private(set) var stopping = false
    /// SIGHUP: read the configuration again.
    var onReload: () -> Void = {}
    /// SIGWINCH: the terminal changed size.
    var onResize: () -> Void = {}
    /// Stopping because of a failure no retry mends: the switch-off is tried, but its
    /// failure (a controller we could not use) is not news.
    private var fatal = false
    private var running: [AnyObject] = []
    private var recordingFailed = false

    /// Signals are blocked here, before any other thread (the PCM's, eSpeak's) starts.
    init(_ options: RuntimeOptions) throws(CLIError) {
        do {
            signals = options.signals.isEmpty ? nil : try SignalSource(options.signals)
            loop = try EventLoop(clock: options.clock)
        } catch {
            throw CLIError(.software, "event loop: \(error)")
        }
        start = loop.now
        wallOrigin = wallClockMicroseconds()
        watchdog = options.watchdog && options.clock == .monotonic
        if let path = options.record {
            do {
                recorder = try CaptureFileWriter(path: path)
            } catch {
                throw Self.fileError("--record \(path)", error)
            }
        } else {
            recorder = nil
        }
        // A recording that cannot be written (disk full) is said at once, in one line; the
        // file ends at its last whole record, the command goes on, and exits 74 at the end.
        recorder?.onFailure = { [unowned self] error in
            Log.error("--record \(recorder?.path ?? ""): \(error.reason); the recording stops at its last whole record")
            recordingFailed = true
        }
        // stdout gone (EPIPE: the reader left): stop as cleanly as on SIGTERM, exit 0; any
        // other write error is an I/O error (74).
        out.onFailure = { [unowned self] code in
            if code != EPIPE { Log.error("standard output: \(String(cString: strerror(code)))") }
            stop(code == EPIPE ? .ok : .ioError)
        }
        if let signals {
            loop.watch(signals.fd) { [unowned self] in
                for signal in signals.drain() {
                    switch signal {
                    case SIGHUP: onReload()
                    case SIGWINCH: onResize()
                    default:
                        Log.info("signal \(signal): stopping")
                        stop(.ok)
                    }
                }
            }
        }
        if let duration = options.duration {
            loop.schedule(after: duration) { [unowned self] in stop(.ok) }
        }
    }

    /// Whether `run` pings systemd's watchdog (`RuntimeOptions.watchdog`).
    private let watchdog: Bool

    /// Seconds since start, on the loop's clock.
    var now: Double { loop.now - start }

    /// A controller session on `source`, recorded when asked, with the fatal failures
    /// (permission, no Bluetooth) mapped to the exit code once. `events` hears the session's
    /// events (a fatal one just before the stop: the hunter's last words; notices are
    /// logged here); `onStopped` how the switch-off at shutdown went.
    func session(
        _ source: ControllerSource, settings: ControllerSettings, options: ControllerSession.Options = .init(),
        recorded wanted: Bool = true, onStopped: @escaping (StopReport) -> Void = { _ in },
        events: @escaping (ControllerSession.Event) -> Void
    ) -> ControllerSession {
        let factory: ControllerSession.TransportFactory
        let record: (HCITransport) -> HCITransport = wanted ? { [unowned self] in recorded($0) } : { $0 }
        switch source {
        case let .spec(spec):
            factory = { () throws(TransportError) -> HCITransport in record(try spec.open()) }
        case let .inProcess(transport, world):
            let recordedTransport = record(transport)
            factory = { () throws(TransportError) -> HCITransport in recordedTransport }
            if let world { drive(world) }
        }
        let session = ControllerSession(loop: loop, settings: settings, options: options, transport: factory)
        session.onEvent = { [unowned self] event in
            switch event {
            case let .notice(message):
                Log.warning(message)
            case let .fatal(error):
                Log.error("\(error)")
                fatal = true
                events(event)
                stop(Self.exitCode(for: error))
            default:
                events(event)
            }
        }
        sessions.append(ManagedSession(session: session, onStopped: onStopped))
        return session
    }

    private func recorded(_ transport: HCITransport) -> HCITransport {
        guard let recorder else { return transport }
        // The wall clock at the start, then the loop's own (monotonic) clock: a Pi without
        // a clock chip is set by NTP minutes into a hunt, and a capture stamped by the wall
        // clock jumped with it (replayed, days of silence or records before the first),
        // where the live ranging, on the loop's clock, heard no jump.
        let origin = wallOrigin
        return RecordingTransport(transport, writer: recorder, clock: { [unowned self] in origin + Int64((now * 1_000_000).rounded()) })
    }

    /// Moves a simulated world with the loop's clock, every 20 ms.
    func drive(_ world: @escaping (Double) -> Void) {
        loop.repeatEvery(0.02) { [unowned self] t in
            world(t)
            return !stopping
        }
    }

    /// Called on the way out, after the controllers are off, in the order added.
    func onStop(_ handler: @escaping () -> Void) { stopHandlers.append(handler) }

    /// Runs until stopped. `parts` (the hunter, the box, the scanner: their callbacks hold
    /// them unowned) are kept alive for as long as the loop runs.
    func run(keeping parts: [AnyObject]) throws(CLIError) -> ExitCode {
        running = parts
        defer { running = [] }
        for managed in sessions { managed.session.start() }
        if watchdog { ServiceWatchdog.start(on: loop) }
        do {
            try loop.run()
        } catch {
            throw CLIError(.software, "event loop: \(error)")
        }
        return exitCode
    }

    /// Controllers off (scanning and advertising, 0.5 s for their answers), each part's own
    /// stop, the recording closed at its last whole record, stdout flushed; once.
    func stop(_ code: ExitCode) {
        guard !stopping else { return }
        stopping = true
        exitCode = code
        for managed in sessions {
            let wasConnected = managed.session.transport != nil && managed.session.family != nil
            let failure = managed.session.stop(timeout: 0.5)
            managed.onStopped(StopReport(failure: fatal ? nil : failure, wasConnected: wasConnected && !fatal))
        }
        for handler in stopHandlers { handler() }
        stopHandlers = []
        if let recorder {
            if recordingFailed, exitCode == .ok { exitCode = .ioError }
            do {
                try recorder.close()
            } catch {
                Log.error("--record \(recorder.path): \(error)")
                if exitCode == .ok { exitCode = .ioError }
            }
        }
        out.flush()
        // A write error on the last flush (EPIPE aside) is an I/O error too.
        if let failure = out.failure, failure != EPIPE, exitCode == .ok { exitCode = .ioError }
        loop.stop()
    }

    // MARK: One exit code per cause

    static func exitCode(for error: TransportError) -> ExitCode {
        switch error {
        case .permission: return .noPermission
        case .unsupported, .adapterDown, .blocked, .adapterGone, .notFound, .system: return .unavailable
        }
    }

    /// An output file the user named could not be created: 77 for permission, 73 when its
    /// place does not exist or is not a file, 74 otherwise; the message names the flag and
    /// the cause in words.
    static func fileError(_ what: String, _ error: SystemError) -> CLIError {
        CLIError(outputFileExitCode(errno: error.errno), "\(what): \(error.reason)")
    }

    /// A WAV that ALSA's file plugin is to write at `path`: a temporary of ours beside it
    /// (`SafeFile.Staged`), or the command's one-line error.
    /// `--out FILE.wav`: a staged output (as `stagedOutput`) and the ALSA `file:` device
    /// that writes it; `hunt`, `rehearse` and `replay --hunt` share it.
    static func stagedWAV(_ out: String) throws(CLIError) -> (staged: SafeFile.Staged, device: String) {
        guard !out.contains(",") else { throw CLIError(.usage, "--out '\(CLIError.printable(out))': a file name without commas") }
        let staged = try stagedOutput(out)
        return (staged, "file:FILE=\(staged.temporary),FORMAT=wav")
    }

    /// `--reward-svg FILE`, checked at the start as `--out` is: a file of ours can be made
    /// beside it and put in its place (it was first tried at the find, and a directory that
    /// was not there lost the QR code with exit 0). nil passes.
    static func checkRewardSVG(_ path: String?) throws(CLIError) -> String? {
        guard let path else { return nil }
        try stagedOutput(path).discard()
        return path
    }

    static func stagedOutput(_ path: String) throws(CLIError) -> SafeFile.Staged {
        do {
            return try SafeFile.Staged(for: path)
        } catch {
            throw fileError(error)
        }
    }

    /// The one-line error of a staged output that failed (its text names the path).
    static func fileError(_ error: FileError) -> CLIError {
        CLIError(outputFileExitCode(errno: error.errno), error.description)
    }

    /// Runs `body`; `staged` (a WAV that ALSA's `file:` plugin wrote) is put in place when it
    /// returns, and removed when it throws or the disk filled up under it (exit 74, the file
    /// named: `SafeFile.Staged.commitWAV`).
    static func writing(_ staged: SafeFile.Staged?, _ body: () throws(CLIError) -> ExitCode) throws(CLIError) -> ExitCode {
        let code: ExitCode
        do {
            code = try body()
        } catch {
            staged?.discard()
            throw error
        }
        do {
            try staged?.commitWAV()
        } catch {
            throw fileError(error)
        }
        return code
    }

    /// The exit code of an output file that could not be written, by errno (also `say --out`).
    static func outputFileExitCode(errno: Int32) -> ExitCode {
        switch errno {
        case EACCES, EPERM, EROFS: return .noPermission
        case ENOENT, ENOTDIR, EISDIR, ELOOP, ENAMETOOLONG, EEXIST, ENXIO: return .cantCreate
        default: return .ioError
        }
    }
}

/// Logs a controller's outages once each and its first readiness, the same way for every
/// command: "scanning on hci0 (legacy commands)", "controller unavailable (...); retrying".
struct ControllerLog {
    /// "scanning": logged when ready; nil when the caller says it another way (the kiosk's log).
    let doing: String?
    var prefix = ""
    private(set) var outage: String?
    private(set) var everReady = false
    /// The causes of the current outage logged so far (at most 8).
    private var causes: Set<String> = []
    /// Each cause logged lately: when, and how many outages of it went unlogged since. A
    /// socket closed every 5 s is one line, then a count at most once a minute.
    private var recent: [String: (at: Double, unlogged: Int)] = [:]
    private var quietOutage = false
    /// A cause logged once is not logged again for an outage of its own within this long.
    static let repeatQuiet = 600.0
    /// ... but counted, and the count is logged at most this often.
    static let countInterval = 60.0

    init(doing: String?, prefix: String = "") {
        self.doing = doing
        self.prefix = prefix
    }

    enum Change: Equatable {
        /// Ready for the first time, or again after an outage.
        case ready(afterOutage: Bool)
        /// The start of an outage (not each retry).
        case lost(String)
        case none
    }

    /// What changed at `time`, logged (`log` false: only told, the caller shows it another way).
    mutating func update(_ state: ControllerState, transport: String, at time: Double, log: Bool = true) -> Change {
        switch state {
        case let .ready(family):
            guard !everReady || outage != nil else { return .none }
            let afterOutage = outage != nil
            everReady = true
            outage = nil
            // Back after an outage that was not logged: not logged either.
            if log, let doing, !quietOutage { Log.info("\(prefix)\(doing) on \(transport) (\(family.rawValue) commands)") }
            quietOutage = false
            return .ready(afterOutage: afterOutage)
        case let .lost(reason):
            guard outage == nil else {
                // The same outage for another reason: each distinct cause is logged once.
                if !causes.contains(reason), causes.count < 8 {
                    causes.insert(reason)
                    if log { Log.warning("\(prefix)controller still unavailable, now: \(reason)") }
                }
                return .none
            }
            outage = reason
            causes = [reason]
            if var seen = recent[reason], time - seen.at < Self.repeatQuiet {
                seen.unlogged += 1
                quietOutage = true
                if time - seen.at >= Self.countInterval {
                    if log { Log.warning("\(prefix)controller unavailable again (\(reason)): \(seen.unlogged) times in the last \(Int(time - seen.at)) s") }
                    seen = (time, 0)
                }
                recent[reason] = seen
                return .lost(reason)
            }
            if recent.count >= 16, let oldest = recent.min(by: { $0.value.at < $1.value.at }) { recent[oldest.key] = nil }
            recent[reason] = (time, 0)
            quietOutage = false
            if log { Log.warning("\(prefix)controller unavailable (\(reason)); retrying") }
            return .lost(reason)
        case .connecting, .configuring:
            return .none
        }
    }
}
