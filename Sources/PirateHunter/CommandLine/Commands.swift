import Game
/// The version, from one place (the Debian package and `--version` read it here).
enum Version {
    static let current = "0.3.0"
}

/// Every command of `pirate-hunter`, in the order `help` and the README list them.
enum Commands {
    static let all: [CommandSpec] = [hunt, treasure, scan, check, pair, demo, rehearse, replay, say, help]

    static let hunt = CommandSpec(
        name: "hunt", operands: "",
        summary: "the appliance: ranges the treasure's iBeacons, speaks the hunt, reads out the reward after the find (settings: /etc/pirate-hunter/hunter.json, docs/configuration.md)",
        flags: Flags.controller + [Flags.region] + Flags.voice + [Flags.out, Flags.hunterID, Flags.rewardSVG, Flags.quiet, Flags.noDetector, Flags.waitForFix, Flags.noWeb, Flags.webPort, Flags.virtualTime],
        run: HuntCommand.run)

    static let treasure = CommandSpec(
        name: "treasure", operands: "",
        summary: "the treasure box: advertises the treasure as an iBeacon with its reward in the scan response, greets the hunters who find it (a kiosk on a terminal; settings: /etc/pirate-hunter/treasure.json)",
        flags: Flags.controller + Flags.treasure + [Flags.noKiosk, Flags.noWeb, Flags.webPort],
        run: TreasureCommand.run)

    static let scan = CommandSpec(
        name: "scan", operands: "",
        summary: "every beacon in view, live: kind, ids, RSSI (the last packet's and the filtered level: the power to calibrate at 1 m), distance ± sigma, proximity, age, name (with the configuration's ranging settings, and the tags it calibrated ranged from their measured power, as the hunt ranges them): the tool to place the treasure",
        flags: Flags.controller + [Flags.active, Flags.virtualTime],
        run: ScanCommand.run)

    static let check = CommandSpec(
        name: "check", operands: "",
        summary: "is everything ready? Bluetooth (kernel, adapters, rfkill, LE and extended commands, capabilities, bluetoothd), audio (cards, the device auto picks, mixer level and mute, a test line), voice, configuration, the service: a checklist with a fix for every failure; exit 0 or the code of the first failure",
        flags: [Flags.config, Flags.json, Flags.device, Flags.voiceDirectory, Flags.language, Flags.silent, Flags.newGame],
        run: CheckCommand.run)

    static let pair = CommandSpec(
        name: "pair", operands: "CODE",
        summary: "pairs this Pi with the game: writes the game key CODE (from check --new-game, the same on every Pi of one game) into the settings file's game.key, the rest of the file kept (the default file is made when missing; a --config FILE that is not there is exit 66); without a key nothing from the air is believed (docs/security.md)",
        flags: [Flags.config],
        run: PairCommand.run)

    static let demo = CommandSpec(
        name: "demo", operands: "",
        summary: "a simulated trail of three chests through the real pipeline (the first with its reward and the box's greeting, one reached out of order, a hint and a compass spin, hunter 2 first at one, the finale), heard through the default ALSA device or written to demo.wav; about 135 s",
        flags: [Flags.config, Flags.json, Flags.record, Flags.duration] + Flags.voice + [Flags.reward, Flags.hunterID, Flags.rewardSVG, Flags.quiet, Flags.noDetector, Flags.virtualTime],
        run: HuntCommand.demo)

    static let rehearse = CommandSpec(
        name: "rehearse", operands: "",
        summary: "the parent's own trail heard before the party: a simulated child walks to each step's chest in turn (chests 15 m apart), through the real pipeline, on the speaker or into --out FILE.wav (fast, on virtual time)",
        flags: [Flags.config, Flags.json, Flags.out, Flags.duration] + Flags.voice + [Flags.rewardSVG, Flags.noDetector, Flags.virtualTime],
        run: RehearseCommand.run)

    static let replay = CommandSpec(
        name: "replay", operands: "FILE",
        summary: "a btsnoop capture (Android HCI snoop, btmon -w, --record) decoded: every beacon sighting, with --region what the ranging engine makes of it, with --hunt the whole hunt; on the capture's clock",
        flags: [Flags.json, Flags.region, Flags.hunt, Flags.config, Flags.out, Flags.noDetector, Flags.language, Flags.voiceDirectory, Flags.cacheDirectory],
        run: ReplayCommand.run)

    static let say = CommandSpec(
        name: "say", operands: "[TEXT]",
        summary: "the pirate voice, for a speaker test: TEXT, or a line of a hunt event",
        flags: [Flags.line, Flags.sound, Flags.config, Flags.device, Flags.volume, Flags.out, Flags.voiceDirectory, Flags.language],
        run: SayCommand.run)

    static let help = CommandSpec(
        name: "help", operands: "",
        summary: "every command and what it does",
        flags: [Flags.markdown, Flags.jsonLines, Flags.man],
        run: { arguments throws(CLIError) in
            let text = arguments.has(Flags.man) ? Commands.manPage : arguments.has(Flags.markdown) ? Commands.markdownTable
                : arguments.has(Flags.jsonLines) ? OutputEvent.contractMarkdown : Commands.overview
            print(text, terminator: "")
            return .ok
        })

    /// `pirate-hunter help`.
    static var overview: String {
        var text = "usage: pirate-hunter COMMAND [OPTIONS]     (pirate-hunter COMMAND --help: its options)\n\n"
        let width = (all.map { ($0.name + " " + $0.operands).count }.max() ?? 0) + 2
        for command in all {
            let left = command.operands.isEmpty ? command.name : command.name + " " + command.operands
            text += "  " + left + String(repeating: " ", count: width - left.count) + command.summary + "\n"
        }
        text += "\n  --version" + String(repeating: " ", count: max(1, width - 9)) + "the version (\(Version.current))\n"
        text += "\nExit codes (sysexits): 64 usage, 65 bad data, 66 no input, 69 unavailable, 73 cannot create, 74 I/O error,\n"
        text += "77 no permission, 78 configuration.\n"
        return text
    }

    /// The README's command table (a test keeps the two the same).
    static var markdownTable: String {
        var text = "| command | what it does |\n|---|---|\n"
        for command in all where command.name != "help" {
            let name = "pirate-hunter " + command.name + (command.operands.isEmpty ? "" : " " + command.operands)
            let options = command.flags.map { "`\($0.synopsis)`" }.joined(separator: " ")
            text += "| `\(name)` | \(command.summary). \(options) |\n"
        }
        text += "| `pirate-hunter --version`, `pirate-hunter COMMAND --help` | the version; a command's options |\n"
        return text
    }

    /// pirate-hunter(1) in roff, from the same table as `--help` (the Debian package ships it).
    static var manPage: String {
        var text = """
            .TH PIRATE-HUNTER 1 "" "pirate-hunter \(Version.current)" "User Commands"
            .SH NAME
            pirate-hunter \\- a treasure hunt on iBeacons, told by a pirate voice
            .SH SYNOPSIS
            .B pirate-hunter
            .I COMMAND
            .RI [ OPTIONS ]
            .br
            .B pirate-hunter
            .I COMMAND
            .B \\-\\-help
            .SH DESCRIPTION
            A headless hunter ranges the treasure's iBeacons over the kernel's raw Bluetooth HCI
            channel and speaks the hunt through eSpeak NG and ALSA; a treasure box advertises as
            an iBeacon with its reward. Run
            .B pirate-hunter check
            first: it says what is missing and how to fix it.
            .SH COMMANDS

            """
        for command in all {
            let operands = command.operands.isEmpty ? "" : " " + roff(command.operands)
            text += ".TP\n.B \(roff(command.name))\(operands)\n\(roff(command.summary)).\n"
            guard !command.flags.isEmpty else { continue }
            text += ".RS\n"
            for flag in command.flags {
                let names = flag.names.map { "\\fB\(roff($0))\\fR" }.joined(separator: ", ")
                let value = flag.value.map { " \\fI\(roff($0))\\fR" } ?? ""
                text += ".TP\n\(names)\(value)\n\(roff(flag.help))\n"
            }
            text += ".RE\n"
        }
        text += """
            .SH EXIT STATUS
            0 success; sysexits(3) codes otherwise: 64 usage, 65 bad data, 66 no input, 69 unavailable,
            73 cannot create, 74 I/O error, 77 no permission, 78 configuration.
            .B check
            exits with the code of its first failure.
            .SH FILES
            .TP
            .I /etc/pirate-hunter/hunter.json
            the hunter's settings (\\fBpirate-hunter.service\\fR)
            .TP
            .I /etc/pirate-hunter/treasure.json
            the treasure box's settings (\\fBpirate-treasure.service\\fR)
            .TP
            .I /usr/share/pirate-hunter/voices
            the pirate voice, line packs and sounds
            .TP
            .I /var/cache/pirate-hunter
            rendered lines
            .SH SEE ALSO
            .BR espeak-ng (1),
            .BR aplay (1),
            .BR alsamixer (1),
            .BR systemctl (1);
            /usr/share/doc/pirate-hunter/configuration.md and raspberry-pi.md

            """
        return text
    }

    /// Text safe in a roff line: backslashes escaped, hyphens as minus signs where they start
    /// an option, a leading dot or quote defused.
    static func roff(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            default: out.append(character)
            }
        }
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }

    /// Runs the command `arguments` name; `--help` on any command is its usage (exit 0).
    static func run(_ arguments: [String]) throws(CLIError) -> ExitCode {
        guard let name = arguments.first else {
            throw CLIError(.usage, "no command given (try 'pirate-hunter help')")
        }
        if name == Flags.version.name || name == "version" {
            print("pirate-hunter \(Version.current)")
            return .ok
        }
        if Flags.help.names.contains(name) { return try help.run(ParsedArguments.empty(help)) }
        guard let command = all.first(where: { $0.name == name }) else {
            throw CLIError(.usage, "unknown command '\(CLIError.printable(name))' (try 'pirate-hunter help')")
        }
        do {
            switch try ParsedArguments.parse(Array(arguments.dropFirst()), for: command) {
            case .help:
                print(command.help, terminator: "")
                return .ok
            case let .run(parsed):
                return try command.run(parsed)
            }
        } catch {
            // One prefix: "pirate-hunter: COMMAND: what is wrong".
            var prefixed = CLIError(error.code, "\(command.name): \(error.message)")
            prefixed.further = error.further.map { "\(command.name): \($0)" }
            throw prefixed
        }
    }
}

extension ParsedArguments {
    static func empty(_ command: CommandSpec) throws(CLIError) -> ParsedArguments {
        guard case let .run(parsed) = try parse([], for: command) else { throw CLIError(.software, "help") }
        return parsed
    }
}
