/// Why a controller procedure stopped.
public struct CommandFailure: Error, Equatable, Sendable, CustomStringConvertible {
    public var opcode: HCIOpcode
    /// The status the controller answered with; nil when it did not answer in time.
    public var status: HCIStatus?

    public init(opcode: HCIOpcode, status: HCIStatus?) {
        self.opcode = opcode
        self.status = status
    }

    public var description: String {
        let what = status.map { "\(opcode) failed: \($0)" } ?? "\(opcode) got no answer from the controller in time"
        return hint.map { "\(what): \($0)" } ?? what
    }
}

/// What a procedure wants done next.
public enum ProcedureStep: Equatable, Sendable {
    /// Send this command and feed the answer back.
    case send(HCICommand)
    /// Nothing to do until an event arrives or time passes.
    case wait
    /// The procedure finished; the controller is configured.
    case finished
    case failed(CommandFailure)
}

/// Which command family the controller speaks, chosen from its supported-commands bits.
public enum CommandFamily: String, Equatable, Sendable {
    case legacy, extended
}

/// Runs HCI commands one at a time: each waits for its Command Complete or Command Status
/// with the same opcode, within a real timeout, and its status is checked (never fire and
/// forget: that hides Command Disallowed, Invalid Parameters, Unknown Command). Pure: the
/// caller sends, passes events and time in.
///
/// It first reads the controller's supported commands, then runs the plan made from them.
public struct ControllerProcedure: Sendable {
    public struct Step: Equatable, Sendable {
        public var command: HCICommand
        /// Statuses that count as done (e.g. Command Disallowed when disabling what is already off).
        public var tolerated: Set<HCIStatus>

        public init(_ command: HCICommand, tolerating tolerated: Set<HCIStatus> = []) {
            self.command = command
            self.tolerated = tolerated
        }
    }

    public typealias Plan = @Sendable (SupportedCommands) -> (CommandFamily, [Step])

    private let plan: Plan
    private var steps: [Step] = [Step(.readLocalSupportedCommands)]
    private var index = 0
    private var sentAt: Double?
    private var planned = false
    public let timeout: Double
    public private(set) var family: CommandFamily?
    public private(set) var supported: SupportedCommands?
    public private(set) var isFinished = false

    /// `plan` turns the supported commands into the steps to run; `knownSupport` skips the read.
    public init(timeout: Double = 2.0, knownSupport: SupportedCommands? = nil, plan: @escaping Plan) {
        self.timeout = timeout
        self.plan = plan
        if let knownSupport { adopt(knownSupport) }
    }

    private mutating func adopt(_ support: SupportedCommands) {
        let (family, rest) = plan(support)
        self.family = family
        self.supported = support
        steps = rest
        index = 0
        planned = true
    }

    /// The first command. Call once.
    public mutating func start(at time: Double) -> ProcedureStep {
        next(at: time)
    }

    private mutating func next(at time: Double) -> ProcedureStep {
        guard index < steps.count else {
            isFinished = true
            sentAt = nil
            return .finished
        }
        sentAt = time
        return .send(steps[index].command)
    }

    /// Feeds an event; anything that does not answer the outstanding command is ignored.
    public mutating func handle(_ event: HCIEvent, at time: Double) -> ProcedureStep {
        guard !isFinished, sentAt != nil, index < steps.count else { return .wait }
        let step = steps[index]
        guard event.answeredOpcode == step.command.opcode else { return .wait }
        let status = event.status ?? .success
        if case .commandStatus = event, status.isSuccess {
            return .wait  // accepted; the Command Complete follows (LE commands we send complete directly)
        }
        guard status.isSuccess || step.tolerated.contains(status) else {
            sentAt = nil
            isFinished = true
            return .failed(CommandFailure(opcode: step.command.opcode, status: status))
        }
        if !planned {
            guard case let .commandComplete(_, _, parameters) = event,
                let support = try? SupportedCommands(returnParameters: parameters)
            else {
                isFinished = true
                return .failed(CommandFailure(opcode: step.command.opcode, status: .unknownCommand))
            }
            adopt(support)
            return next(at: time)
        }
        index += 1
        return next(at: time)
    }

    /// Checks the timeout of the outstanding command.
    public mutating func tick(at time: Double) -> ProcedureStep {
        guard !isFinished, let sentAt, index < steps.count else { return isFinished ? .finished : .wait }
        // Against `deadline` itself (the timer's), not `time - sentAt`, which can fall short
        // of the timeout by a rounding when the timer fires exactly at the deadline.
        if time >= sentAt + timeout {
            isFinished = true
            self.sentAt = nil
            return .failed(CommandFailure(opcode: steps[index].command.opcode, status: nil))
        }
        return .wait
    }

    /// When the outstanding command times out, if one is outstanding.
    public var deadline: Double? { sentAt.map { $0 + timeout } }
}

/// What a controller should be doing: scanning (passive or active) and/or advertising.
public struct ControllerSettings: Equatable, Sendable {
    public enum Scanning: Equatable, Sendable {
        case passive
        /// Scan requests are sent, so scan responses (the treasure's reward) come back.
        case active
    }

    public var scanning: Scanning?
    public var advertisement: Advertisement?

    public init(scanning: Scanning? = nil, advertisement: Advertisement? = nil) {
        self.scanning = scanning
        self.advertisement = advertisement
    }
}

/// One advertisement: data, optional scan response, interval. Non-connectable; scannable
/// (ADV_SCAN_IND) only when there is a scan response to give.
public struct Advertisement: Equatable, Sendable {
    public var data: [UInt8]
    public var scanResponse: [UInt8]
    /// In controller units of 0.625 ms (0x00A0 = 100 ms, the least non-connectable
    /// advertising may use on 4.x controllers).
    public var intervalUnits: UInt16

    public init(data: [UInt8], scanResponse: [UInt8] = [], intervalUnits: UInt16 = 0x00A0) {
        self.data = data
        self.scanResponse = scanResponse
        self.intervalUnits = intervalUnits
    }

    public var type: LegacyAdvertisingType { scanResponse.isEmpty ? .nonConnectableUndirected : .scannableUndirected }
}

extension HCIOpcode {
    /// Commands of the advertising procedures (legacy and extended).
    public var isAdvertising: Bool {
        [
            HCIOpcode.leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData, .leSetAdvertisingEnable,
            .leSetExtendedAdvertisingParameters, .leSetExtendedAdvertisingData, .leSetExtendedScanResponseData,
            .leSetExtendedAdvertisingEnable, .leRemoveAdvertisingSet,
        ].contains(self)
    }
}

extension HCIStatus {
    public static let memoryCapacityExceeded = HCIStatus(rawValue: 0x07)
    public static let unknownAdvertisingIdentifier = HCIStatus(rawValue: 0x42)
}

extension CommandFailure {
    /// What the failure most likely means, for the one log line a grown-up reads.
    public var hint: String? {
        guard let status else { return nil }
        switch (status, opcode) {
        case (.unknownCommand, _), (.unsupportedFeature, _):
            return "this controller does not support the command"
        case (.commandDisallowed, .leSetAdvertisingParameters), (.commandDisallowed, .leSetExtendedAdvertisingParameters):
            return "advertising is already on (another program?) and its parameters cannot change"
        case (.commandDisallowed, _):
            return "not allowed in the controller's current state (another program may be using it)"
        case (.invalidParameters, .leSetAdvertisingParameters), (.invalidParameters, .leSetExtendedAdvertisingParameters):
            return "the controller refuses these parameters (an interval below 100 ms is not allowed for non-connectable advertising on 4.x)"
        case (.invalidParameters, _):
            return "the controller refuses these parameters"
        case (.memoryCapacityExceeded, _):
            return "no free advertising set in the controller"
        default:
            return nil
        }
    }
}

extension ControllerProcedure {
    /// Which command family a controller gets. A session that may advertise uses extended
    /// commands only when both extended scanning and extended advertising are supported:
    /// once one extended command is used, legacy ones answer Command Disallowed.
    public static func family(for support: SupportedCommands, advertises: Bool) -> CommandFamily {
        if advertises { return support.extendedScanning && support.extendedAdvertising ? .extended : .legacy }
        return support.extendedScanning ? .extended : .legacy
    }

    /// The handle of our one extended advertising set.
    public static let advertisingHandle: UInt8 = 0

    /// Brings the controller from `old` settings (nil: unknown, as after connecting) to `new`.
    /// Scanning: disable (tolerating "already off"), parameters, enable without duplicate
    /// filtering (it would stop RSSI updates), interval = window so each window mixes all
    /// three advertising channels. Advertising: disable (tolerated), parameters, data, scan
    /// response, enable: data before enable, or the controller advertises empty data. Only
    /// what changed is sent; from nil, what `new` leaves off is not touched.
    public static func configure(
        from old: ControllerSettings?, to new: ControllerSettings, advertises: Bool, scanInterval: UInt16 = 0x0010,
        timeout: Double = 2.0, knownSupport: SupportedCommands? = nil
    ) -> ControllerProcedure {
        ControllerProcedure(timeout: timeout, knownSupport: knownSupport) { support in
            let family = family(for: support, advertises: advertises)
            var steps: [Step] = []
            if old?.scanning != new.scanning, new.scanning != nil || old != nil {
                steps += scanningSteps(new.scanning, family: family, interval: scanInterval)
            }
            if old?.advertisement != new.advertisement, new.advertisement != nil || old != nil {
                steps += advertisingSteps(new.advertisement, family: family)
            }
            return (family, steps)
        }
    }

    static func scanningSteps(_ scanning: ControllerSettings.Scanning?, family: CommandFamily, interval: UInt16) -> [Step] {
        let active = scanning == .active
        switch family {
        case .extended:
            let off = Step(.leSetExtendedScanEnable(false, filterDuplicates: false), tolerating: [.commandDisallowed])
            guard scanning != nil else { return [off] }
            return [
                off,
                Step(.leSetExtendedScanParameters(active: active, interval: interval, window: interval, ownAddress: .public)),
                Step(.leSetExtendedScanEnable(true, filterDuplicates: false)),
            ]
        case .legacy:
            let off = Step(.leSetScanEnable(false, filterDuplicates: false), tolerating: [.commandDisallowed])
            guard scanning != nil else { return [off] }
            return [
                off,
                Step(.leSetScanParameters(active: active, interval: interval, window: interval, ownAddress: .public)),
                Step(.leSetScanEnable(true, filterDuplicates: false)),
            ]
        }
    }

    static func advertisingSteps(_ advertisement: Advertisement?, family: CommandFamily) -> [Step] {
        let handle = advertisingHandle
        switch family {
        case .extended:
            // Disabling a set that does not exist yet is Unknown Advertising Identifier.
            let off = Step(.leSetExtendedAdvertisingEnable(false, handle: handle), tolerating: [.commandDisallowed, .unknownAdvertisingIdentifier])
            guard let a = advertisement else { return [off] }
            var steps = [
                off,
                // A set keeps its data across programs (no Reset): a set that held a scan
                // response refuses non-scannable parameters (Invalid Parameters). Start afresh.
                Step(.leRemoveAdvertisingSet(handle: handle), tolerating: [.commandDisallowed, .unknownAdvertisingIdentifier]),
                Step(.leSetExtendedAdvertisingParameters(
                    handle: handle, type: a.type, intervalMin: UInt32(a.intervalUnits), intervalMax: UInt32(a.intervalUnits),
                    ownAddress: .public, txPower: nil)),
                Step(.leSetExtendedAdvertisingData(handle: handle, a.data)),
            ]
            // A non-scannable set refuses scan-response data (Invalid Parameters).
            if !a.scanResponse.isEmpty { steps.append(Step(.leSetExtendedScanResponseData(handle: handle, a.scanResponse))) }
            steps.append(Step(.leSetExtendedAdvertisingEnable(true, handle: handle)))
            return steps
        case .legacy:
            let off = Step(.leSetAdvertisingEnable(false), tolerating: [.commandDisallowed])
            guard let a = advertisement else { return [off] }
            var steps = [
                off,
                Step(.leSetAdvertisingParameters(intervalMin: a.intervalUnits, intervalMax: a.intervalUnits, type: a.type, ownAddress: .public)),
                Step(.leSetAdvertisingData(a.data)),
            ]
            if !a.scanResponse.isEmpty { steps.append(Step(.leSetScanResponseData(a.scanResponse))) }
            steps.append(Step(.leSetAdvertisingEnable(true)))
            return steps
        }
    }

    /// Scanning and advertising off, as on exit (each tolerating "already off").
    public static func stopAll(scanning: Bool = true, advertising: Bool, family: CommandFamily, timeout: Double = 1.0) -> ControllerProcedure {
        ControllerProcedure(timeout: timeout, knownSupport: SupportedCommands(octets: [])) { _ in
            var steps: [Step] = []
            if advertising { steps += advertisingSteps(nil, family: family) }
            if scanning { steps += scanningSteps(nil, family: family, interval: 0x0010) }
            return (family, steps)
        }
    }
}
