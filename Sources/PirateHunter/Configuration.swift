#if canImport(Glibc)
import Glibc
#endif
import Audio
import Bluetooth
import FoundationEssentials
import Hunt
import Ranging
import Voice

/// The appliance's settings, from one JSON file (`--config FILE`, default
/// `/etc/pirate-hunter/hunter.json`) with command-line flags over it. Every field is
/// optional in the file; defaults and allowed values are in docs/configuration.md (keep the
/// two together). Precedence: flags, then the file, then the defaults.
struct HunterConfiguration: Sendable, Equatable {
    static let defaultPath = "/etc/pirate-hunter/hunter.json"
    /// The treasure box's file (`pirate-hunter treasure`).
    static let treasurePath = "/etc/pirate-hunter/treasure.json"
    /// The game's own proximity UUID ("PIRATE-HUNTER" in ASCII): the default treasure
    /// advertises it and the default region hunts it, so a box and a hunter pair out of the box.
    static let defaultUUID = UUID(uuid: (0x50, 0x49, 0x52, 0x41, 0x54, 0x45, 0x2D, 0x48,
                                         0x55, 0x4E, 0x54, 0x45, 0x52, 0x00, 0x00, 0x00))

    struct Voice: Sendable, Equatable {
        /// Line pack name (`<voices>/lines/<language>.json`).
        var language = "en-pirate"
        /// nil: `<executable>/../share/pirate-hunter/voices`, then `VoiceLocations.resolve()`.
        var voicesDirectory: String?
        /// nil: `$CACHE_DIRECTORY` (systemd), `$XDG_CACHE_HOME/pirate-hunter`,
        /// `$HOME/.cache/pirate-hunter`; "" in the file: no cache.
        var cacheDirectory: String?
        var parameters = SpeechParameters()
    }

    struct Audio: Sendable, Equatable {
        var device = "default"
        var volumeDB = 0.0
    }

    struct Hunt: Sendable, Equatable {
        var foundHold = 3.0
        var trendInterval = 6.0
        var trendQuietAfterLine = 3.0
        var pendingLifetime = 4.0
    }

    struct Treasure: Sendable, Equatable {
        var uuid = HunterConfiguration.defaultUUID
        var major: UInt16 = 1
        var minor: UInt16 = 1
        /// Measured power: RSSI at 1 m, dBm.
        var power: Int8 = -59
        var intervalMilliseconds = 100
        /// Sent in the scan response; printable, at most `maximumRewardBytes` UTF-8 bytes.
        var reward: String?

        /// 31 bytes of scan response - length, AD type and a 16-bit company id.
        static let maximumRewardBytes = 27
        static let intervalRange = 100...10_240
        /// The iBeacon the box advertises.
        var beacon: IBeacon { IBeacon(uuid: uuid, major: major, minor: minor, measuredPower: power) }
        /// The advertising interval in controller units of 0.625 ms (100 ms -> 0x00A0).
        var intervalUnits: UInt16 { UInt16(clamping: (intervalMilliseconds * 8 + 2) / 5) }
    }

    /// What a hunter does once it has found the treasure.
    struct Announce: Sendable, Equatable {
        /// This hunter's id (the major of the beacon it announces itself with).
        var hunterID: UInt16 = 1
        /// How long it announces itself to the treasure box after finding it; 0: never.
        var seconds = 60.0
        /// How long it scans actively for the treasure's reward before giving up.
        var rewardTimeout = 10.0
        static let secondsRange = 0.0...3600
    }

    var transport: TransportSpec = .kernel(adapter: nil)
    /// The treasure region(s) to hunt; the first is the one the voice hunts.
    var huntedRegions: [Region] = [Region(name: "treasure", uuid: HunterConfiguration.defaultUUID)]
    var voice = Voice()
    var audio = Audio()
    var ranging = RangingConfiguration.default
    var hunt = Hunt()
    /// Write every HCI packet to this btsnoop file.
    var record: String?
    /// JSON lines on stdout.
    var json = false
    var treasure = Treasure()
    var announce = Announce()
    /// The file the settings came from (nil: defaults only).
    var file: String?

    init() {}

    // MARK: What the pieces take

    func rangingConfiguration() -> RangingConfiguration { ranging }

    func regions() -> [Region] { huntedRegions }

    func voiceConfiguration() -> VoiceConfiguration {
        var configuration = VoiceConfiguration(
            voicesDirectory: voice.voicesDirectory ?? VoiceLocations.resolve(),
            language: voice.language,
            cacheDirectory: voice.cacheDirectory.flatMap { $0.isEmpty ? nil : $0 })
        configuration.parameters = voice.parameters
        return configuration
    }

    /// The caller still sets `sampleRate` (the synthesizer's) and its log/observer.
    func playbackConfiguration() -> PlaybackConfiguration {
        var configuration = PlaybackConfiguration(device: audio.device)
        configuration.volumeDB = audio.volumeDB
        return configuration
    }

    /// What `Hunter` takes; `quiet` leaves the voice and sound out (ranging only).
    func hunterSetup(quiet: Bool = false) -> HunterSetup {
        var setup = HunterSetup()
        setup.transport = transport
        setup.regions = huntedRegions
        setup.ranging = ranging
        setup.json = json
        setup.record = record
        if !quiet {
            setup.announce = announce
            setup.hunt = huntConfiguration()
            setup.voice = voiceConfiguration()
            setup.playback = playbackConfiguration()
        }
        return setup
    }

    /// What `TreasureBox` takes.
    func treasureSetup() -> TreasureSetup {
        var setup = TreasureSetup()
        setup.transport = transport
        setup.treasure = treasure
        setup.ranging = ranging
        setup.json = json
        setup.record = record
        return setup
    }

    /// For the first region (the one the voice hunts).
    func huntConfiguration() -> HuntDirector.Configuration {
        var configuration = HuntDirector.Configuration(region: huntedRegions.first?.name ?? "treasure")
        configuration.foundHold = hunt.foundHold
        configuration.trendInterval = hunt.trendInterval
        configuration.trendQuietAfterLine = hunt.trendQuietAfterLine
        configuration.pendingLifetime = hunt.pendingLifetime
        return configuration
    }
}

// MARK: - Transport

extension TransportSpec {
    /// The rates `H4StreamTransport.serial` can set.
    static let baudRates = [9600, 19200, 38400, 57600, 115_200, 230_400, 460_800, 921_600,
                            1_000_000, 2_000_000, 3_000_000]
    static let allowed = "auto, hciN (hci0, hci1...), serial:/dev/PATH[@BAUD], unix:/PATH, simulator"

    /// As `init?(_:)`, but also refuses an empty text and a baud rate the UART cannot take,
    /// so that both are configuration errors rather than failures at start.
    init?(validating text: String) {
        guard !text.isEmpty, let spec = TransportSpec(text) else { return nil }
        if case let .serial(_, baud) = spec, !Self.baudRates.contains(baud) { return nil }
        self = spec
    }
}

// MARK: - Command-line flags

/// The flags every command shares (and the treasure's), applied over the file.
struct ConfigurationFlags: Sendable, Equatable {
    var configPath: String?
    var transport: TransportSpec?
    /// `--region`, repeatable; any replaces the file's regions.
    var regions: [Region] = []
    var device: String?
    var language: String?
    var voicesDirectory: String?
    var cacheDirectory: String?
    var record: String?
    var json = false
    var volumeDB: Double?
    var treasureUUID: UUID?
    var treasureMajor: UInt16?
    var treasureMinor: UInt16?
    var treasurePower: Int8?
    var treasureInterval: Int?
    var treasureReward: String?
    var hunterID: UInt16?
    /// `--reward-svg FILE` (hunt, demo): not a file setting.
    var rewardSVG: String?

    static let usage = """
        --config FILE  --hci auto|hciN|serial:PATH[@BAUD]|unix:PATH|simulator  --region UUID[:MAJOR[:MINOR]]
        --device ALSA  --volume DB  --lang LANG  --voice-dir DIR  --cache-dir DIR  --record FILE.btsnoop  --json
        treasure: --uuid UUID  --major N  --minor N  --power DBM  --interval MS  --reward TEXT
        hunter: --hunter-id N
        """

    init() {}

    /// Takes `argument` (and its value from `cursor`) when it is one of these flags; false
    /// leaves it to the command.
    mutating func consume(_ argument: String, from cursor: inout ArgumentCursor) throws(CLIError) -> Bool {
        switch argument {
        case "--config": configPath = try cursor.value(for: argument)
        case "--hci", "--adapter":
            let text = try cursor.value(for: argument)
            guard let choice = TransportSpec(validating: text) else {
                throw CLIError(.usage, "\(argument): '\(text)' is not a transport; allowed: \(TransportSpec.allowed)")
            }
            transport = choice
        case "--region":
            let text = try cursor.value(for: argument)
            guard let region = RangingOutput.region(text) else {
                throw CLIError(.usage, "--region: '\(text)' is not UUID[:MAJOR[:MINOR]] (major and minor 0-65535)")
            }
            guard !regions.contains(where: { $0.name == region.name }) else {
                throw CLIError(.usage, "--region: '\(text)' is given twice")
            }
            regions.append(region)
        case "--device": device = try Self.nonEmpty(argument, cursor.value(for: argument))
        case "--lang": language = try Self.nonEmpty(argument, cursor.value(for: argument))
        case "--voice-dir": voicesDirectory = try Self.nonEmpty(argument, cursor.value(for: argument))
        case "--cache-dir": cacheDirectory = try cursor.value(for: argument)
        case "--record": record = try Self.nonEmpty(argument, cursor.value(for: argument))
        case "--json": json = true
        case "--volume":
            let text = try cursor.value(for: argument)
            guard let value = Double(text), Limits.volumeDB.contains(value) else {
                throw CLIError(.usage, "--volume: '\(text)' is not a volume; allowed: \(Limits.text(Limits.volumeDB)) dB")
            }
            volumeDB = value
        // The treasure's identity: a wrong value is a configuration error (78) naming the field.
        case "--uuid":
            let text = try cursor.value(for: argument)
            guard let uuid = UUID(uuidString: text) else {
                throw CLIError(.config, "--uuid (treasure.uuid): '\(text)' is not a UUID; allowed: 8-4-4-4-12 hex digits")
            }
            treasureUUID = uuid
        case "--major": treasureMajor = try UInt16(Self.field(argument, "treasure.major", cursor.value(for: argument), Limits.identifier))
        case "--minor": treasureMinor = try UInt16(Self.field(argument, "treasure.minor", cursor.value(for: argument), Limits.identifier))
        case "--power": treasurePower = try Int8(Self.field(argument, "treasure.power", cursor.value(for: argument), Limits.power))
        case "--interval":
            treasureInterval = try Self.field(argument, "treasure.interval_ms", cursor.value(for: argument), HunterConfiguration.Treasure.intervalRange)
        case "--reward":
            let text = try cursor.value(for: argument)
            if let problem = Limits.rewardProblem(text) {
                throw CLIError(.config, "--reward (treasure.reward): \(problem); allowed: \(Limits.rewardAllowed)")
            }
            treasureReward = text
        case "--hunter-id": hunterID = try UInt16(Self.field(argument, "announce.hunter_id", cursor.value(for: argument), Limits.identifier))
        default:
            return false
        }
        return true
    }

    private static func nonEmpty(_ flag: String, _ text: String) throws(CLIError) -> String {
        guard !text.isEmpty else { throw CLIError(.usage, "\(flag): needs a non-empty value") }
        return text
    }

    private static func field(_ flag: String, _ field: String, _ text: String, _ range: ClosedRange<Int>) throws(CLIError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw CLIError(.config, "\(flag) (\(field)): '\(text)' is out of range; allowed: \(Limits.text(range))")
        }
        return value
    }

    private static func integer(_ flag: String, _ text: String, _ range: ClosedRange<Int>) throws(CLIError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw CLIError(.usage, "\(flag): '\(text)' is out of range; allowed: \(Limits.text(range))")
        }
        return value
    }
}

extension HunterConfiguration {
    /// Flags over the file: only what was given on the command line changes.
    mutating func apply(_ flags: ConfigurationFlags) {
        if let transport = flags.transport { self.transport = transport }
        if !flags.regions.isEmpty { huntedRegions = flags.regions }
        if let device = flags.device { audio.device = device }
        if let volume = flags.volumeDB { audio.volumeDB = volume }
        if let language = flags.language { voice.language = language }
        if let directory = flags.voicesDirectory { voice.voicesDirectory = directory }
        if let directory = flags.cacheDirectory { voice.cacheDirectory = directory }
        if let record = flags.record { self.record = record }
        if flags.json { json = true }
        if let uuid = flags.treasureUUID { treasure.uuid = uuid }
        if let major = flags.treasureMajor { treasure.major = major }
        if let minor = flags.treasureMinor { treasure.minor = minor }
        if let power = flags.treasurePower { treasure.power = power }
        if let interval = flags.treasureInterval { treasure.intervalMilliseconds = interval }
        if let reward = flags.treasureReward { treasure.reward = reward }
        if let id = flags.hunterID { announce.hunterID = id }
    }

    /// The whole chain for a command: consumes the shared flags from `arguments` (returning
    /// the others, in order, for the command), reads the file, applies the flags, fills in
    /// the default directories. Errors: 64 bad flag, 66 no such file (explicit --config),
    /// 77 unreadable, 78 invalid content.
    static func load(
        arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(CLIError) -> (configuration: HunterConfiguration, remaining: [String]) {
        var cursor = ArgumentCursor(arguments)
        var flags = ConfigurationFlags()
        var remaining: [String] = []
        while let argument = cursor.next() {
            if try !flags.consume(argument, from: &cursor) { remaining.append(argument) }
        }
        return (try load(flags: flags, environment: environment), remaining)
    }

    /// Reads `flags.configPath` (or the default path, where a missing file means defaults),
    /// applies the flags, resolves the default voice and cache directories.
    static func load(
        flags: ConfigurationFlags, environment: [String: String] = ProcessInfo.processInfo.environment,
        executablePath: String? = currentExecutablePath(), defaultPath: String = HunterConfiguration.defaultPath
    ) throws(CLIError) -> HunterConfiguration {
        let path = flags.configPath ?? defaultPath
        var configuration: HunterConfiguration
        if let bytes = try ConfigurationFile.read(path, explicit: flags.configPath != nil) {
            configuration = try decode(bytes, file: path)
        } else {
            configuration = HunterConfiguration()
        }
        configuration.apply(flags)
        configuration.resolveDirectories(environment: environment, executablePath: executablePath)
        try configuration.checkLanguagePack(fromFlag: flags.language != nil)
        return configuration
    }

    /// The line pack must exist in the voices directory: a wrong language is named with the
    /// packs there (exit 64 for `--lang`, 78 for the file). A missing voices directory is
    /// left to `PirateVoice.load`, which names it.
    func checkLanguagePack(fromFlag: Bool) throws(CLIError) {
        guard let directory = voice.voicesDirectory else { return }
        let lines = directory + "/lines"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: lines) else { return }
        let packs = names.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(".json".count)) }.sorted()
        guard !packs.contains(voice.language) else { return }
        let problem = "no line pack '\(voice.language)' in \(lines); allowed: \(packs.joined(separator: ", "))"
        if fromFlag { throw CLIError(.usage, "--lang: " + problem) }
        throw CLIError(.config, "\(file ?? "configuration"): voice.language: " + problem)
    }

    /// Decodes one configuration file's bytes; `file` names it in errors (exit 78).
    static func decode(_ bytes: [UInt8], file: String) throws(CLIError) -> HunterConfiguration {
        // Syntax first (with its line and column, and duplicate keys), then the fields.
        if let syntax = JSONSyntax.firstError(in: bytes) {
            throw CLIError(.config, "\(file): line \(syntax.line), column \(syntax.column): not valid JSON: \(syntax.problem)")
        }
        do {
            var configuration = try JSONDecoder().decode(HunterConfiguration.self, from: Data(bytes))
            configuration.file = file
            return configuration
        } catch let error as ConfigFieldError {
            throw CLIError(.config, "\(file): \(error.path): \(error.problem); allowed: \(error.allowed)")
        } catch {
            throw CLIError(.config, "\(file): not a valid configuration: \(error)")
        }
    }

    /// Fills in the voice and cache directories left to their defaults.
    mutating func resolveDirectories(environment: [String: String], executablePath: String?) {
        if voice.voicesDirectory == nil {
            voice.voicesDirectory = VoiceLocations.resolve(executablePath: executablePath)
        }
        if voice.cacheDirectory == nil {
            if let systemd = environment["CACHE_DIRECTORY"], let first = systemd.split(separator: ":").first {
                voice.cacheDirectory = String(first)
            } else if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
                voice.cacheDirectory = xdg + "/pirate-hunter"
            } else if let home = environment["HOME"], home.hasPrefix("/"), home != "/" {
                voice.cacheDirectory = home + "/.cache/pirate-hunter"
            }
        }
    }


    static func currentExecutablePath() -> String? { VoiceLocations.currentExecutablePath() }
}

// MARK: - Reading the file

enum ConfigurationFile {
    static let maximumBytes = 1 << 20

    /// The file's bytes; nil when the default file is missing (defaults apply).
    static func read(_ path: String, explicit: Bool) throws(CLIError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            switch code {
            case ENOENT, ENOTDIR:
                if !explicit { return nil }
                throw CLIError(.noInput, "\(path): no such configuration file")
            case EACCES, EPERM:
                throw CLIError(.noPermission, "\(path): cannot read the configuration file: \(describe(code))")
            default:
                throw CLIError(.noInput, "\(path): cannot open the configuration file: \(describe(code))")
            }
        }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & mode_t(S_IFMT)) == mode_t(S_IFDIR) {
            throw CLIError(.noInput, "\(path): is a directory, not a configuration file")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                let code = errno
                throw CLIError(code == EACCES ? .noPermission : .ioError, "\(path): cannot read the configuration file: \(describe(code))")
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > maximumBytes {
                throw CLIError(.config, "\(path): larger than \(maximumBytes) bytes; not a configuration file")
            }
        }
        return bytes
    }

    private static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text)
    }
}

// MARK: - Decoding with field paths

/// What the file got wrong: the JSON path, the problem, what is allowed.
struct ConfigFieldError: Error {
    let path: String
    let problem: String
    let allowed: String
}

/// A JSON object key of any name, so that unknown keys can be named.
struct ConfigKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) {
        self.stringValue = "\(intValue)"
        self.intValue = intValue
    }
    init(_ name: String) { self.stringValue = name }
}

/// Ranges shared by the file and the flags.
enum Limits {
    static let identifier = 0...65_535
    static let power = -127...20
    static let volumeDB = -60.0...12.0
    static let rewardAllowed =
        "printable text of 1 to \(HunterConfiguration.Treasure.maximumRewardBytes) UTF-8 bytes (it must fit the scan response)"

    static func text(_ range: ClosedRange<Int>) -> String { "\(range.lowerBound) to \(range.upperBound)" }
    static func text(_ range: ClosedRange<Double>) -> String { "\(number(range.lowerBound)) to \(number(range.upperBound))" }
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : "\(value)"
    }

    static func rewardProblem(_ text: String) -> String? {
        if text.isEmpty { return "is empty" }
        if text.utf8.count > HunterConfiguration.Treasure.maximumRewardBytes { return "is \(text.utf8.count) bytes long" }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format }) {
            return "holds a control character"
        }
        // What a hunter reads back must be what the box sends (and what its QR code says).
        if TreasureSignals.printable(Array(text.utf8)[...]) != text {
            return "holds something a hunter would not print (a private-use character, or a leading, trailing or double space)"
        }
        return nil
    }
}

/// One JSON object of the file: typed, range-checked reads that name the field, and a
/// check that no unknown key is present.
struct ObjectReader {
    let container: KeyedDecodingContainer<ConfigKey>
    let codingPath: [any CodingKey]

    init(_ decoder: any Decoder, known: [String]) throws {
        codingPath = decoder.codingPath
        do {
            container = try decoder.container(keyedBy: ConfigKey.self)
        } catch {
            throw ConfigFieldError(path: Self.path(decoder.codingPath), problem: "must be a JSON object",
                                   allowed: "an object with keys " + known.joined(separator: ", "))
        }
        let unknown = container.allKeys.map(\.stringValue).filter { !known.contains($0) }.sorted()
        if let first = unknown.first {
            throw ConfigFieldError(path: path(first), problem: "unknown key", allowed: known.joined(separator: ", "))
        }
    }

    static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text.isEmpty ? "top level" : text
    }

    func path(_ key: String) -> String { Self.path(codingPath + [ConfigKey(key)]) }

    func has(_ key: String) -> Bool {
        container.contains(ConfigKey(key)) && !((try? container.decodeNil(forKey: ConfigKey(key))) ?? false)
    }

    func fail(_ key: String, _ problem: String, allowed: String) -> ConfigFieldError {
        ConfigFieldError(path: path(key), problem: problem, allowed: allowed)
    }

    func int(_ key: String, _ range: ClosedRange<Int>, unit: String = "") throws -> Int? {
        let allowed = "an integer, " + Limits.text(range) + unit
        let value: Int?
        do {
            value = try container.decodeIfPresent(Int.self, forKey: ConfigKey(key))
        } catch {
            throw fail(key, "must be an integer", allowed: allowed)
        }
        if let value, !range.contains(value) { throw fail(key, "\(value) is out of range", allowed: allowed) }
        return value
    }

    func double(_ key: String, _ range: ClosedRange<Double>, unit: String = "") throws -> Double? {
        let allowed = "a number, " + Limits.text(range) + unit
        let value: Double?
        do {
            value = try container.decodeIfPresent(Double.self, forKey: ConfigKey(key))
        } catch {
            throw fail(key, "must be a number", allowed: allowed)
        }
        if let value, !(value.isFinite && range.contains(value)) {
            throw fail(key, "\(Limits.number(value)) is out of range", allowed: allowed)
        }
        return value
    }

    func string(_ key: String, allowed: String, nonEmpty: Bool = true) throws -> String? {
        let value: String?
        do {
            value = try container.decodeIfPresent(String.self, forKey: ConfigKey(key))
        } catch {
            throw fail(key, "must be a string", allowed: allowed)
        }
        if nonEmpty, value?.isEmpty == true { throw fail(key, "is empty", allowed: allowed) }
        return value
    }

    func bool(_ key: String) throws -> Bool? {
        do {
            return try container.decodeIfPresent(Bool.self, forKey: ConfigKey(key))
        } catch {
            throw fail(key, "must be true or false", allowed: "true, false")
        }
    }

    /// A nested object or array decoded by `T` (its own errors carry their own paths).
    func nested<T: Decodable>(_ type: T.Type, _ key: String) throws -> T? {
        do {
            return try container.decodeIfPresent(T.self, forKey: ConfigKey(key))
        } catch let error as ConfigFieldError {
            throw error
        } catch {
            throw fail(key, "has the wrong type", allowed: "see docs/configuration.md")
        }
    }

    func uuid(_ key: String) throws -> UUID? {
        let allowed = "a UUID, 8-4-4-4-12 hex digits (E2C56DB5-DFFB-48D2-B060-D0F5A71096E0)"
        guard let text = try string(key, allowed: allowed) else { return nil }
        guard let uuid = UUID(uuidString: text) else { throw fail(key, "'\(text)' is not a UUID", allowed: allowed) }
        return uuid
    }
}

extension HunterConfiguration: Decodable {
    static let keys = ["transport", "regions", "voice", "audio", "ranging", "hunt", "record", "json", "treasure", "announce"]

    init(from decoder: any Decoder) throws {
        self.init()
        let reader = try ObjectReader(decoder, known: Self.keys)
        if let text = try reader.string("transport", allowed: TransportSpec.allowed) {
            guard let choice = TransportSpec(validating: text) else {
                throw reader.fail("transport", "'\(text)' is not a transport", allowed: TransportSpec.allowed)
            }
            transport = choice
        }
        if let list = try reader.nested(RegionList.self, "regions") {
            guard !list.regions.isEmpty else {
                throw reader.fail("regions", "is empty", allowed: "one or more { \"name\", \"uuid\", \"major\", \"minor\" }")
            }
            huntedRegions = list.regions
        }
        if let section = try reader.nested(VoiceSection.self, "voice") { voice = section.value }
        if let section = try reader.nested(AudioSection.self, "audio") { audio = section.value }
        if let section = try reader.nested(RangingSection.self, "ranging") { ranging = section.value }
        if let section = try reader.nested(HuntSection.self, "hunt") { hunt = section.value }
        record = try reader.string("record", allowed: "a file path for the btsnoop capture")
        json = try reader.bool("json") ?? false
        if let section = try reader.nested(TreasureSection.self, "treasure") { treasure = section.value }
        if let section = try reader.nested(AnnounceSection.self, "announce") { announce = section.value }
    }
}

struct RegionList: Decodable {
    var regions: [Region] = []

    init(from decoder: any Decoder) throws {
        let allowed = "an array of { \"name\", \"uuid\", \"major\", \"minor\" }"
        var container: any UnkeyedDecodingContainer
        do {
            container = try decoder.unkeyedContainer()
        } catch {
            throw ConfigFieldError(path: ObjectReader.path(decoder.codingPath), problem: "must be an array", allowed: allowed)
        }
        while !container.isAtEnd {
            let index = container.currentIndex
            let entry = try container.decode(RegionEntry.self)
            if let earlier = regions.first(where: { $0.name == entry.region.name }) {
                throw ConfigFieldError(
                    path: ObjectReader.path(decoder.codingPath + [ConfigKey(intValue: index) ?? ConfigKey("\(index)"), ConfigKey("name")]),
                    problem: "'\(earlier.name)' names two regions", allowed: "a name used once")
            }
            regions.append(entry.region)
        }
    }
}

struct RegionEntry: Decodable {
    var region: Region

    init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, known: ["name", "uuid", "major", "minor"])
        guard let uuid = try reader.uuid("uuid") else {
            throw reader.fail("uuid", "is missing", allowed: "a UUID, 8-4-4-4-12 hex digits")
        }
        let name = try reader.string("name", allowed: "a non-empty name") ?? uuid.uuidString
        region = Region(name: name, uuid: uuid)
        region.major = try reader.int("major", Limits.identifier).map { UInt16($0) }
        region.minor = try reader.int("minor", Limits.identifier).map { UInt16($0) }
        if region.minor != nil, region.major == nil {
            throw reader.fail("minor", "needs a major", allowed: "a minor only together with a major")
        }
    }
}

struct VoiceSection: Decodable {
    var value = HunterConfiguration.Voice()

    init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(
            decoder, known: ["language", "voices_directory", "cache_directory", "rate", "pitch", "range", "volume"])
        let languageAllowed = "a line pack name: en-pirate, ja (a file <voices_directory>/lines/NAME.json)"
        if let language = try reader.string("language", allowed: languageAllowed) {
            let ok = language.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }
            guard ok else { throw reader.fail("language", "'\(language)' is not a line pack name", allowed: languageAllowed) }
            value.language = language
        }
        value.voicesDirectory = try reader.string("voices_directory", allowed: "a directory holding lines/ and arrr.wav")
        value.cacheDirectory = try reader.string(
            "cache_directory", allowed: "a directory, or \"\" for no cache", nonEmpty: false)
        if let rate = try reader.int("rate", 80...450, unit: " words per minute") { value.parameters.rate = rate }
        if let pitch = try reader.int("pitch", 0...100) { value.parameters.pitch = pitch }
        if let range = try reader.int("range", 0...100) { value.parameters.range = range }
        if let volume = try reader.int("volume", 0...200) { value.parameters.volume = volume }
    }
}

struct AudioSection: Decodable {
    var value = HunterConfiguration.Audio()

    init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, known: ["device", "volume_db"])
        if let device = try reader.string("device", allowed: "an ALSA device name: default, plughw:1,0, default:CARD=Headphones...") {
            value.device = device
        }
        if let volume = try reader.double("volume_db", Limits.volumeDB, unit: " dB") { value.volumeDB = volume }
    }
}

struct HuntSection: Decodable {
    var value = HunterConfiguration.Hunt()

    init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, known: ["found_hold", "trend_interval", "trend_quiet_after_line", "pending_lifetime"])
        if let v = try reader.double("found_hold", 0.5...60, unit: " s") { value.foundHold = v }
        if let v = try reader.double("trend_interval", 0...600, unit: " s") { value.trendInterval = v }
        if let v = try reader.double("trend_quiet_after_line", 0...600, unit: " s") { value.trendQuietAfterLine = v }
        if let v = try reader.double("pending_lifetime", 0...60, unit: " s") { value.pendingLifetime = v }
    }
}

struct TreasureSection: Decodable {
    var value = HunterConfiguration.Treasure()

    init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, known: ["uuid", "major", "minor", "power", "interval_ms", "reward"])
        if let uuid = try reader.uuid("uuid") { value.uuid = uuid }
        if let major = try reader.int("major", Limits.identifier) { value.major = UInt16(major) }
        if let minor = try reader.int("minor", Limits.identifier) { value.minor = UInt16(minor) }
        if let power = try reader.int("power", Limits.power, unit: " dBm (RSSI at 1 m)") { value.power = Int8(power) }
        if let interval = try reader.int("interval_ms", HunterConfiguration.Treasure.intervalRange, unit: " ms") {
            value.intervalMilliseconds = interval
        }
        if let reward = try reader.string("reward", allowed: Limits.rewardAllowed, nonEmpty: false) {
            if let problem = Limits.rewardProblem(reward) { throw reader.fail("reward", problem, allowed: Limits.rewardAllowed) }
            value.reward = reward
        }
    }
}

struct AnnounceSection: Decodable {
    var value = HunterConfiguration.Announce()

    init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, known: ["hunter_id", "seconds", "reward_timeout"])
        if let id = try reader.int("hunter_id", Limits.identifier) { value.hunterID = UInt16(id) }
        if let v = try reader.double("seconds", HunterConfiguration.Announce.secondsRange, unit: " s") { value.seconds = v }
        if let v = try reader.double("reward_timeout", 1...120, unit: " s") { value.rewardTimeout = v }
    }
}

/// `ranging`: overrides of every `RangingConfiguration` field, snake_case.
struct RangingSection: Decodable {
    var value = RangingConfiguration.default

    static var doubles: [(key: String, path: WritableKeyPath<RangingConfiguration, Double>, range: ClosedRange<Double>, unit: String)] {
        [
            ("process_noise", \.processNoise, 0.001...1000, " dB²/s"),
            ("measurement_noise", \.measurementNoise, 0.01...10_000, " dB²"),
            ("innovation_gate", \.innovationGate, 0.5...100, " standard deviations"),
            ("path_loss_exponent", \.pathLossExponent, 0.5...10, ""),
            ("environment_sigma", \.environmentSigma, 0.1...50, " dB"),
            ("immediate_edge", \.immediateEdge, 0.01...100, " m"),
            ("near_edge", \.nearEdge, 0.01...1000, " m"),
            ("proximity_hysteresis", \.proximityHysteresis, 0...30, " dB"),
            ("proximity_dwell", \.proximityDwell, 0...600, " s"),
            ("false_exits_per_hour", \.falseExitsPerHour, 0.000_001...3600, ""),
            ("false_unknowns_per_hour", \.falseUnknownsPerHour, 0.000_001...3600, ""),
            ("minimum_silence", \.minimumSilence, 0.1...3600, " s"),
            ("maximum_silence", \.maximumSilence, 0.1...3600, " s"),
            ("enter_window", \.enterWindow, 0.1...600, " s"),
            ("confirm_window", \.confirmWindow, 0.1...600, " s"),
            ("initial_state_timeout", \.initialStateTimeout, 0.1...600, " s"),
            ("nearest_margin", \.nearestMargin, 0...60, " dB"),
            ("nearest_dwell", \.nearestDwell, 0...600, " s"),
            ("trend_window", \.trendWindow, 1...600, " s"),
            ("trend_slope", \.trendSlope, 0.01...100, " dB/s"),
            ("trend_reversal_factor", \.trendReversalFactor, 1...100, ""),
            ("trend_minimum_interval", \.trendMinimumInterval, 0...3600, " s"),
            ("range_interval", \.rangeInterval, 0...3600, " s"),
        ]
    }
    static var ints: [(key: String, path: WritableKeyPath<RangingConfiguration, Int>, range: ClosedRange<Int>)] {
        [
            ("proximity_minimum_packets", \.proximityMinimumPackets, 1...1000),
            ("enter_packets", \.enterPackets, 1...100),
            ("confirm_packets", \.confirmPackets, 1...100),
        ]
    }
    static var ranges: [(key: String, path: WritableKeyPath<RangingConfiguration, ClosedRange<Int>>)] {
        [
            ("plausible_rssi", \.plausibleRSSI),
            ("plausible_measured_power", \.plausibleMeasuredPower),
        ]
    }
    static var keys: [String] { doubles.map(\.key) + ints.map(\.key) + ranges.map(\.key) }

    init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, known: Self.keys)
        for field in Self.doubles {
            if let v = try reader.double(field.key, field.range, unit: field.unit) { value[keyPath: field.path] = v }
        }
        for field in Self.ints {
            if let v = try reader.int(field.key, field.range) { value[keyPath: field.path] = v }
        }
        for field in Self.ranges where reader.has(field.key) {
            let allowed = "[LOW, HIGH] in dBm, -127 <= LOW <= HIGH <= 20"
            let pair: [Int]
            do {
                pair = try reader.container.decode([Int].self, forKey: ConfigKey(field.key))
            } catch {
                throw reader.fail(field.key, "must be two integers", allowed: allowed)
            }
            guard pair.count == 2, pair[0] <= pair[1], Limits.power.contains(pair[0]), Limits.power.contains(pair[1]) else {
                throw reader.fail(field.key, "\(pair) is not a range", allowed: allowed)
            }
            value[keyPath: field.path] = pair[0]...pair[1]
        }
        // Pairs that must stay ordered: the error names whichever of the two the file set.
        try Self.ordered(reader, "immediate_edge", value.immediateEdge, "near_edge", value.nearEdge, strict: true)
        try Self.ordered(reader, "minimum_silence", value.minimumSilence, "maximum_silence", value.maximumSilence, strict: false)
    }

    private static func ordered(
        _ reader: ObjectReader, _ lowKey: String, _ low: Double, _ highKey: String, _ high: Double, strict: Bool
    ) throws {
        guard strict ? low >= high : low > high else { return }
        let relation = strict ? "less than" : "at most"
        if reader.has(highKey) {
            throw reader.fail(highKey, "\(Limits.number(high)) is below \(lowKey) (\(Limits.number(low)))",
                              allowed: "a value with \(lowKey) \(relation) \(highKey)")
        }
        throw reader.fail(lowKey, "\(Limits.number(low)) is not \(relation) \(highKey) (\(Limits.number(high)))",
                          allowed: "a value with \(lowKey) \(relation) \(highKey)")
    }
}

// MARK: - Where a file stops being JSON

/// Finds the first syntax error in a JSON text, with its line and column (JSONDecoder's
/// own error does not say where). Strict RFC 8259 (no trailing commas, no comments), and two
/// equal keys in one object are an error.
struct JSONSyntax {
    struct Failure: Equatable {
        var line: Int
        var column: Int
        var problem: String
    }

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    static func firstError(in bytes: [UInt8]) -> Failure? {
        var scanner = JSONSyntax(bytes: bytes)
        do throws(Failure) {
            scanner.skipSpace()
            try scanner.value()
            scanner.skipSpace()
            if scanner.index < bytes.count { throw scanner.failure("unexpected text after the JSON value") }
            return nil
        } catch {
            return error
        }
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func failure(_ problem: String) -> Failure {
        var line = 1
        var column = 1
        for byte in bytes[0..<min(index, bytes.count)] {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return Failure(line: line, column: column, problem: problem)
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipSpace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private func describe(_ byte: UInt8?) -> String {
        guard let byte else { return "the end of the file" }
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x" + String(byte, radix: 16)
    }

    private mutating func value() throws(Failure) {
        depth += 1
        defer { depth -= 1 }
        if depth > 256 { throw failure("nested too deeply") }
        switch current {
        case UInt8(ascii: "{"): try object()
        case UInt8(ascii: "["): try array()
        case UInt8(ascii: "\""): try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case let byte? where byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte): try number()
        default: throw failure("expected a value, found \(describe(current))")
        }
    }

    private mutating func object() throws(Failure) {
        index += 1
        skipSpace()
        if current == UInt8(ascii: "}") {
            index += 1
            return
        }
        var keys = Set<ArraySlice<UInt8>>()
        while true {
            guard current == UInt8(ascii: "\"") else { throw failure("expected a key in double quotes, found \(describe(current))") }
            let start = index
            try string()
            // JSONDecoder keeps one of two equal keys silently: an edit that added a second
            // "rate" instead of changing the first would do nothing.
            guard keys.insert(bytes[start..<index]).inserted else {
                let name = String(decoding: bytes[(start + 1)..<(index - 1)], as: UTF8.self)
                index = start
                throw failure("key '\(name)' appears twice in one object")
            }
            skipSpace()
            guard current == UInt8(ascii: ":") else { throw failure("expected ':' after the key, found \(describe(current))") }
            index += 1
            skipSpace()
            try value()
            skipSpace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipSpace()
                if current == UInt8(ascii: "}") { throw failure("trailing comma before '}'") }
            case UInt8(ascii: "}"):
                index += 1
                return
            default:
                throw failure("expected ',' or '}', found \(describe(current))")
            }
        }
    }

    private mutating func array() throws(Failure) {
        index += 1
        skipSpace()
        if current == UInt8(ascii: "]") {
            index += 1
            return
        }
        while true {
            try value()
            skipSpace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipSpace()
                if current == UInt8(ascii: "]") { throw failure("trailing comma before ']'") }
            case UInt8(ascii: "]"):
                index += 1
                return
            default:
                throw failure("expected ',' or ']', found \(describe(current))")
            }
        }
    }

    private mutating func string() throws(Failure) {
        index += 1
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return
            case UInt8(ascii: "\\"):
                index += 1
                guard let escaped = current else { break }
                if escaped == UInt8(ascii: "u") {
                    for _ in 0..<4 {
                        index += 1
                        guard let hex = current, (0x30...0x39).contains(hex) || (0x41...0x46).contains(hex) || (0x61...0x66).contains(hex) else {
                            throw failure("bad \\u escape in a string")
                        }
                    }
                } else if !"\"\\/bfnrt".utf8.contains(escaped) {
                    throw failure("bad escape \\\(Character(Unicode.Scalar(escaped))) in a string")
                }
                index += 1
            case 0x00..<0x20:
                throw failure(byte == 0x0A ? "string not closed before the end of the line" : "control character in a string")
            default:
                index += 1
            }
        }
        throw failure("string not closed before the end of the file")
    }

    private mutating func literal(_ word: String) throws(Failure) {
        let start = index
        for expected in word.utf8 {
            guard current == expected else {
                index = start
                throw failure("expected \(word)")
            }
            index += 1
        }
    }

    private mutating func number() throws(Failure) {
        if current == UInt8(ascii: "-") { index += 1 }
        func digits(_ scanner: inout JSONSyntax) -> Int {
            var count = 0
            while let byte = scanner.current, (0x30...0x39).contains(byte) {
                scanner.index += 1
                count += 1
            }
            return count
        }
        guard digits(&self) > 0 else { throw failure("expected a digit, found \(describe(current))") }
        if current == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { throw failure("expected a digit after '.', found \(describe(current))") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard digits(&self) > 0 else { throw failure("expected a digit in the exponent, found \(describe(current))") }
        }
    }
}

extension JSONSyntax.Failure: Error {}

// MARK: - Is stderr the journal?

/// systemd sets `JOURNAL_STREAM=<device>:<inode>` for the stream it connected to the
/// journal; a child whose stderr was redirected elsewhere inherits the variable, so only a
/// stderr that still is that stream should get `<N>` priority prefixes (`Log.underSystemd`).
enum JournalStream {
    static func isStandardError(
        environment: [String: String] = ProcessInfo.processInfo.environment, descriptor: Int32 = 2
    ) -> Bool {
        guard let stream = environment["JOURNAL_STREAM"] else { return false }
        let parts = stream.split(separator: ":")
        var info = stat()
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]),
              fstat(descriptor, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// One event, one line: control characters (newlines included) become spaces.
    static func oneLine(_ text: String) -> String {
        var clean = ""
        clean.unicodeScalars.append(contentsOf: text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 })
        return clean
    }
}
