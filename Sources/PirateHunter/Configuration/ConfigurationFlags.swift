import FoundationEssentials
import Ranging

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
}

extension HunterConfiguration {
    /// Flags over the file: only what was given on the command line changes.
    mutating func apply(_ flags: ConfigurationFlags) {
        if let transport = flags.transport { self.transport = transport }
        if !flags.regions.isEmpty {
            // The flag names what to hunt: a trail of the file gives way to it.
            huntedRegions = flags.regions
            hunt.trail = []
        }
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
}
