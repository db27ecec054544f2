import Game
import Audio
import FoundationEssentials

/// `pirate-hunter check`: what was found (the facts, probed by `CheckProbe`) and what it
/// means (this file, pure: facts in, checklist out, unit-tested from made-up facts).
struct CheckFacts: Sendable {
    struct Adapter: Sendable, Equatable {
        var name: String
        var isUp: Bool
        /// LMP features: LE Supported (Controller); nil when not read.
        var lowEnergy: Bool?
        /// From Read Local Supported Commands; nil when not read (no CAP_NET_RAW, adapter down).
        var extendedAdvertising: Bool?
        var extendedScanning: Bool?
        var softBlocked = false
        var hardBlocked = false
    }

    struct Bluetooth: Sendable {
        enum Kernel: Sendable, Equatable {
            case supported
            case missing
            case denied(String)
        }
        var kernel: Kernel = .supported
        var adapters: [Adapter] = []
        var netRaw = false
        var netAdmin = false
        /// The installed unit grants both (AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN).
        var unitGrantsCapabilities = false
        var bluetoothdRunning = false
        /// The configured transport when it is not the kernel's (serial, simulator).
        var otherTransport: String?
    }

    struct Audio: Sendable {
        var cards: [SoundCard] = []
        /// `audio.device` as configured.
        var configured = SoundCards.auto
        var choice = DeviceChoice(device: "default", card: nil, reason: "")
        /// The card ALSA's `default` plays on, when it opens.
        var defaultCard: Int?
        /// The chosen card's playback controls, or why they could not be read.
        var mixer: Result<[MixerControl], AudioError>?
        /// nil: not played (`--silent`); else the error, or nil when it played.
        var played: AudioError??
    }

    struct Voice: Sendable {
        var voicesDirectory = ""
        /// nil: eSpeak NG started; else why not.
        var engine: String?
        var engineVersion: String?
        var language = "en-family"
        /// nil: the line pack loaded; else why not.
        var linePack: String?
        /// The voice file the pack names, and whether it is there (nil: an eSpeak voice by name).
        var voiceFile: (path: String, present: Bool)?
        var cacheDirectory: String?
        /// nil: writable; else why not.
        var cacheProblem: String?
    }

    struct Configuration: Sendable {
        /// The file read (nil: none, defaults).
        var file: String?
        var path = "/etc/pirate-hunter/hunter.json"
        /// Why the file cannot be hunted: the loader's one error, or every problem
        /// `ConfigurationValidator` finds in what it names; empty when it can.
        var problems: [CLIError] = []
        /// The game key's fingerprint (`game.key`); nil: unpaired.
        var game: String?
        /// Files the configuration names (clue recordings, the capture) where the service
        /// cannot reach them: under /home, /root or /run/user, which its unit hides
        /// (ProtectHome=yes). `check`, run by the parent, could read them and said "valid";
        /// the service could not, and waited on a mistake `check` denied.
        var hiddenFromService: [String] = []
        /// The box's file (`treasure.json`) beside the hunter's, checked too when no
        /// `--config` was given: on the box's Pi `check` checked only `hunter.json`, said
        /// "ready", and the box stayed down with its own file's mistake (exit 78).
        var box: BoxFile?
        struct BoxFile: Sendable {
            var path: String
            var problems: [CLIError] = []
            var game: String?
        }
        /// The loader's one-line error (tests and older callers).
        var error: String? {
            get { problems.first?.message }
            set { problems = newValue.map { [CLIError(.config, $0)] } ?? [] }
        }
    }

    struct Unit: Sendable, Equatable {
        var name: String
        /// Where the unit file is (nil: not installed).
        var path: String?
        var enabled = false
        /// Running processes of this unit's command, with their user.
        var runningAs: [String] = []
        /// `User=` or "a dynamic user" (DynamicUser=yes).
        var user: String?
    }

    var bluetooth = Bluetooth()
    var audio = Audio()
    var voice = Voice()
    var configuration = Configuration()
    /// The configured button (nil: none configured).
    var button: Button?
    var units: [Unit] = []
    var page = Page()

    /// The parent's page: its address, and the setup code of each running appliance (read
    /// from its runtime directory; nil: not running, or not readable by this user).
    struct Page: Sendable, Equatable {
        var enabled = true
        var address = "http://raspberrypi.local:8080/"
        var hunterCode: String?
        var boxCode: String?
    }

    struct Button: Sendable, Equatable {
        /// The chip's device path and the line.
        var chip: String
        var line: UInt32
        /// The chip's label and line count, and who holds the line; or why not read.
        var status: Result<GPIOLineStatus, GPIOProblem>
    }

    struct GPIOLineStatus: Sendable, Equatable {
        var label: String
        var lines: UInt32
        /// nil: free.
        var consumer: String?
    }

    struct GPIOProblem: Error, Sendable, Equatable {
        var missingChip: Bool
        var message: String
    }
}

/// One line of the checklist. A failure always carries its fix and its exit code.
struct CheckLine: Sendable, Equatable {
    enum Status: String, Sendable {
        case ok, warn, fail, skip
    }
    enum Section: String, Sendable, CaseIterable {
        case bluetooth, audio, voice, configuration, service
    }
    var section: Section
    var name: String
    var status: Status
    var detail: String
    var fix: String?
    /// The sysexits class of a failure (nil otherwise).
    var code: ExitCode?

    static func ok(_ section: Section, _ name: String, _ detail: String) -> CheckLine {
        CheckLine(section: section, name: name, status: .ok, detail: detail)
    }
    static func skip(_ section: Section, _ name: String, _ detail: String) -> CheckLine {
        CheckLine(section: section, name: name, status: .skip, detail: detail)
    }
    static func warn(_ section: Section, _ name: String, _ detail: String, fix: String) -> CheckLine {
        CheckLine(section: section, name: name, status: .warn, detail: detail, fix: fix)
    }
    static func fail(_ section: Section, _ name: String, _ detail: String, fix: String, code: ExitCode) -> CheckLine {
        CheckLine(section: section, name: name, status: .fail, detail: detail, fix: fix, code: code)
    }
}

struct Checklist: Sendable {
    var lines: [CheckLine]

    /// 0, or the code of the first failure (sections in order: bluetooth, audio, voice,
    /// configuration, service).
    var exitCode: ExitCode { lines.first { $0.status == .fail }?.code ?? .ok }

    init(lines: [CheckLine]) { self.lines = lines }

    init(_ facts: CheckFacts) {
        lines = Self.bluetooth(facts.bluetooth, units: facts.units) + Self.audio(facts.audio)
            + Self.voice(facts.voice) + Self.configuration(facts.configuration) + Self.button(facts.button)
            + Self.service(facts.units) + Self.page(facts.page)
    }

    // MARK: Bluetooth

    static let setcapFix =
        "run the service (its unit grants AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN), or for a shell: sudo setcap cap_net_raw,cap_net_admin+ep $(command -v pirate-hunter)"

    static func bluetooth(_ facts: CheckFacts.Bluetooth, units: [CheckFacts.Unit]) -> [CheckLine] {
        if let other = facts.otherTransport {
            return [.skip(.bluetooth, "kernel", "transport \(other): the kernel's adapters are not used")]
        }
        var lines: [CheckLine] = []
        switch facts.kernel {
        case .missing:
            return [.fail(.bluetooth, "kernel", "this kernel has no Bluetooth sockets (AF_BLUETOOTH)",
                fix: "Pi OS has them; elsewhere: sudo modprobe bluetooth (and btusb for a USB dongle)", code: .unavailable)]
        case .denied(let why):
            return [.fail(.bluetooth, "kernel", "Bluetooth sockets refused: \(why)", fix: setcapFix, code: .noPermission)]
        case .supported:
            lines.append(.ok(.bluetooth, "kernel", "Bluetooth sockets (AF_BLUETOOTH)"))
        }
        if facts.adapters.isEmpty {
            lines.append(.fail(.bluetooth, "adapter", "no Bluetooth adapter",
                fix: "a Pi 3, 4 or 5 has one built in: remove dtoverlay=disable-bt from /boot/firmware/config.txt and reboot (dmesg | grep -i bluetooth tells); else plug in a Bluetooth 4.0+ USB dongle",
                code: .unavailable))
        }
        for adapter in facts.adapters {
            let name = adapter.name
            if adapter.hardBlocked {
                lines.append(.fail(.bluetooth, name, "blocked by a hardware switch (rfkill hard)",
                    fix: "the switch or the firmware blocks it: check /boot/firmware/config.txt for dtoverlay=disable-bt", code: .unavailable))
                continue
            }
            if adapter.softBlocked {
                lines.append(.fail(.bluetooth, name, "blocked by rfkill", fix: "sudo rfkill unblock bluetooth", code: .unavailable))
                continue
            }
            if adapter.isUp {
                lines.append(.ok(.bluetooth, name, "up"))
            } else if facts.netAdmin || facts.unitGrantsCapabilities {
                lines.append(.ok(.bluetooth, name, "down: the hunter brings it up (CAP_NET_ADMIN)"))
            } else {
                lines.append(.fail(.bluetooth, name, "down, and nothing here may bring it up (no CAP_NET_ADMIN)",
                    fix: "sudo btmgmt --index \(name.dropFirst(3)) power on, or \(setcapFix)", code: .noPermission))
            }
            switch adapter.lowEnergy {
            case false?:
                lines.append(.fail(.bluetooth, "\(name) LE", "no Bluetooth Low Energy: iBeacons cannot be heard",
                    fix: "use a Bluetooth 4.0 (or later) adapter", code: .unavailable))
            case true?:
                lines.append(.ok(.bluetooth, "\(name) LE", "Bluetooth Low Energy"))
            case nil:
                lines.append(.skip(.bluetooth, "\(name) LE", "features not read (adapter down)"))
            }
            if let advertising = adapter.extendedAdvertising, let scanning = adapter.extendedScanning {
                lines.append(.ok(.bluetooth, "\(name) commands",
                    "extended scanning \(scanning ? "yes" : "no"), extended advertising \(advertising ? "yes" : "no"): "
                    + (scanning && advertising ? "extended commands used" : "legacy LE commands used")))
            } else {
                lines.append(.skip(.bluetooth, "\(name) commands", "supported commands not read (needs CAP_NET_RAW and the adapter up)"))
            }
        }
        if facts.netRaw && facts.netAdmin {
            lines.append(.ok(.bluetooth, "capabilities", "CAP_NET_RAW and CAP_NET_ADMIN"))
        } else if facts.unitGrantsCapabilities {
            lines.append(.warn(.bluetooth, "capabilities",
                "this shell lacks \(missingCapabilities(facts)); the service gets them from its unit",
                fix: "scan from a shell with sudo, or sudo setcap cap_net_raw,cap_net_admin+ep $(command -v pirate-hunter)"))
        } else {
            lines.append(.fail(.bluetooth, "capabilities", "no \(missingCapabilities(facts)): LE reports are dropped without CAP_NET_RAW",
                fix: setcapFix, code: .noPermission))
        }
        lines.append(.ok(.bluetooth, "bluetoothd", facts.bluetoothdRunning
            ? "running: the adapter is shared through the kernel's raw HCI channel (no reset, no event mask changes)"
            : "not running: the hunter has the adapter to itself"))
        return lines
    }

    static func missingCapabilities(_ facts: CheckFacts.Bluetooth) -> String {
        [facts.netRaw ? nil : "CAP_NET_RAW", facts.netAdmin ? nil : "CAP_NET_ADMIN"].compactMap { $0 }.joined(separator: " and ")
    }

    // MARK: Audio

    /// The card a device name plays on: `CARD=id` or `CARD=N`, `hw:N`/`plughw:N,..`, `default`
    /// through what ALSA said it opens; nil when it names none (`null`, `file:`).
    static func card(of device: String, cards: [SoundCard], defaultCard: Int?) -> SoundCard? {
        if device == "default" || device == "sysdefault" {
            return defaultCard.flatMap { index in cards.first { $0.index == index } }
        }
        if let marker = device.firstRange(of: "CARD=") {
            let value = device[marker.upperBound...].prefix { $0 != "," }
            return cards.first { $0.id == value || String($0.index) == value }
        }
        for prefix in ["plughw:", "hw:", "sysdefault:", "hdmi:", "default:", "front:", "iec958:"] where device.hasPrefix(prefix) {
            let value = device.dropFirst(prefix.count).prefix { $0 != "," }
            return cards.first { $0.id == value || String($0.index) == value }
        }
        return nil
    }

    static func audio(_ facts: CheckFacts.Audio) -> [CheckLine] {
        var lines: [CheckLine] = []
        if facts.cards.isEmpty {
            lines.append(.fail(.audio, "cards", "no sound card",
                fix: "plug in a USB speaker (aplay -l lists it); the Pi's jack and HDMI need dtparam=audio=on in /boot/firmware/config.txt",
                code: .unavailable))
        } else {
            lines.append(.ok(.audio, "cards", facts.cards.map { "\($0.label) \($0.kind.rawValue)" }.joined(separator: "; ")))
        }
        let defaultCard = facts.defaultCard.flatMap { index in facts.cards.first { $0.index == index } }
        if let defaultCard {
            lines.append(.ok(.audio, "default", "ALSA's default plays on \(defaultCard.label)"))
        } else if !facts.cards.isEmpty {
            lines.append(.skip(.audio, "default", "ALSA's default did not open (busy, or no card behind it)"))
        }

        let device = facts.choice.device
        let chosen = facts.choice.card ?? card(of: device, cards: facts.cards, defaultCard: facts.defaultCard)
        let speaker = facts.configured == device ? "'\(device)'" : "\(facts.configured) -> '\(device)' (\(facts.choice.reason))"
        lines.append(.ok(.audio, "device", speaker + (chosen.map { " on \($0.label)" } ?? "")))

        let usb = facts.cards.sorted { $0.index < $1.index }.first(where: \.isUSB)
        if let chosen {
            if chosen.kind == .hdmi, device.hasPrefix("hw:") || device.hasPrefix("plughw:") {
                lines.append(.fail(.audio, "hdmi", "'\(device)' cannot play on HDMI: it takes only IEC958 samples",
                    fix: "set \"audio\": {\"device\": \"\(chosen.playbackName)\"} in \(HunterConfiguration.defaultPath) (a display must be attached)",
                    code: .unavailable))
            }
            if let usb, chosen.kind == .jack || chosen.kind == .hdmi {
                let what = chosen.kind == .jack ? "the headphone jack" : "HDMI"
                lines.append(.warn(.audio, "speaker",
                    "playing on \(what) (\(chosen.label)) while the USB card \(usb.label) is plugged in",
                    fix: "set \"audio\": {\"device\": \"auto\"} (or \"\(usb.playbackName)\") in \(HunterConfiguration.defaultPath), then sudo systemctl restart pirate-hunter"))
            }
            lines += mixer(facts.mixer, card: chosen)
        } else if facts.cards.isEmpty == false {
            lines.append(.skip(.audio, "mixer", "no card known behind '\(device)'"))
        }

        switch facts.played {
        case nil:
            lines.append(.skip(.audio, "test line", "not played (--silent)"))
        case .some(nil):
            lines.append(.ok(.audio, "test line", "played on '\(device)': did you hear it?"))
        case .some(.some(let error)):
            lines.append(.fail(.audio, "test line", error.message,
                fix: "name a device from aplay -L in \"audio\": {\"device\": ...}; if the service holds it: sudo systemctl stop pirate-hunter, check, start",
                code: .unavailable))
        }
        return lines
    }

    /// Below this a speaker on a Pi is hard to hear in a garden.
    static let quietPercent = 30
    /// The controls PCM playback goes through (USB speakers: PCM or Speaker; the Pi's jack
    /// and HDMI: PCM; codecs: Master, Headphone...). When a card has none of them, all count.
    static let playbackPath: Set<String> = ["Master", "PCM", "Speaker", "Headphone", "Headphones", "Front", "Digital", "Playback"]

    static func mixer(_ result: Result<[MixerControl], AudioError>?, card: SoundCard) -> [CheckLine] {
        guard let result else { return [] }
        let controls: [MixerControl]
        switch result {
        case .failure(let error):
            return [.warn(.audio, "mixer", error.message, fix: "alsamixer -c \(card.index) shows the levels")]
        case .success(let found):
            controls = found
        }
        guard !controls.isEmpty else { return [.ok(.audio, "mixer", "card \(card.index) has no playback controls")] }
        var lines: [CheckLine] = []
        let describe = controls.map { control in
            "\(control.name) \(control.percent)%" + (control.decibels.map { " (\(JSONLine.format($0, decimals: 1)) dB)" } ?? "")
                + (control.muted == true ? " muted" : "")
        }.joined(separator: ", ")
        // What the speech passes through; a card's Mic or Line playback level is not.
        let path = controls.filter { playbackPath.contains($0.name) }
        let judged = path.isEmpty ? controls : path
        let muted = judged.filter { $0.muted == true }
        let quiet = judged.filter { $0.muted != true && $0.percent < quietPercent }
        let store = "; sudo alsactl store keeps it after a reboot"
        if !muted.isEmpty {
            let names = muted.map(\.name)
            lines.append(.fail(.audio, "mixer", "muted: \(describe)",
                fix: names.map { "amixer -c \(card.index) sset '\($0)' 80% unmute" }.joined(separator: "; ") + store,
                code: .unavailable))
        } else if !quiet.isEmpty {
            lines.append(.warn(.audio, "mixer", "quiet: \(describe)",
                fix: quiet.map { "amixer -c \(card.index) sset '\($0.name)' 80%" }.joined(separator: "; ") + store))
        } else {
            lines.append(.ok(.audio, "mixer", describe))
        }
        return lines
    }

    // MARK: Voice

    static func voice(_ facts: CheckFacts.Voice) -> [CheckLine] {
        var lines: [CheckLine] = []
        if let problem = facts.engine {
            lines.append(.fail(.voice, "espeak-ng", problem, fix: "sudo apt install espeak-ng-data", code: .noInput))
        } else {
            lines.append(.ok(.voice, "espeak-ng", "eSpeak NG \(facts.engineVersion ?? "") started"))
        }
        let reinstall = "reinstall the package (sudo apt install --reinstall pirate-hunter), or name the directory with --voice-dir / voice.voices_directory"
        if let problem = facts.linePack {
            lines.append(.fail(.voice, "line pack", problem, fix: reinstall, code: .noInput))
        } else {
            lines.append(.ok(.voice, "line pack", "\(facts.language) in \(facts.voicesDirectory)/lines"))
        }
        if let file = facts.voiceFile {
            lines.append(file.present
                ? .ok(.voice, "voice file", file.path)
                : .fail(.voice, "voice file", "\(file.path): no such file", fix: reinstall, code: .noInput))
        }
        if let directory = facts.cacheDirectory {
            if let problem = facts.cacheProblem {
                lines.append(.warn(.voice, "cache", problem,
                    fix: "lines are rendered each time instead: the service's CacheDirectory= makes /var/cache/pirate-hunter; else set voice.cache_directory to a directory you own"))
            } else {
                lines.append(.ok(.voice, "cache", "\(directory) writable"))
            }
        } else {
            lines.append(.skip(.voice, "cache", "no cache directory (lines are rendered each time)"))
        }
        return lines
    }

    // MARK: Configuration

    static func configuration(_ facts: CheckFacts.Configuration) -> [CheckLine] {
        if !facts.problems.isEmpty {
            // The lines `hunt` would refuse to start with, one each, with its exit code.
            return facts.problems.map { problem in
                .fail(.configuration, "file", problem.message,
                      fix: "fix what the line names (docs/configuration.md lists every key), then: pirate-hunter check", code: problem.code)
            }
        }
        let file: CheckLine = facts.file.map { .ok(.configuration, "file", "\($0) is valid") }
            ?? .ok(.configuration, "file", "no \(facts.path): the defaults")
        return [file, pairing(facts)] + hidden(facts.hiddenFromService) + boxFile(facts.box)
    }

    static func hidden(_ paths: [String]) -> [CheckLine] {
        guard !paths.isEmpty else { return [] }
        return [.warn(.configuration, "files", "the service cannot read \(paths.joined(separator: ", ")): its unit hides /home, /root and /run/user",
                      fix: "copy them into /etc/pirate-hunter/ (sudo cp FILE /etc/pirate-hunter/) and name them there")]
    }

    /// The box's file: its mistakes as `treasure` would refuse it, or valid and paired or not.
    static func boxFile(_ box: CheckFacts.Configuration.BoxFile?) -> [CheckLine] {
        guard let box else { return [] }
        if !box.problems.isEmpty {
            return box.problems.map { problem in
                .fail(.configuration, "box file", problem.message,
                      fix: "fix what the line names (docs/configuration.md lists every key), then: pirate-hunter check; the box starts again with sudo systemctl restart pirate-treasure", code: problem.code)
            }
        }
        return [.ok(.configuration, "box file", "\(box.path) is valid (the treasure box's; " + (box.game.map { "paired: game \($0))" } ?? "not paired)"))]
    }

    /// Whether this Pi shares the game's key (issue #25): without it nothing from the air is
    /// believed beyond a plain beacon's presence.
    static func pairing(_ facts: CheckFacts.Configuration) -> CheckLine {
        if let game = facts.game { return .ok(.configuration, "game key", "paired: game \(game) (every Pi of the game must show the same)") }
        // The box's Pi: its own file is paired, the hunter's (unused there) need not be.
        if let game = facts.box?.game, facts.box?.problems.isEmpty == true {
            return .ok(.configuration, "game key", "the box's file is paired: game \(game) (every Pi of the game must show the same); \(facts.file ?? facts.path) is not")
        }
        return .warn(.configuration, "game key",
                     "not paired: box rewards, other hunters and finders are ignored (no game.key in \(facts.file ?? facts.path))",
                     fix: "on one Pi: pirate-hunter check --new-game (prints a code); on every Pi of the game: sudo pirate-hunter pair CODE [--config FILE], then restart it")
    }

    /// The button is a warning at worst: without it the hunt goes on.
    static func button(_ facts: CheckFacts.Button?) -> [CheckLine] {
        guard let facts else { return [] }
        let name = "button"
        switch facts.status {
        case let .failure(problem) where problem.missingChip:
            return [.warn(.configuration, name, "no GPIO chip \(facts.chip): the hunt goes on without the button",
                          fix: "gpioinfo lists the chips; set button.chip to one of them (docs/configuration.md)")]
        case let .failure(problem):
            return [.warn(.configuration, name, problem.message,
                          fix: "check button.chip and button.line against gpioinfo (docs/configuration.md)")]
        case let .success(status):
            let chip = "line \(facts.line) of \(facts.chip) (\(status.label.isEmpty ? "no label" : status.label), \(status.lines) lines)"
            switch status.consumer {
            case nil:
                return [.ok(.configuration, name, chip + ": free")]
            case "pirate-hunter"?:
                return [.ok(.configuration, name, chip + ": in use by pirate-hunter (the hunter running)")]
            case let other?:
                return [.warn(.configuration, name, chip + ": in use by \(other): the hunter cannot have it",
                              fix: "free the line (gpioinfo names who holds it: a device-tree overlay, another program) or wire the button to another line")]
            }
        }
    }

    // MARK: Service

    /// Each unit; one enabled but not running is a warning (it stopped: a crash loop past
    /// its start limit, or an exit a restart does not mend), and so is a Pi where no unit is
    /// enabled or running once they are installed (nothing starts at boot). Both were "ok",
    /// and the list ended "ready" with nothing running.
    static func service(_ units: [CheckFacts.Unit]) -> [CheckLine] {
        var lines: [CheckLine] = units.map { unit in
            guard let path = unit.path else {
                return .warn(.service, unit.name, "not installed",
                    fix: "sudo apt install ./pirate-hunter_*.deb (or sudo make install)")
            }
            let user = unit.user.map { " as \($0)" } ?? ""
            var detail = "\(path), \(unit.enabled ? "enabled" : "not enabled")"
            if unit.runningAs.isEmpty {
                detail += ", not running"
            } else {
                detail += ", running as \(unit.runningAs.joined(separator: ", "))"
            }
            detail += user.isEmpty ? "" : " (unit runs\(user))"
            if unit.enabled, unit.runningAs.isEmpty {
                return .warn(.service, unit.name, detail + ": it stopped",
                    fix: "sudo systemctl status \(unit.name) and journalctl -u \(unit.name) say why; mend it, then sudo systemctl restart \(unit.name)")
            }
            return .ok(.service, unit.name, detail)
        }
        let installed = units.filter { $0.path != nil }
        if !installed.isEmpty, !installed.contains(where: { $0.enabled || !$0.runningAs.isEmpty }) {
            lines.append(.warn(.service, "at boot", "neither service is enabled: nothing starts when the Pi does",
                fix: "sudo systemctl enable --now pirate-hunter.service (the hunter) or pirate-treasure.service (the box)"))
        }
        return lines
    }

    /// The page's address and setup code: what a parent types on the phone.
    static func page(_ page: CheckFacts.Page) -> [CheckLine] {
        guard page.enabled else { return [.skip(.service, "page", "off (web.enabled false)")] }
        var lines: [CheckLine] = []
        if let code = page.hunterCode {
            lines.append(.ok(.service, "page", "\(page.address) on a phone on the same Wi-Fi; setup code \(code)"))
        } else {
            lines.append(.skip(.service, "page", "\(page.address) once the hunter runs; its setup code is made at start and printed here (run check with sudo to read it)"))
        }
        if let code = page.boxCode { lines.append(.ok(.service, "box page", "the treasure box's page, setup code \(code)")) }
        return lines
    }

    // MARK: Output

    var text: String {
        var out = ""
        for section in CheckLine.Section.allCases {
            let rows = lines.filter { $0.section == section }
            guard !rows.isEmpty else { continue }
            out += section.rawValue + "\n"
            for line in rows {
                let mark = switch line.status {
                case .ok: "[ ok ]"
                case .warn: "[warn]"
                case .fail: "[FAIL]"
                case .skip: "[ -- ]"
                }
                out += "  \(mark) \(line.name): \(line.detail)\n"
                if let fix = line.fix { out += "         fix: \(fix)\n" }
            }
        }
        let failed = lines.filter { $0.status == .fail }.count
        let warned = lines.filter { $0.status == .warn }.count
        out += failed == 0
            ? "ready" + (warned == 0 ? "" : " (\(warned) warning\(warned == 1 ? "" : "s"))") + "\n"
            : "\(failed) to fix (exit \(exitCode.rawValue))\n"
        return out
    }

    /// One JSON object per line, then a summary object.
    var jsonLines: [String] {
        let events = lines.map { line in
            OutputEvent.check(
                section: line.section.rawValue, name: line.name, status: line.status.rawValue, detail: line.detail, fix: line.fix,
                exit: line.code.map { Int($0.rawValue) })
        } + [
            OutputEvent.checkSummary(
                ready: exitCode == .ok, failed: lines.filter { $0.status == .fail }.count, warnings: lines.filter { $0.status == .warn }.count,
                exit: Int(exitCode.rawValue))
        ]
        return events.compactMap(\.jsonLine)
    }
}
