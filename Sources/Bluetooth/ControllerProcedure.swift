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
        if let status { return "\(opcode) failed: \(status)" }
        return "\(opcode) got no answer from the controller in time"
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
        if time - sentAt >= timeout {
            isFinished = true
            self.sentAt = nil
            return .failed(CommandFailure(opcode: steps[index].command.opcode, status: nil))
        }
        return .wait
    }

    /// When the outstanding command times out, if one is outstanding.
    public var deadline: Double? { sentAt.map { $0 + timeout } }
}

extension ControllerProcedure {
    /// Scanning for the hunter: disable (tolerating "already off"), parameters, enable without
    /// duplicate filtering (it would stop RSSI updates). Interval = window so each window
    /// mixes all three advertising channels. Passive unless `active` (scan responses wanted).
    public static func startScanning(active: Bool, interval: UInt16 = 0x0010, timeout: Double = 2.0, knownSupport: SupportedCommands? = nil) -> ControllerProcedure {
        ControllerProcedure(timeout: timeout, knownSupport: knownSupport) { support in
            if support.extendedScanning {
                return (.extended, [
                    Step(.leSetExtendedScanEnable(false, filterDuplicates: false), tolerating: [.commandDisallowed]),
                    Step(.leSetExtendedScanParameters(active: active, interval: interval, window: interval, ownAddress: .public)),
                    Step(.leSetExtendedScanEnable(true, filterDuplicates: false)),
                ])
            }
            return (.legacy, [
                Step(.leSetScanEnable(false, filterDuplicates: false), tolerating: [.commandDisallowed]),
                Step(.leSetScanParameters(active: active, interval: interval, window: interval, ownAddress: .public)),
                Step(.leSetScanEnable(true, filterDuplicates: false)),
            ])
        }
    }

    /// Scanning off, as on exit (tolerating "already off").
    public static func stopScanning(family: CommandFamily, timeout: Double = 1.0) -> ControllerProcedure {
        ControllerProcedure(timeout: timeout, knownSupport: SupportedCommands(octets: [])) { _ in
            let command: HCICommand =
                family == .extended
                ? .leSetExtendedScanEnable(false, filterDuplicates: false) : .leSetScanEnable(false, filterDuplicates: false)
            return (family, [Step(command, tolerating: [.commandDisallowed])])
        }
    }
}
