#if canImport(Glibc)
import Glibc
#endif
import Bluetooth

/// Where a controller session stands.
public enum ControllerState: Equatable, Sendable {
    case connecting
    case configuring
    /// The controller does what the session's settings ask (scanning, advertising).
    case ready(CommandFamily)
    /// The adapter went away or refused; retrying.
    case lost(String)
}

/// Keeps a controller scanning and/or advertising for as long as the appliance runs: opens
/// the transport, configures it (one command at a time, each answered and checked), hands
/// every sighting over, notices the adapter going away or another program switching
/// scanning or advertising off, and comes back with backoff (re-advertising too). Settings
/// change at any time with `apply`: only what changed is sent. Runs on the event loop's thread.
public final class ControllerSession {
    public typealias TransportFactory = () throws(TransportError) -> HCITransport

    public struct Options: Sendable {
        /// Whether this session may advertise: then extended commands are used only when the
        /// controller has both extended scanning and extended advertising.
        public var advertises = false
        /// Retry delays after a failure grow from `minimumBackoff` to `maximumBackoff` (s):
        /// the adapter is back within about `maximumBackoff` of returning.
        public var minimumBackoff = 0.25
        public var maximumBackoff = 1.5
        /// No report at all for this long while scanning: configure scanning again (another
        /// program may have stopped it without us seeing its command).
        public var reportWatchdog = 30.0
        public var commandTimeout = 2.0
        /// A refused advertisement is tried again after this long (s).
        public var advertisingRetry = 10.0
        public init() {}
    }

    private let loop: EventLoop
    private let factory: TransportFactory
    public var options: Options
    public private(set) var transport: HCITransport?
    public private(set) var state: ControllerState = .connecting
    /// What the controller should do.
    public private(set) var settings: ControllerSettings
    /// What the controller is known to do (nil: unknown, before configuring after a connect).
    public private(set) var applied: ControllerSettings?
    private var target: ControllerSettings?
    private var procedure: ControllerProcedure?
    private var watchID: Int?
    private var timerID: Int?
    private var watchdogID: Int?
    private var backoff: Double
    private var lastReport = 0.0
    public private(set) var family: CommandFamily?
    /// Why the last attempt to open the transport failed (nil once one opened): what the
    /// owner tells a grown-up when the radio never came up.
    public private(set) var connectFailure: TransportError?
    private var support: SupportedCommands?

    /// What the session tells its owner.
    public enum Event: Sendable {
        /// A beacon in an advertising report, stamped with the loop's clock.
        case sighting(BeaconSighting)
        /// Every advertising report (scan responses included), for `scan --active` and rewards.
        case report(AdvertisingReport, at: Double)
        case state(ControllerState)
        /// Settings were applied (after connecting, or after `apply`).
        case applied(ControllerSettings)
        /// The controller refused an advertising command (scanning goes on; retried later).
        case advertisingRefused(CommandFailure)
        /// A failure no retry will mend (permission, no Bluetooth in this kernel).
        case fatal(TransportError)
        /// Something worth a log line that is not a state change (a damaged stream, once,
        /// then at most one summary a minute).
        case notice(String)
    }

    /// The one way out of the session: its owner's handler (one closure, not one per event).
    public var onEvent: (Event) -> Void = { _ in }
    private var damageSeen = StreamDamage()
    private var damageReported = StreamDamage()
    private var damageReportedAt: Double?
    /// At most one summary of stream damage per this many seconds.
    public static let damageSummaryInterval = 60.0
    /// The loop's clock: timers and procedure deadlines must share one.
    private func now() -> Double { loop.now }

    public init(
        loop: EventLoop, settings: ControllerSettings = ControllerSettings(scanning: .passive), options: Options = Options(),
        transport factory: @escaping TransportFactory
    ) {
        self.loop = loop
        self.settings = settings
        self.options = options
        self.factory = factory
        backoff = options.minimumBackoff
    }

    private func set(_ new: ControllerState) {
        guard new != state else { return }
        state = new
        onEvent(.state(new))
    }

    public func start() {
        connect()
    }

    /// Asks for new settings; sent now when the controller is ready, else when it is.
    public func apply(_ new: ControllerSettings) {
        settings = new
        if procedure == nil, transport != nil, case .ready = state, applied != new { run(from: applied) }
    }

    private func connect() {
        timerID = nil
        set(.connecting)
        let t: HCITransport
        do {
            t = try factory()
        } catch {
            if !error.isTransient {
                onEvent(.fatal(error))
                return
            }
            connectFailure = error
            fail(error.description)
            return
        }
        connectFailure = nil
        transport = t
        applied = nil
        watchID = loop.watch(t.fileDescriptor) { [weak self] in self?.readable() }
        run(from: nil)
    }

    /// Runs the procedure that takes the controller from `old` to the current settings.
    private func run(from old: ControllerSettings?) {
        set(.configuring)
        target = settings
        var p = ControllerProcedure.configure(
            from: old, to: settings, advertises: options.advertises, timeout: options.commandTimeout, knownSupport: support)
        let step = p.start(at: now())
        procedure = p
        perform(step)
    }

    private func perform(_ step: ProcedureStep) {
        switch step {
        case let .send(command):
            do {
                try transport?.send(command)
            } catch {
                if !error.isTransient { onEvent(.fatal(error)) } else { fail(error.description) }
                return
            }
            if let deadline = procedure?.deadline {
                if let timerID { loop.cancel(timerID) }
                timerID = loop.schedule(at: deadline) { [weak self] in self?.procedureTimeout() }
            }
        case .wait:
            break
        case .finished:
            if let timerID { loop.cancel(timerID) }
            timerID = nil
            family = procedure?.family
            support = procedure?.supported
            procedure = nil
            backoff = options.minimumBackoff
            let done = target ?? settings
            let scanningStarted = done.scanning != nil && applied?.scanning != done.scanning
            applied = done
            if scanningStarted { lastReport = now() }
            onEvent(.applied(done))
            if done != settings {
                run(from: done)  // asked for something else meanwhile
                return
            }
            set(.ready(family ?? .legacy))
            armWatchdog()
        case let .failed(failure):
            let family = procedure?.family
            if let supported = procedure?.supported { support = supported }
            procedure = nil
            // The controller answered, refusing an advertising command: that is not a lost
            // adapter. Scanning (done first) goes on; advertising is tried again later.
            if failure.status != nil, failure.opcode.isAdvertising, let done = target, let family {
                refused(failure, scanning: done.scanning, family: family)
                return
            }
            fail(failure.description)
        }
    }

    /// After an advertising refusal: advertising is off (its disable came first, or the set
    /// was never enabled); scanning stands; `.advertisingRefused` says why; the advertisement
    /// is tried again after `options.advertisingRetry` while it is still wanted.
    private func refused(_ failure: CommandFailure, scanning: ControllerSettings.Scanning?, family: CommandFamily) {
        if let timerID { loop.cancel(timerID) }
        timerID = nil
        self.family = family
        applied = ControllerSettings(scanning: scanning, advertisement: nil)
        onEvent(.advertisingRefused(failure))
        set(.ready(family))
        armWatchdog()
        timerID = loop.schedule(after: options.advertisingRetry) { [weak self] in
            guard let self else { return }
            timerID = nil
            guard procedure == nil, transport != nil, case .ready = state, let applied, applied != settings else { return }
            run(from: applied)
        }
    }

    private func procedureTimeout() {
        timerID = nil
        guard var p = procedure else { return }
        let step = p.tick(at: now())
        procedure = p
        perform(step)
        if case .wait = step, let deadline = p.deadline {
            timerID = loop.schedule(at: deadline) { [weak self] in self?.procedureTimeout() }
        }
    }

    private func armWatchdog() {
        if let watchdogID { loop.cancel(watchdogID) }
        watchdogID = nil
        guard settings.scanning != nil else { return }
        watchdogID = loop.schedule(at: lastReport + options.reportWatchdog) { [weak self] in self?.watchdog() }
    }

    private func watchdog() {
        watchdogID = nil
        guard case .ready = state, settings.scanning != nil else { return }
        // The timer's own deadline, as it was computed: `now() - lastReport` can fall short of
        // the limit by a rounding at that very moment, and on virtual time the timer then
        // re-armed itself there for ever.
        if now() >= lastReport + options.reportWatchdog {
            rearm(scanning: true, advertising: false)
        } else {
            armWatchdog()
        }
    }

    /// Configures again what another program (or silence) suggests is off.
    private func rearm(scanning: Bool, advertising: Bool) {
        guard transport != nil, procedure == nil, var known = applied else { return }
        if scanning { known.scanning = nil }
        if advertising { known.advertisement = nil }
        applied = known
        run(from: known)
    }

    private func readable() {
        guard let t = transport else { return }
        let packets: [HCIPacket]
        do {
            packets = try t.receive()
        } catch {
            if !error.isTransient { onEvent(.fatal(error)) } else { fail(error.description) }
            return
        }
        let time = now()
        noteDamage(t.streamDamage, at: time)
        for packet in packets {
            switch packet.type {
            case .event:
                guard let event = try? HCIEvent(decoding: packet.bytes[...]) else { continue }
                handle(event, at: time)
            case .command:
                if let command = try? HCICommandPacket(decoding: packet.bytes[...]) { foreign(command) }
            default:
                continue
            }
        }
    }

    /// A stream that lost its framing is said once at once; more of it, in a summary at most
    /// once a minute (a noisy UART must not fill the journal).
    private func noteDamage(_ damage: StreamDamage, at time: Double) {
        guard damage != damageSeen else { return }
        damageSeen = damage
        guard let last = damageReportedAt else {
            onEvent(.notice("\(transport?.name ?? "the stream") lost its framing (\(damage.skippedBytes) bytes skipped) and found it again; more is summed up once a minute"))
            damageReported = damage
            damageReportedAt = time
            return
        }
        guard time - last >= Self.damageSummaryInterval else { return }
        let errors = damage.framingErrors - damageReported.framingErrors
        let bytes = damage.skippedBytes - damageReported.skippedBytes
        onEvent(.notice("\(transport?.name ?? "the stream"): \(errors) framing errors, \(bytes) bytes skipped in the last \(Int(time - last)) s"))
        damageReported = damage
        damageReportedAt = time
    }

    /// Another program on the adapter (bluetoothd, `hciconfig reset`) switched scanning or
    /// advertising off, reset the controller, or replaced or removed our advertisement: re-arm.
    /// (A reset that does not take the adapter down left a box silent for good: only the
    /// scan came back, by the report watchdog.)
    private func foreign(_ command: HCICommandPacket) {
        guard case .ready = state else { return }
        let advertises = settings.advertisement != nil
        switch command.opcode {
        case .reset:
            guard transport != nil, procedure == nil else { return }
            applied = nil
            run(from: nil)
            return
        case .leClearAdvertisingSets, .leSetAdvertisingData, .leSetAdvertisingParameters:
            if advertises { rearm(scanning: false, advertising: true) }
            return
        case .leRemoveAdvertisingSet, .leSetExtendedAdvertisingData, .leSetExtendedAdvertisingParameters:
            // Ours only when it names our set's handle (its first parameter).
            if advertises, command.parameters.first == ControllerProcedure.advertisingHandle { rearm(scanning: false, advertising: true) }
            return
        default:
            break
        }
        guard command.parameters.first == 0 else { return }
        switch command.opcode {
        case .leSetScanEnable, .leSetExtendedScanEnable:
            if settings.scanning != nil { rearm(scanning: true, advertising: false) }
        case .leSetAdvertisingEnable:
            if settings.advertisement != nil { rearm(scanning: false, advertising: true) }
        case .leSetExtendedAdvertisingEnable:
            // Enable 0, number of sets (0: all), then per set its handle and 3 more bytes.
            let p = Array(command.parameters)
            let count = p.count > 1 ? Int(p[1]) : 0
            let ours = count == 0 || (0..<count).contains { 2 + $0 * 4 < p.count && p[2 + $0 * 4] == ControllerProcedure.advertisingHandle }
            if ours, settings.advertisement != nil { rearm(scanning: false, advertising: true) }
        default:
            break
        }
    }

    private func handle(_ event: HCIEvent, at time: Double) {
        if case let .advertisingReports(reports) = event {
            lastReport = time
            for report in reports {
                onEvent(.report(report, at: time))
                for beacon in report.beacons {
                    onEvent(.sighting(
                        BeaconSighting(
                            time: time, address: report.address, addressType: report.addressType, rssi: report.rssi,
                            beacon: beacon, report: report.format)))
                }
            }
            return
        }
        if case .hardwareError = event {
            fail("controller hardware error")
            return
        }
        if var p = procedure {
            let step = p.handle(event, at: time)
            procedure = p
            perform(step)
        }
    }

    private func fail(_ reason: String) {
        closeTransport()
        procedure = nil
        applied = nil
        set(.lost(reason))
        if let timerID { loop.cancel(timerID) }
        if let watchdogID { loop.cancel(watchdogID) }
        watchdogID = nil
        timerID = loop.schedule(after: backoff) { [weak self] in self?.connect() }
        backoff = min(options.maximumBackoff, backoff * 2)
    }

    private func closeTransport() {
        if let watchID { loop.unwatch(watchID) }
        watchID = nil
        transport?.close()
        transport = nil
    }

    /// Switches scanning and advertising off (waiting up to `timeout` for the controller's
    /// answers) and closes. Returns the failure, if the controller refused or did not answer.
    @discardableResult
    public func stop(timeout: Double = 1.0) -> CommandFailure? {
        for id in [timerID, watchdogID].compactMap({ $0 }) { loop.cancel(id) }
        timerID = nil
        watchdogID = nil
        defer { closeTransport() }
        guard let t = transport, let family = family ?? procedure?.family else { return nil }
        let advertising = settings.advertisement != nil || applied?.advertisement != nil || procedure != nil && options.advertises
        let scanning = settings.scanning != nil || applied?.scanning != nil
        procedure = nil
        var p = ControllerProcedure.stopAll(scanning: scanning, advertising: advertising, family: family, timeout: timeout)
        var step = p.start(at: 0)
        // This wait is real blocking on the transport, so it reads the real clock.
        let deadline = monotonicSeconds() + timeout
        while case let .send(command) = step {
            guard (try? t.send(command)) != nil else { return CommandFailure(opcode: command.opcode, status: nil) }
            step = .wait
            while case .wait = step {
                let left = deadline - monotonicSeconds()
                guard left > 0 else { return CommandFailure(opcode: command.opcode, status: nil) }
                var fds = [pollfd(fd: t.fileDescriptor, events: Int16(POLLIN), revents: 0)]
                _ = poll(&fds, 1, Int32(max(1, left * 1000)))
                guard let packets = try? t.receive() else { return CommandFailure(opcode: command.opcode, status: nil) }
                for packet in packets where packet.type == .event {
                    if let event = try? HCIEvent(decoding: packet.bytes[...]) {
                        let s = p.handle(event, at: 0)
                        if s != .wait { step = s }
                    }
                }
            }
        }
        if case let .failed(failure) = step { return failure }
        return nil
    }
}
