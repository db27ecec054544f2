#if canImport(Glibc)
import Glibc
#endif
import Bluetooth

/// Where the hunter's scanner stands.
public enum ScannerState: Equatable, Sendable {
    case connecting
    case configuring
    case scanning(CommandFamily)
    /// The adapter went away or refused; retrying.
    case lost(String)
}

/// Keeps a controller scanning for as long as the appliance runs: opens the transport,
/// configures scanning (one command at a time, each answered and checked), hands every
/// sighting over, notices the adapter going away or another program switching scanning off,
/// and comes back with backoff. Runs on the event loop's thread.
public final class ScannerSession {
    public typealias TransportFactory = () throws(TransportError) -> HCITransport

    public struct Options: Sendable {
        public var active = false
        /// Retry delays after a failure grow from `minimumBackoff` to `maximumBackoff` (s):
        /// the adapter is back within about `maximumBackoff` of returning.
        public var minimumBackoff = 0.25
        public var maximumBackoff = 1.5
        /// No report at all for this long while scanning: configure again (another program
        /// may have stopped scanning without us seeing its command).
        public var reportWatchdog = 30.0
        public var commandTimeout = 2.0
        public init() {}
    }

    private let loop: EventLoop
    private let factory: TransportFactory
    public var options: Options
    public private(set) var transport: HCITransport?
    public private(set) var state: ScannerState = .connecting
    private var procedure: ControllerProcedure?
    private var watchID: Int?
    private var timerID: Int?
    private var backoff: Double
    private var lastReport = 0.0
    private var family: CommandFamily?
    private var support: SupportedCommands?

    /// Every beacon in every advertising report, stamped with the monotonic clock.
    public var onSighting: (BeaconSighting) -> Void = { _ in }
    /// Every advertising report (scan responses included), for `scan --active`.
    public var onReport: (AdvertisingReport, Double) -> Void = { _, _ in }
    public var onStateChange: (ScannerState) -> Void = { _ in }
    /// A failure no retry will mend (permission, no Bluetooth in this kernel).
    public var onFatal: (TransportError) -> Void = { _ in }
    /// The loop's clock: timers and procedure deadlines must share one.
    private func now() -> Double { monotonicSeconds() }

    public init(loop: EventLoop, options: Options = Options(), transport factory: @escaping TransportFactory) {
        self.loop = loop
        self.options = options
        self.factory = factory
        backoff = options.minimumBackoff
    }

    private func set(_ new: ScannerState) {
        guard new != state else { return }
        state = new
        onStateChange(new)
    }

    public func start() {
        connect()
    }

    private func connect() {
        timerID = nil
        set(.connecting)
        let t: HCITransport
        do {
            t = try factory()
        } catch {
            if !error.isTransient {
                onFatal(error)
                return
            }
            fail(error.description)
            return
        }
        transport = t
        watchID = loop.watch(t.fileDescriptor) { [weak self] in self?.readable() }
        set(.configuring)
        var p = ControllerProcedure.startScanning(active: options.active, timeout: options.commandTimeout, knownSupport: support)
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
                if !error.isTransient { onFatal(error) } else { fail(error.description) }
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
            lastReport = now()
            set(.scanning(family ?? .legacy))
            armWatchdog()
        case let .failed(failure):
            procedure = nil
            fail(failure.description)
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
        if let timerID { loop.cancel(timerID) }
        timerID = loop.schedule(at: lastReport + options.reportWatchdog) { [weak self] in self?.watchdog() }
    }

    private func watchdog() {
        timerID = nil
        guard case .scanning = state else { return }
        if now() - lastReport >= options.reportWatchdog {
            reconfigure()
        } else {
            armWatchdog()
        }
    }

    /// Runs the scanning procedure again on the open transport.
    private func reconfigure() {
        guard transport != nil else { return }
        set(.configuring)
        var p = ControllerProcedure.startScanning(active: options.active, timeout: options.commandTimeout, knownSupport: support)
        let step = p.start(at: now())
        procedure = p
        perform(step)
    }

    private func readable() {
        guard let t = transport else { return }
        let packets: [HCIPacket]
        do {
            packets = try t.receive()
        } catch {
            if !error.isTransient { onFatal(error) } else { fail(error.description) }
            return
        }
        let time = now()
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

    /// Another program on the adapter (bluetoothd) switched scanning off: re-arm.
    private func foreign(_ command: HCICommandPacket) {
        guard command.opcode == .leSetScanEnable || command.opcode == .leSetExtendedScanEnable,
            command.parameters.first == 0, case .scanning = state
        else { return }
        reconfigure()
    }

    /// What the kernel socket shows when another program sends a command (tests use it
    /// with transports that do not echo other programs' commands).
    public func handleForeignCommandForTesting(_ command: HCICommand) throws {
        foreign(try HCICommandPacket(decoding: try command.encoded()[...]))
    }

    private func handle(_ event: HCIEvent, at time: Double) {
        if case let .advertisingReports(reports) = event {
            lastReport = time
            for report in reports {
                onReport(report, time)
                for beacon in Beacon.all(in: report.data) {
                    onSighting(
                        BeaconSighting(
                            time: time, address: report.address, addressType: report.addressType, rssi: report.rssi,
                            beacon: beacon, report: report.format))
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
        set(.lost(reason))
        if let timerID { loop.cancel(timerID) }
        timerID = loop.schedule(after: backoff) { [weak self] in self?.connect() }
        backoff = min(options.maximumBackoff, backoff * 2)
    }

    private func closeTransport() {
        if let watchID { loop.unwatch(watchID) }
        watchID = nil
        transport?.close()
        transport = nil
    }

    /// Switches scanning off (waiting up to `timeout` for the controller's answer) and closes.
    public func stop(timeout: Double = 1.0) {
        if let timerID { loop.cancel(timerID) }
        timerID = nil
        defer { closeTransport() }
        guard let t = transport, let family else { return }
        var p = ControllerProcedure.stopScanning(family: family, timeout: timeout)
        var step = p.start(at: 0)
        // This wait is real blocking on the transport, so it reads the real clock.
        let deadline = monotonicSeconds() + timeout
        while case let .send(command) = step {
            guard (try? t.send(command)) != nil else { return }
            step = .wait
            while case .wait = step {
                let left = deadline - monotonicSeconds()
                guard left > 0 else { return }
                var fds = [pollfd(fd: t.fileDescriptor, events: Int16(POLLIN), revents: 0)]
                _ = poll(&fds, 1, Int32(max(1, left * 1000)))
                guard let packets = try? t.receive() else { return }
                for packet in packets where packet.type == .event {
                    if let event = try? HCIEvent(decoding: packet.bytes[...]) {
                        let s = p.handle(event, at: 0)
                        if s != .wait { step = s }
                    }
                }
            }
        }
    }
}
