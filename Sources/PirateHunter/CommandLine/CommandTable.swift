import FoundationEssentials
import Hunt
import Radio
import Ranging

/// One option of a command, declared once: its spellings (the first is the one shown), the
/// placeholder of its value (nil: a switch), one line of help, and what it does. `apply`
/// checks the value and records it in the flags (a setting of the file goes into the
/// configuration from there); `spelled` is how the user wrote the flag, for the error. A
/// switch is recorded as given (`has`) and needs no `apply` unless it sets something.
struct Flag: Sendable {
    typealias Apply = @Sendable (_ spelled: String, _ value: String, _ flags: inout ConfigurationFlags) throws(CLIError) -> Void

    let names: [String]
    let value: String?
    let help: String
    let apply: Apply

    /// A switch.
    init(_ names: String..., help: String, apply: @escaping Apply = { _, _, _ throws(CLIError) in }) {
        self.init(names, nil, help, apply)
    }

    /// A flag with a value, which `apply` checks and records.
    init(_ names: String..., value: String, help: String, apply: @escaping Apply) {
        self.init(names, value, help, apply)
    }

    private init(_ names: [String], _ value: String?, _ help: String, _ apply: @escaping Apply) {
        self.names = names
        self.value = value
        self.help = help
        self.apply = apply
    }

    var name: String { names[0] }
    /// `--hci T`, `--json`.
    var synopsis: String { value.map { "\(name) \($0)" } ?? name }
}

/// Every option of every command, once: the same flag means the same thing everywhere, and
/// its row here is the only place that names it.
enum Flags {
    // Shared by every command that talks to a controller.
    static let hci = Flag("--hci", "--adapter", value: "T", help: "the controller: \(TransportSpec.help) (default auto)") { flag, text, flags throws(CLIError) in
        guard let transport = TransportSpec(validating: text) else {
            throw CLIError(.usage, "\(flag): '\(text)' is not a transport; allowed: \(TransportSpec.allowed)")
        }
        flags.set { $0.transport = transport }
    }
    static let config = Flag("--config", value: "FILE", help: "settings file (default /etc/pirate-hunter/hunter.json; the treasure box's treasure.json)") { _, text, flags throws(CLIError) in
        flags.configPath = text
    }
    static let json = Flag("--json", help: "JSON lines on stdout (the contract in the README)") { _, _, flags throws(CLIError) in
        flags.set { $0.json = true }
    }
    static let record = Flag("--record", value: "FILE.btsnoop", help: "write every HCI packet both ways to a btsnoop file (Wireshark opens it)") { flag, text, flags throws(CLIError) in
        let path = try ConfigurationFlags.nonEmpty(flag, text)
        flags.set { $0.record = path }
    }
    static let duration = Flag("--duration", value: "S", help: "stop by itself after S seconds") { flag, text, flags throws(CLIError) in
        guard let seconds = Double(text), seconds > 0, seconds.isFinite else {
            throw CLIError(.usage, "\(flag): '\(CLIError.printable(text))' is not a positive number of seconds")
        }
        flags.duration = seconds
    }
    static let region = Flag("--region", value: "UUID[:MAJOR[:MINOR]]", help: "the region to hunt (repeatable; replaces the file's regions)") { flag, text, flags throws(CLIError) in
        guard let region = RangingOutput.region(text) else {
            throw CLIError(.usage, "\(flag): '\(text)' is not UUID[:MAJOR[:MINOR]] (major and minor 0-65535)")
        }
        guard !flags.regions.contains(where: { $0.hasTheBeacons(of: region) }) else {
            throw CLIError(.usage, "\(flag): '\(text)' is given twice")
        }
        flags.regions.append(region)
        let regions = flags.regions
        // The flag names what to hunt: a trail of the file gives way to it.
        flags.set {
            $0.huntedRegions = regions
            $0.hunt.trail = []
        }
    }
    // Voice and sound.
    static let device = Flag("--device", value: "ALSA", help: "ALSA device (default auto: the first USB card, else default; plughw:CARD=Device,DEV=0, sysdefault:CARD=vc4hdmi0, file:FILE=x.wav,FORMAT=wav, null)") { flag, text, flags throws(CLIError) in
        let device = try ConfigurationFlags.nonEmpty(flag, text)
        flags.set { $0.audio.device = device }
    }
    static let volume = Flag("--volume", value: "DB", help: "volume in dB (-60 to 12)") { flag, text, flags throws(CLIError) in
        guard let volume = Double(text), Limits.volumeDB.contains(volume) else {
            throw CLIError(.usage, "\(flag): '\(text)' is not a volume; allowed: \(Limits.text(Limits.volumeDB)) dB")
        }
        flags.set { $0.audio.volumeDB = volume }
    }
    static let language = Flag("--lang", value: "LANG", help: "line pack: en-family (default), en-pirate or ja") { flag, text, flags throws(CLIError) in
        let language = try ConfigurationFlags.nonEmpty(flag, text)
        flags.set { $0.voice.language = language }
    }
    static let voiceDirectory = Flag("--voice-dir", value: "DIR", help: "where the voice, line packs and sounds are") { flag, text, flags throws(CLIError) in
        let directory = try ConfigurationFlags.nonEmpty(flag, text)
        flags.set { $0.voice.voicesDirectory = directory }
    }
    static let cacheDirectory = Flag("--cache-dir", value: "DIR", help: "cache of rendered lines (\"\" for none)") { _, text, flags throws(CLIError) in
        flags.set { $0.voice.cacheDirectory = text }
    }
    // The treasure's identity (treasure, demo's box): a wrong value is a configuration error
    // (78) naming the field, as in the file.
    static let uuid = Flag("--uuid", value: "UUID", help: "the treasure's proximity UUID") { flag, text, flags throws(CLIError) in
        guard let uuid = UUID(uuidString: text) else {
            throw CLIError(.config, "\(flag) (treasure.uuid): '\(text)' is not a UUID; allowed: 8-4-4-4-12 hex digits")
        }
        flags.set { $0.treasure.uuid = uuid }
    }
    static let major = Flag("--major", value: "N", help: "the treasure's major (0-65535)") { flag, text, flags throws(CLIError) in
        let major = UInt16(clamping: try ConfigurationFlags.field(flag, "treasure.major", text, Limits.identifier))
        flags.set { $0.treasure.major = major }
    }
    static let minor = Flag("--minor", value: "N", help: "the treasure's minor (0-65535)") { flag, text, flags throws(CLIError) in
        let minor = UInt16(clamping: try ConfigurationFlags.field(flag, "treasure.minor", text, Limits.identifier))
        flags.set { $0.treasure.minor = minor }
    }
    static let power = Flag("--power", value: "DBM", help: "measured power: RSSI at 1 m (-127 to 20)") { flag, text, flags throws(CLIError) in
        let power = Int8(clamping: try ConfigurationFlags.field(flag, "treasure.power", text, Limits.power))
        flags.set { $0.treasure.power = power }
    }
    static let interval = Flag("--interval", value: "MS", help: "advertising interval in ms (100-10240)") { flag, text, flags throws(CLIError) in
        let interval = try ConfigurationFlags.field(flag, "treasure.interval_ms", text, HunterConfiguration.Treasure.intervalRange)
        flags.set { $0.treasure.intervalMilliseconds = interval }
    }
    static let reward = Flag("--reward", value: "TEXT", help: "the reward in the scan response (printable, at most 20 UTF-8 bytes: it is sealed)") { flag, text, flags throws(CLIError) in
        if let problem = Limits.rewardProblem(text) {
            throw CLIError(.config, "\(flag) (treasure.reward): \(problem); allowed: \(Limits.rewardAllowed)")
        }
        flags.set { $0.treasure.reward = text }
    }
    // The hunter.
    static let hunterID = Flag("--hunter-id", value: "N", help: "this hunter's number, announced to the box after a find") { flag, text, flags throws(CLIError) in
        let id = UInt16(clamping: try ConfigurationFlags.field(flag, "announce.hunter_id", text, Limits.identifier))
        flags.set { $0.announce.hunterID = id }
    }
    static let rewardSVG = Flag("--reward-svg", value: "FILE", help: "write the reward's QR code as an SVG") { flag, text, flags throws(CLIError) in
        guard !text.isEmpty else { throw CLIError(.usage, "\(flag): needs a non-empty value") }
        flags.rewardSVG = text
    }
    static let quiet = Flag("--quiet", help: "range and print, say nothing")
    static let waitForFix = Flag("--wait-for-fix", help: "a mistake in the settings is said aloud once, in plain words, and the hunt starts when the file is fixed (the service's way; without it: exit 66/78)")
    static let noDetector = Flag("--no-detector", help: "no treasure detector clicks between lines (hunt.detector.enabled false)") { _, _, flags throws(CLIError) in
        flags.set { $0.hunt.detector.enabled = false }
    }
    static let noWeb = Flag("--no-web", help: "no parent's page (web.enabled false)") { _, _, flags throws(CLIError) in
        flags.set { $0.web.enabled = false }
    }
    static let webPort = Flag("--web-port", value: "N", help: "the parent's page's port (web.port, default 8080; 0: any free port)") { flag, text, flags throws(CLIError) in
        guard let port = UInt16(text) else { throw CLIError(.usage, "\(flag): '\(text)' is not a port; allowed: 0 to 65535") }
        flags.set { $0.web.port = port }
    }
    static let virtualTime = Flag("--virtual-time", help: "run on virtual time, as fast as it computes (the simulator only; tests and benchmarks)")
    // Others.
    static let active = Flag("--active", help: "active scanning: names and treasure rewards from scan responses")
    static let noKiosk = Flag("--no-kiosk", help: "log lines instead of the full-screen kiosk on a terminal")
    static let hunt = Flag("--hunt", help: "the whole hunt on the capture's clock: what the hunter would have said")
    static let out = Flag("--out", value: "FILE.wav", help: "write what would be heard to a WAV instead of playing it") { _, text, flags throws(CLIError) in
        flags.out = text
    }
    static let line = Flag("--line", value: "EVENT", help: "a line of a hunt event (startup, region-entered, warmer, ...)") { flag, text, flags throws(CLIError) in
        guard let event = LineEvent(rawValue: text) else {
            let known = LineEvent.allCases.map(\.rawValue).joined(separator: ", ")
            throw CLIError(.usage, "\(flag): unknown event '\(CLIError.printable(text))' (one of: \(known))")
        }
        flags.line = event
    }
    static let sound = Flag("--sound", help: "then the arrr")
    static let jsonLines = Flag("--json-lines", help: "the --json lines as the README's table (one example of each)")
    static let markdown = Flag("--markdown", help: "the commands as the README's table")
    static let man = Flag("--man", help: "the manual page pirate-hunter(1), in roff")
    static let silent = Flag("--silent", help: "play no test line")
    static let newGame = Flag("--new-game", help: "make a new game key (32 random bytes) and print it, as text and a QR code, with the pair command for each Pi")

    static let help = Flag("--help", "-h", help: "this text")
    static let version = Flag("--version", help: "the version")

    /// What every controller command takes, with the same meaning and validation.
    static let controller = [hci, config, json, record, duration]
    static let voice = [device, volume, language, voiceDirectory, cacheDirectory]
    static let treasure = [uuid, major, minor, power, interval, reward]
}

/// A command: its table row is the single source of its parsing, its `--help`, the
/// top-level `help` and the README's table.
struct CommandSpec: Sendable {
    let name: String
    /// Positional operands ("FILE", "[TEXT]"), "" for none.
    let operands: String
    let summary: String
    let flags: [Flag]
    let run: @Sendable (ParsedArguments) throws(CLIError) -> ExitCode

    var minimumOperands: Int { operands.isEmpty || operands.hasPrefix("[") ? 0 : 1 }
    var maximumOperands: Int { operands.isEmpty ? 0 : 1 }

    var synopsis: String {
        ([name] + (operands.isEmpty ? [] : [operands]) + flags.map { "[\($0.synopsis)]" }).joined(separator: " ")
    }

    var help: String {
        var text = "usage: pirate-hunter \(name)\(operands.isEmpty ? "" : " " + operands) [OPTIONS]\n\(summary)\n\noptions:\n"
        let rows = flags + [Flags.help]
        let width = (rows.map { $0.names.joined(separator: ", ").count + ($0.value.map { $0.count + 1 } ?? 0) }.max() ?? 0) + 2
        for flag in rows {
            var left = flag.names.joined(separator: ", ")
            if let value = flag.value { left += " " + value }
            text += "  " + left + String(repeating: " ", count: max(1, width - left.count)) + flag.help + "\n"
        }
        return text
    }
}

/// What the user gave a command, checked against its table: known flags, each value checked
/// and recorded by its flag, operands counted.
struct ParsedArguments {
    let command: CommandSpec
    /// What the flags given say, for the command and the configuration.
    private(set) var flags = ConfigurationFlags()
    private(set) var operands: [String] = []

    enum Outcome {
        case run(ParsedArguments)
        case help
    }

    static func parse(_ arguments: [String], for command: CommandSpec) throws(CLIError) -> Outcome {
        var parsed = ParsedArguments(command: command)
        var given: [(flag: Flag, spelled: String, value: String)] = []
        var index = 0
        var onlyOperands = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyOperands || argument == "-" || !argument.hasPrefix("-") {
                parsed.operands.append(argument)
                continue
            }
            if argument == "--" {
                onlyOperands = true
                continue
            }
            if Flags.help.names.contains(argument) { return .help }
            var spelled = argument
            var inline: String?
            if let equals = argument.firstIndex(of: "=") {
                spelled = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            guard let flag = command.flags.first(where: { $0.names.contains(spelled) }) else {
                throw CLIError(.usage, "unknown option '\(CLIError.printable(spelled))' (see 'pirate-hunter \(command.name) --help')")
            }
            var value = ""
            if flag.value != nil {
                if let inline {
                    value = inline
                } else {
                    guard index < arguments.count else { throw CLIError(.usage, "\(spelled) needs a value (\(flag.synopsis))") }
                    value = arguments[index]
                    index += 1
                }
            } else if inline != nil {
                throw CLIError(.usage, "\(spelled) takes no value")
            }
            given.append((flag, spelled, value))
        }
        if parsed.operands.count > command.maximumOperands {
            let extra = parsed.operands[command.maximumOperands]
            throw CLIError(.usage, command.maximumOperands == 0
                ? "unexpected argument '\(CLIError.printable(extra))' (see 'pirate-hunter \(command.name) --help')"
                : "one \(command.operands.trimmingBrackets) only; '\(CLIError.printable(extra))' is one too many (quote a text with spaces)")
        }
        if parsed.operands.count < command.minimumOperands {
            throw CLIError(.usage, "no \(command.operands) given (usage: pirate-hunter \(command.name) \(command.operands) [OPTIONS])")
        }
        // Every flag known and the operands counted (a --help anywhere helps): now the
        // values, in the order given (a later flag wins).
        for (flag, spelled, value) in given { try parsed.flags.record(flag, spelled: spelled, value: value) }
        return .run(parsed)
    }

    /// Whether `flag` was given; a command asks only about flags of its own row.
    func has(_ flag: Flag) -> Bool {
        assert(command.flags.contains { $0.name == flag.name }, "\(flag.name) is not in the row of \(command.name)")
        return flags.has(flag)
    }

    var operand: String? { operands.first }

    /// `--virtual-time`: only a world made in this process can run faster than real time.
    func clock(simulated: Bool) throws(CLIError) -> LoopClock {
        guard has(Flags.virtualTime) else { return .monotonic }
        guard simulated else { throw CLIError(.usage, "\(Flags.virtualTime.name) needs \(Flags.hci.name) simulator (a real radio runs in real time)") }
        return .virtual(start: 0)
    }
}

extension String {
    fileprivate var trimmingBrackets: String { filter { $0 != "[" && $0 != "]" } }
}
