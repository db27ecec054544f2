#if canImport(Glibc)
import Glibc
#endif
import Audio
import Bluetooth
import FoundationEssentials
import GPIO
import Radio
import Voice

/// `pirate-hunter check [--config FILE] [--device ALSA] [--voice-dir DIR] [--lang LANG]
/// [--silent] [--json]`: is everything ready? The facts are probed here; what they mean is
/// `Checklist` (pure).
enum CheckCommand {
    static func run(_ arguments: ParsedArguments) throws(CLIError) -> ExitCode {
        if arguments.has(Flags.newGame) { return try PairCommand.newGame() }
        let flags = arguments.flags
        var facts = CheckFacts()
        var configuration = HunterConfiguration()
        facts.configuration.path = flags.configPath ?? HunterConfiguration.defaultPath
        do {
            configuration = try HunterConfiguration.load(flags: flags)
            facts.configuration.file = configuration.file
            facts.configuration.game = configuration.game.key?.fingerprint
            // What `hunt` would refuse at start, every problem.
            facts.configuration.problems = ConfigurationValidator.problems(configuration)
        } catch {
            facts.configuration.problems = error.each
            // The rest is checked with the defaults and the flags.
            configuration.apply(flags)
            configuration.resolveDirectories(environment: ProcessInfo.processInfo.environment, executablePath: VoiceLocations.currentExecutablePath())
        }
        // The box's file too, when it is there and no file was named.
        if flags.configPath == nil, FileManager.default.fileExists(atPath: HunterConfiguration.treasurePath) {
            var box = CheckFacts.Configuration.BoxFile(path: HunterConfiguration.treasurePath)
            do {
                let treasure = try HunterConfiguration.load(flags: flags, defaultPath: HunterConfiguration.treasurePath)
                box.game = treasure.game.key?.fingerprint
                box.problems = ConfigurationValidator.problems(treasure)
            } catch {
                box.problems = error.each
            }
            facts.configuration.box = box
        }
        facts.units = CheckProbe.units()
        if facts.units.contains(where: { $0.name == "pirate-hunter.service" && $0.path != nil }) {
            let named = configuration.hunt.trail.compactMap { step -> String? in
                if case let .recording(path)? = step.clue { return path } else { return nil }
            } + [configuration.record].compactMap { $0 }
            facts.configuration.hiddenFromService = named.filter { path in
                ["/home/", "/root/", "/run/user/"].contains { path.hasPrefix($0) }
            }
        }
        facts.button = configuration.button.map(CheckProbe.button)
        facts.bluetooth = CheckProbe.bluetooth(transport: configuration.transport, units: facts.units)
        facts.page = CheckProbe.page(configuration.web)
        facts.voice = CheckProbe.voice(configuration)
        facts.audio = CheckProbe.audio(configuration, play: !arguments.has(Flags.silent) && facts.voice.engine == nil && facts.voice.linePack == nil)

        let checklist = Checklist(facts)
        let out = StandardOutput()
        if arguments.has(Flags.json) {
            for line in checklist.jsonLines { out.line(line) }
        } else {
            out.text(checklist.text)
        }
        // A checklist nobody could read is no answer.
        try out.finish()
        return checklist.exitCode
    }
}

/// The probes: each reads the system as it is (sysfs, /proc, ALSA, the kernel's HCI socket)
/// and never changes it (no adapter is brought up, no mixer level set).
enum CheckProbe {
    /// The page's address, and the codes the running services wrote into their runtime
    /// directories (this process's own RUNTIME_DIRECTORY first: a test's).
    static func page(_ web: HunterConfiguration.Web) -> CheckFacts.Page {
        var page = CheckFacts.Page()
        page.enabled = web.enabled
        page.address = "http://\(ParentConsole.hostname()).local:\(web.port)/"
        func code(_ directory: String) -> String? {
            guard let text = text(directory + "/web-code") else { return nil }
            let digits = text.filter(\.isNumber)
            return digits.count == 6 ? digits : nil
        }
        let own = ProcessInfo.processInfo.environment["RUNTIME_DIRECTORY"].flatMap { $0.isEmpty ? nil : $0 }
        page.hunterCode = own.flatMap(code) ?? code("/run/pirate-hunter")
        page.boxCode = code("/run/pirate-treasure")
        return page
    }

    static func text(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    static func lines(_ path: String) -> [Substring] {
        (text(path) ?? "").split(separator: "\n")
    }

    // MARK: Button

    /// The chip and the line, read without requesting it.
    static func button(_ button: HunterConfiguration.Button) -> CheckFacts.Button {
        let path = GPIOButton.devicePath(button.chip)
        let status: Result<CheckFacts.GPIOLineStatus, CheckFacts.GPIOProblem>
        do {
            let line = try GPIOButton.status(chip: button.chip, line: button.line)
            status = .success(CheckFacts.GPIOLineStatus(label: line.label, lines: line.lines, consumer: line.consumer))
        } catch {
            status = .failure(CheckFacts.GPIOProblem(missingChip: error.errno == ENOENT, message: "\(error)"))
        }
        return CheckFacts.Button(chip: path, line: button.line, status: status)
    }

    // MARK: Bluetooth

    static func bluetooth(transport: TransportSpec, units: [CheckFacts.Unit]) -> CheckFacts.Bluetooth {
        var facts = CheckFacts.Bluetooth()
        if case .kernel = transport {} else {
            facts.otherTransport = "\(transport)"
            return facts
        }
        (facts.netRaw, facts.netAdmin) = capabilities()
        facts.unitGrantsCapabilities = units.contains { unit in
            guard let path = unit.path else { return false }
            return lines(path).contains { $0.hasPrefix("AmbientCapabilities=") && $0.contains("CAP_NET_RAW") && $0.contains("CAP_NET_ADMIN") }
        }
        facts.bluetoothdRunning = processes().contains { $0.comm == "bluetoothd" }
        let infos: [KernelHCISocket.DeviceInfo]
        do {
            infos = try KernelHCISocket.adapters()
        } catch {
            switch error {
            case .unsupported: facts.kernel = .missing
            case .permission: facts.kernel = .denied("\(error)")
            default: facts.kernel = .denied("\(error)")
            }
            return facts
        }
        let blocked = rfkill()
        for info in infos {
            var adapter = CheckFacts.Adapter(name: "hci\(info.id)", isUp: info.isUp)
            adapter.lowEnergy = info.features.isEmpty ? nil : info.lowEnergy
            adapter.softBlocked = blocked[adapter.name]?.soft ?? false
            adapter.hardBlocked = blocked[adapter.name]?.hard ?? false
            if info.isUp, let support = supportedCommands(info.id) {
                adapter.extendedAdvertising = support.extendedAdvertising
                adapter.extendedScanning = support.extendedScanning
            }
            facts.adapters.append(adapter)
        }
        return facts
    }

    /// CapEff of this process: bit 12 CAP_NET_ADMIN, bit 13 CAP_NET_RAW.
    static func capabilities() -> (netRaw: Bool, netAdmin: Bool) {
        guard let line = lines("/proc/self/status").first(where: { $0.hasPrefix("CapEff:") }),
            let mask = UInt64(line.dropFirst("CapEff:".count).filter { !$0.isWhitespace }, radix: 16)
        else { return (false, false) }
        return (mask & (1 << 13) != 0, mask & (1 << 12) != 0)
    }

    /// rfkill switches of type bluetooth, by the adapter name sysfs gives them (hci0).
    static func rfkill() -> [String: (soft: Bool, hard: Bool)] {
        var result: [String: (soft: Bool, hard: Bool)] = [:]
        let root = "/sys/class/rfkill"
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] {
            let base = "\(root)/\(entry)"
            guard text(base + "/type")?.hasPrefix("bluetooth") == true, let name = text(base + "/name") else { continue }
            result[name.filter { !$0.isWhitespace }] = (text(base + "/soft")?.hasPrefix("1") == true, text(base + "/hard")?.hasPrefix("1") == true)
        }
        return result
    }

    /// Read Local Supported Commands on the adapter's raw channel (allowed without
    /// CAP_NET_RAW by the kernel's filter, harmless on a shared adapter); 1 s at most.
    static func supportedCommands(_ id: UInt16) -> SupportedCommands? {
        guard let socket = try? KernelHCISocket(adapter: id, bringUp: false) else { return nil }
        defer { socket.close() }
        guard (try? socket.send(HCICommand.readLocalSupportedCommands)) != nil else { return nil }
        let deadline = ContinuousClock.now + .seconds(1)
        while ContinuousClock.now < deadline {
            var p = pollfd(fd: socket.fileDescriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 200) >= 0 else { return nil }
            guard p.revents != 0, let packets = try? socket.receive() else { continue }
            for packet in packets where packet.type == .event {
                if case let .commandComplete(opcode, _, parameters)? = try? HCIEvent(decoding: packet.bytes),
                    opcode == .readLocalSupportedCommands
                {
                    return try? SupportedCommands(returnParameters: parameters)
                }
            }
        }
        return nil
    }

    struct Process {
        var pid: Int32
        var comm: String
        var arguments: [String]
        var uid: UInt32?
    }

    static func processes() -> [Process] {
        var result: [Process] = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry) else { continue }
            let comm = (text("/proc/\(entry)/comm") ?? "").filter { $0 != "\n" }
            let arguments = (FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") ?? Data())
                .split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            let uid = lines("/proc/\(entry)/status").first { $0.hasPrefix("Uid:") }
                .flatMap { $0.split(whereSeparator: \.isWhitespace).dropFirst().first }.flatMap { UInt32($0) }
            result.append(Process(pid: pid, comm: comm, arguments: arguments, uid: uid))
        }
        return result
    }

    static func userName(_ uid: UInt32) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
        return String(cString: name)
    }

    // MARK: Service

    static let unitDirectories = ["/etc/systemd/system", "/usr/local/lib/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"]

    static func units() -> [CheckFacts.Unit] {
        let all = processes()
        return [("pirate-hunter.service", "hunt"), ("pirate-treasure.service", "treasure")].map { name, command in
            var unit = CheckFacts.Unit(name: name)
            unit.path = unitDirectories.map { "\($0)/\(name)" }.first { FileManager.default.fileExists(atPath: $0) }
            var info = stat()
            unit.enabled = lstat("/etc/systemd/system/multi-user.target.wants/\(name)", &info) == 0
            // The unit's own binary (its ExecStart), or any pirate-hunter when not installed.
            var binary: String?
            if let path = unit.path {
                let settings = lines(path)
                binary = settings.first { $0.hasPrefix("ExecStart=") }?.dropFirst("ExecStart=".count)
                    .split(separator: " ").first.map(String.init)
                if let user = settings.first(where: { $0.hasPrefix("User=") }) {
                    unit.user = String(user.dropFirst("User=".count))
                } else if settings.contains("DynamicUser=yes") {
                    unit.user = "a dynamic user"
                }
            }
            let running = all.filter { process in
                guard let first = process.arguments.first else { return false }
                return binary.map { first == $0 } ?? first.hasSuffix("/pirate-hunter")
            }
            unit.runningAs = running.filter { $0.arguments.dropFirst().first == command }
                .map { process in process.uid.map(userName) ?? "?" }
            return unit
        }
    }

    // MARK: Voice

    static func voice(_ configuration: HunterConfiguration) -> CheckFacts.Voice {
        var facts = CheckFacts.Voice()
        facts.voicesDirectory = configuration.voice.voicesDirectory ?? VoiceLocations.resolve()
        facts.language = configuration.voice.language
        do {
            let engine = try EspeakSynthesizer.shared()
            facts.engineVersion = engine.version
        } catch {
            facts.engine = error.message
        }
        do {
            let pack = try LinePack.load(language: facts.language, voicesDirectory: facts.voicesDirectory)
            if case .file(let path) = pack.voice {
                facts.voiceFile = (path, FileManager.default.fileExists(atPath: path))
            }
        } catch {
            facts.linePack = error.message
        }
        facts.cacheDirectory = configuration.voice.cacheDirectory.flatMap { $0.isEmpty ? nil : $0 }
        if let directory = facts.cacheDirectory {
            do {
                if case .readOnly(let why) = try LineCache(directory: directory).prepare() { facts.cacheProblem = why }
            } catch {
                facts.cacheProblem = error.message
            }
        }
        return facts
    }

    // MARK: Audio

    static func audio(_ configuration: HunterConfiguration, play: Bool) -> CheckFacts.Audio {
        var facts = CheckFacts.Audio()
        facts.cards = SoundCards.list()
        facts.configured = configuration.audio.device
        facts.choice = SoundCards.choose(facts.configured, cards: facts.cards)
        if !facts.cards.isEmpty { facts.defaultCard = CardMixer.card(ofPCM: "default") }
        if let card = facts.choice.card ?? Checklist.card(of: facts.choice.device, cards: facts.cards, defaultCard: facts.defaultCard) {
            facts.mixer = Result { () throws(AudioError) in try CardMixer.controls(card: card.index) }
        }
        guard play else { return facts }
        facts.played = .some(playTestLine(configuration, device: facts.choice.device))
        return facts
    }

    /// A short line on `device`; nil when it played.
    static func playTestLine(_ configuration: HunterConfiguration, device: String) -> AudioError? {
        do {
            let engine = try EspeakSynthesizer.shared()
            let pack = try LinePack.load(language: configuration.voice.language, voicesDirectory: configuration.voice.voicesDirectory ?? VoiceLocations.resolve())
            let speech = try engine.synthesize("Ahoy! This be the speaker.", voice: pack.voice)
            var playback = configuration.playbackConfiguration()
            playback.device = device
            playback.sampleRate = engine.sampleRate
            playback.log = { _ in }
            let player = try ALSAPlayback.open(configuration: playback)
            player.play(speech, slot: .speech)
            let finished = player.waitUntilIdle(timeout: .seconds(20))
            player.shutdown()
            return finished ? nil : AudioError("'\(device)' stopped playing", code: -EIO)
        } catch let error as AudioError {
            return error
        } catch {
            return AudioError("\(error)", code: -EIO)
        }
    }
}
