import Radio

/// One option of a command, as the user writes it: its spellings (the first is the one
/// shown), the placeholder of its value (nil: a switch) and one line of help.
struct Flag: Equatable, Sendable {
    let names: [String]
    let value: String?
    let help: String

    init(_ names: String..., value: String? = nil, help: String) {
        self.names = names
        self.value = value
        self.help = help
    }

    var name: String { names[0] }
    /// `--hci T`, `--json`.
    var synopsis: String { value.map { "\(name) \($0)" } ?? name }
}

/// Every option of every command, once: the same flag means the same thing everywhere.
enum Flags {
    // Shared by every command that talks to a controller.
    static let hci = Flag("--hci", "--adapter", value: "T", help: "the controller: \(TransportSpec.help) (default auto)")
    static let config = Flag("--config", value: "FILE", help: "settings file (default /etc/pirate-hunter/hunter.json; the treasure box's treasure.json)")
    static let json = Flag("--json", help: "JSON lines on stdout (the contract in the README)")
    static let record = Flag("--record", value: "FILE.btsnoop", help: "write every HCI packet both ways to a btsnoop file (Wireshark opens it)")
    static let duration = Flag("--duration", value: "S", help: "stop by itself after S seconds")
    static let region = Flag("--region", value: "UUID[:MAJOR[:MINOR]]", help: "the region to hunt (repeatable; replaces the file's regions)")
    // Voice and sound.
    static let device = Flag("--device", value: "ALSA", help: "ALSA device (default auto: the first USB card, else default; plughw:CARD=Device,DEV=0, sysdefault:CARD=vc4hdmi0, file:FILE=x.wav,FORMAT=wav, null)")
    static let volume = Flag("--volume", value: "DB", help: "volume in dB (-60 to 12)")
    static let language = Flag("--lang", value: "LANG", help: "line pack: en-pirate or ja")
    static let voiceDirectory = Flag("--voice-dir", value: "DIR", help: "where the voice, line packs and sounds are")
    static let cacheDirectory = Flag("--cache-dir", value: "DIR", help: "cache of rendered lines (\"\" for none)")
    // The treasure's identity (treasure, demo's box).
    static let uuid = Flag("--uuid", value: "UUID", help: "the treasure's proximity UUID")
    static let major = Flag("--major", value: "N", help: "the treasure's major (0-65535)")
    static let minor = Flag("--minor", value: "N", help: "the treasure's minor (0-65535)")
    static let power = Flag("--power", value: "DBM", help: "measured power: RSSI at 1 m (-100 to 20)")
    static let interval = Flag("--interval", value: "MS", help: "advertising interval in ms (100-10240)")
    static let reward = Flag("--reward", value: "TEXT", help: "the reward in the scan response (printable, at most 27 bytes)")
    // The hunter.
    static let hunterID = Flag("--hunter-id", value: "N", help: "this hunter's number, announced to the box after a find")
    static let rewardSVG = Flag("--reward-svg", value: "FILE", help: "write the reward's QR code as an SVG")
    static let quiet = Flag("--quiet", help: "range and print, say nothing")
    static let virtualTime = Flag("--virtual-time", help: "run on virtual time, as fast as it computes (the simulator only; tests and benchmarks)")
    // Others.
    static let active = Flag("--active", help: "active scanning: names and treasure rewards from scan responses")
    static let noKiosk = Flag("--no-kiosk", help: "log lines instead of the full-screen kiosk on a terminal")
    static let hunt = Flag("--hunt", help: "the whole hunt on the capture's clock: what the hunter would have said")
    static let out = Flag("--out", value: "FILE.wav", help: "write what would be heard to a WAV instead of playing it")
    static let line = Flag("--line", value: "EVENT", help: "a line of a hunt event (startup, region-entered, warmer, ...)")
    static let sound = Flag("--sound", help: "then the arrr")
    static let markdown = Flag("--markdown", help: "the commands as the README's table")
    static let man = Flag("--man", help: "the manual page pirate-hunter(1), in roff")
    static let silent = Flag("--silent", help: "play no test line")

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

/// What the user gave a command, checked against its table: known flags, each with its
/// value, operands counted.
struct ParsedArguments {
    let command: CommandSpec
    private(set) var given: [(flag: Flag, spelled: String, value: String?)] = []
    private(set) var operands: [String] = []

    enum Outcome {
        case run(ParsedArguments)
        case help
    }

    static func parse(_ arguments: [String], for command: CommandSpec) throws(CLIError) -> Outcome {
        var parsed = ParsedArguments(command: command)
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
            var value: String?
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
            parsed.given.append((flag, spelled, value))
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
        return .run(parsed)
    }

    func has(_ flag: Flag) -> Bool { given.contains { $0.flag == flag } }
    /// The last value given (a later flag wins).
    func value(_ flag: Flag) -> String? { given.last { $0.flag == flag }?.value }
    var operand: String? { operands.first }

    /// The configuration flags among those given, validated as the configuration's own
    /// (a bad treasure id is a configuration error naming the field).
    func configurationFlags() throws(CLIError) -> ConfigurationFlags {
        var flags = ConfigurationFlags()
        for (_, spelled, value) in given {
            var cursor = ArgumentCursor(value.map { [$0] } ?? [])
            // The configuration knows every spelling; the others (--duration, ...) are the command's.
            _ = try flags.consume(spelled, from: &cursor)
        }
        flags.rewardSVG = value(Flags.rewardSVG)
        return flags
    }

    /// `--virtual-time`: only a world made in this process can run faster than real time.
    func clock(simulated: Bool) throws(CLIError) -> LoopClock {
        guard has(Flags.virtualTime) else { return .monotonic }
        guard simulated else { throw CLIError(.usage, "--virtual-time needs --hci simulator (a real radio runs in real time)") }
        return .virtual(start: 0)
    }

    /// `--duration S`: a positive number of seconds.
    func duration() throws(CLIError) -> Double? {
        guard let text = value(Flags.duration) else { return nil }
        guard let seconds = Double(text), seconds > 0, seconds.isFinite else {
            throw CLIError(.usage, "--duration: '\(CLIError.printable(text))' is not a positive number of seconds")
        }
        return seconds
    }
}

extension String {
    fileprivate var trimmingBrackets: String { filter { $0 != "[" && $0 != "]" } }
}
