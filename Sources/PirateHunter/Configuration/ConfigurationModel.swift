import Audio
import Bluetooth
import FoundationEssentials
import Game
import GameKey
import GPIO
import Hunt
import Ranging
import Voice

/// The appliance's settings, from one JSON file (`--config FILE`, default
/// `/etc/pirate-hunter/hunter.json`) with command-line flags over it. Every field is
/// optional in the file; defaults and allowed values are in docs/configuration.md (keep the
/// two together). Precedence: flags, then the file, then the defaults.
///
/// Where a module's own configuration type can hold a section (ranging, hunt, the speech
/// parameters) it is stored as that type, and the file's key table (ConfigurationDecoding)
/// writes straight into it: a setting is declared once, in its module, and named once, in
/// its key table.
struct HunterConfiguration: Sendable, Equatable {
    static let defaultPath = "/etc/pirate-hunter/hunter.json"
    /// The treasure box's file (`pirate-hunter treasure`).
    static let treasurePath = "/etc/pirate-hunter/treasure.json"
    /// The game's own proximity UUID (`HunterCore.defaultTreasureUUID`).
    static let defaultUUID = HunterCore.defaultTreasureUUID

    /// What `VoiceConfiguration` takes before its directories are resolved (its
    /// `voicesDirectory` is not optional, and "" here means "no cache").
    struct Voice: Sendable, Equatable {
        /// Line pack name (`<voices>/lines/<language>.json`).
        var language = VoiceConfiguration.defaultLanguage
        /// nil: `<executable>/../share/pirate-hunter/voices`, then `VoiceLocations.resolve()`.
        var voicesDirectory: String?
        /// nil: `$CACHE_DIRECTORY` (systemd), `$XDG_CACHE_HOME/pirate-hunter`,
        /// `$HOME/.cache/pirate-hunter`; "" in the file: no cache.
        var cacheDirectory: String?
        var parameters = SpeechParameters()
    }

    /// The two settings of `PlaybackConfiguration` the file holds (that type carries
    /// closures, so it cannot be stored in this Equatable value).
    struct Audio: Sendable, Equatable {
        /// `auto`: the first USB audio card, else ALSA's default (`SoundCards.choose`).
        var device = "auto"
        var volumeDB = 0.0
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

        /// Sealed for the game (issue #25): 31 bytes of scan response - length, AD type, a
        /// 16-bit company id, the layout's marker and a 6-byte MAC (`GameSignals`).
        static let maximumRewardBytes = GameSignals.maximumSealedRewardBytes
        static let intervalRange = 100...10_240
        /// The iBeacon the box advertises.
        var beacon: IBeacon { IBeacon(uuid: uuid, major: major, minor: minor, measuredPower: power) }
        /// The advertising interval in controller units of 0.625 ms (100 ms -> 0x00A0).
        var intervalUnits: UInt16 { UInt16(clamping: (intervalMilliseconds * 8 + 2) / 5) }
    }

    /// The game's secret and its hunters (issue #25, docs/security.md): the same `key` in
    /// every Pi of one game (`pirate-hunter pair CODE` writes it).
    struct Game: Sendable, Equatable {
        /// nil: unpaired (nothing from the air is believed beyond a plain beacon's presence).
        var key: GameKey?
        /// The only hunter ids a box greets; nil: any whose announcement verifies.
        var hunters: Set<UInt16>?

        static let keyAllowed = "the game key's text: 52 letters A-Z and digits 2-7 (dashes and spaces ignored), from pirate-hunter check --new-game"
    }

    /// What a hunter does once it has found the treasure: the game's own type.
    typealias Announce = HunterCore.Announcement

    /// A push button on a GPIO line: each press says the current clue again.
    struct Button: Sendable, Equatable {
        /// `gpiochipN` (under /dev) or a device path.
        var chip = ""
        /// The line's offset on the chip (a Pi's GPIO17 is line 17 of gpiochip0).
        var line: UInt32 = 0
        /// Pressed reads low: a button to ground (with a pull-up).
        var activeLow = true
        /// nil: pull-up when active low, else pull-down.
        var bias: GPIOButton.Bias?

        static let lines = 0...1023
        var resolvedBias: GPIOButton.Bias { bias ?? (activeLow ? .pullUp : .pullDown) }
    }

    /// `web`: the parent's phone page (issue #26, docs/web.md).
    struct Web: Sendable, Equatable {
        var enabled = true
        var port: UInt16 = 8080
    }

    /// `tags[]`: a beacon tag the parent named and calibrated (on the page or by hand).
    struct Tag: Sendable, Equatable {
        var key: BeaconKey
        var name: String?
        /// The RSSI at 1 m measured for it, used instead of the power it advertises.
        var power: Int8?
    }

    var transport: TransportSpec = .kernel(adapter: nil)
    /// nil: no button.
    var button: Button?
    /// The treasure region(s) to hunt: one chest, or several hunted in any order (with a
    /// trail, only one: the trail's steps are hunted).
    var huntedRegions: [Region] = [Region(name: "treasure", uuid: HunterConfiguration.defaultUUID)]
    var voice = Voice()
    var audio = Audio()
    var ranging = RangingConfiguration.default
    /// The hunt rules; `region` is filled in from `huntedRegions` by `huntConfiguration()`.
    var hunt = HuntDirector.Configuration(region: "treasure")
    /// Write every HCI packet to this btsnoop file.
    var record: String?
    /// JSON lines on stdout.
    var json = false
    var treasure = Treasure()
    var announce = Announce()
    var game = Game()
    var web = Web()
    var tags: [Tag] = []
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

    /// For the region, or the trail's first step. Several regions without a trail are a
    /// trail in any order; a race without a trail is a one-step trail of the region.
    func huntConfiguration() -> HuntDirector.Configuration {
        var configuration = hunt
        if configuration.trail.isEmpty, huntedRegions.count > 1 {
            // Several regions without a trail: every one is a treasure, found in any order
            // (never the first hunted and the rest silently ignored).
            configuration.trail = huntedRegions.map { TrailStep(region: $0) }
            configuration.trailRules.order = .anyOrder
        } else if configuration.trail.isEmpty, configuration.trailRules.mode == .race, let first = huntedRegions.first {
            configuration.trail = [TrailStep(region: first)]
        }
        configuration.region = configuration.trail.first?.region.name ?? huntedRegions.first?.name ?? "treasure"
        configuration.farEdge = ranging.nearEdge
        return configuration
    }

    /// The regions the ranging engine watches: the trail's steps when there is a trail.
    var rangedRegions: [Region] {
        hunt.trail.isEmpty ? huntedRegions : hunt.trail.map(\.region)
    }

    /// What `Hunter` takes; `quiet` leaves the voice and sound out (ranging only).
    func hunterSetup(quiet: Bool = false) -> HunterSetup {
        var setup = HunterSetup()
        setup.transport = transport
        setup.regions = rangedRegions
        setup.ranging = ranging
        setup.json = json
        setup.record = record
        if !quiet {
            setup.button = button
            setup.announce = announce
            setup.hunt = huntConfiguration()
            setup.voice = voiceConfiguration()
            setup.playback = playbackConfiguration()
        }
        setup.key = game.key
        setup.web = web
        setup.tags = tags
        setup.file = file
        return setup
    }

    /// What `TreasureBox` takes.
    func treasureSetup() -> TreasureSetup {
        var setup = TreasureSetup()
        setup.transport = transport
        setup.treasure = treasure
        setup.trail = hunt.trail
        setup.ranging = ranging
        setup.json = json
        setup.record = record
        setup.key = game.key
        setup.roster = game.hunters
        setup.web = web
        setup.file = file
        return setup
    }
}

/// Ranges and checks shared by the file and the flags, so both refuse the same values.
enum Limits {
    static let identifier = 0...65_535
    static let power = -127...20
    static let volumeDB = -60.0...12.0
    static let rewardAllowed =
        "printable text of 1 to \(HunterConfiguration.Treasure.maximumRewardBytes) UTF-8 bytes (it must fit a sealed scan response; a longer one goes in a trail step's own reward)"

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

// MARK: - Transport

// What the file's `transport` and `--hci` both accept, checked alike.
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

extension [HunterConfiguration.Tag] {
    /// The tags' measured powers (`tags[].power`), by beacon: what the hunt, `scan` and the
    /// parent's page range them from (`BeaconSighting.calibrated(by:)`).
    var calibrations: [BeaconKey: Int8] {
        var calibrations: [BeaconKey: Int8] = [:]
        for tag in self { if let power = tag.power { calibrations[tag.key] = power } }
        return calibrations
    }
}
