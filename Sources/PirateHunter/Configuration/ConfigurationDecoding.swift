import Audio
import FoundationEssentials
import GPIO
import GameKey
import Hunt
import Ranging
import Voice

// Decoding: one key table per section of the file (key, where it goes, what is allowed),
// read into the section's own type; every error names the field path and what is allowed.

extension HunterConfiguration {
    /// Decodes one configuration file's bytes; `file` names it in errors (exit 78).
    static func decode(_ original: [UInt8], file: String) throws(CLIError) -> HunterConfiguration {
        let bytes = ConfigurationText.withoutByteOrderMark(original)
        if let encoding = ConfigurationText.encodingProblem(bytes) {
            throw CLIError(.config, "\(file): line \(encoding.line), column \(encoding.column): \(encoding.problem)")
        }
        // JSONDecoder says only "The given data was not valid JSON." (no line, no column),
        // and takes trailing commas and the last of two equal keys silently: syntax first.
        if let syntax = JSONSyntax.firstError(in: bytes) {
            throw CLIError(.config, "\(file): line \(syntax.line), column \(syntax.column): not valid JSON: \(syntax.problem)")
        }
        do {
            var configuration = try JSONDecoder().decode(DecodedSection<HunterConfiguration>.self, from: Data(bytes)).value
            configuration.file = file
            configuration.resolveRelativePaths(from: file)
            return configuration
        } catch let error as ConfigFieldError {
            throw CLIError(.config, "\(file): \(error.path): \(error.problem); allowed: \(error.allowed)")
        } catch {
            throw CLIError(.config, "\(file): not a valid configuration: \(error)")
        }
    }
}

// MARK: - The key tables

/// A JSON object of the file that decodes into a value of this type: its defaults, its
/// key table, and checks across keys.
protocol ConfigurationSection {
    static var initial: Self { get }
    static var settings: [Setting<Self>] { get }
    /// After every key is read: rules between keys (the reader names the one to blame).
    static func check(_ value: Self, _ reader: ObjectReader) throws
}

extension ConfigurationSection {
    static var keys: [String] { settings.map(\.key) }
    static func check(_ value: Self, _ reader: ObjectReader) throws {}
}

extension HunterConfiguration: ConfigurationSection {
    static var initial: HunterConfiguration { HunterConfiguration() }
    static var settings: [Setting<HunterConfiguration>] {
        [
            Setting("transport") { reader, value in
                guard let text = try reader.string("transport", allowed: TransportSpec.allowed) else { return }
                guard let choice = TransportSpec(validating: text) else {
                    throw reader.fail("transport", "'\(text)' is not a transport", allowed: TransportSpec.allowed)
                }
                value.transport = choice
            },
            Setting("regions") { reader, value in
                guard let list = try reader.nested(RegionList.self, "regions") else { return }
                guard !list.regions.isEmpty else {
                    throw reader.fail("regions", "is empty", allowed: "one or more { \"name\", \"uuid\", \"major\", \"minor\" }")
                }
                value.huntedRegions = list.regions
            },
            .section("voice", \.voice),
            .section("audio", \.audio),
            .section("ranging", \.ranging),
            .section("hunt", \.hunt),
            .optionalText("record", \.record, allowed: "a file path for the btsnoop capture"),
            .flag("json", \.json),
            .section("treasure", \.treasure),
            .section("announce", \.announce),
            .section("game", \.game),
            .section("web", \.web),
            Setting("tags") { reader, value in
                if let list = try reader.nested(TagList.self, "tags") { value.tags = list.tags }
            },
            Setting("button") { reader, value in
                if let section = try reader.nested(DecodedSection<Button>.self, "button") { value.button = section.value }
            },
        ]
    }

    /// Several regions are all hunted (a trail in any order, `huntConfiguration`) unless a
    /// trail is given too: then the trail is what is hunted, and the regions would be
    /// ignored without a word.
    static func check(_ value: Self, _ reader: ObjectReader) throws {
        if value.huntedRegions.count > 1, !value.hunt.trail.isEmpty {
            throw reader.fail("regions", "has \(value.huntedRegions.count) regions and hunt.trail is given too: only the trail would be hunted",
                              allowed: "one region with a trail, or several regions without one (hunted in any order); put every treasure in hunt.trail")
        }
    }
}

extension HunterConfiguration.Button: ConfigurationSection {
    static let chipAllowed = "a GPIO chip: gpiochipN (as /dev/gpiochipN; gpioinfo lists them) or its /dev path"
    static var initial: Self { Self() }
    static var settings: [Setting<Self>] {
        [
            .text("chip", \.chip, allowed: chipAllowed) { chip in
                if chip.hasPrefix("/") { return chip.hasPrefix("/dev/") ? nil : "'\(chip)' is not under /dev" }
                let number = chip.dropFirst("gpiochip".count)
                return chip.hasPrefix("gpiochip") && !number.isEmpty && number.allSatisfy(\.isASCIIDigit)
                    ? nil : "'\(chip)' is not a GPIO chip's name"
            },
            .integer("line", \.line, lines),
            .flag("active_low", \.activeLow),
            Setting("bias") { reader, value in
                let allowed = GPIOButton.Bias.allCases.map(\.rawValue).joined(separator: ", ")
                    + " (default: pull-up when active_low, else pull-down)"
                guard let text = try reader.string("bias", allowed: allowed) else { return }
                guard let bias = GPIOButton.Bias(rawValue: text) else { throw reader.fail("bias", "'\(text)' is not one of them", allowed: allowed) }
                value.bias = bias
            },
        ]
    }

    /// A button needs its chip and its line.
    static func check(_ value: Self, _ reader: ObjectReader) throws {
        if !reader.has("chip") { throw reader.fail("chip", "is missing", allowed: chipAllowed) }
        if !reader.has("line") {
            throw reader.fail("line", "is missing", allowed: "an integer, \(Limits.text(lines)) (the line's offset on the chip)")
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

extension HunterConfiguration.Voice: ConfigurationSection {
    static var initial: Self { Self() }
    static var settings: [Setting<Self>] {
        let languageAllowed = "a line pack name: en-family, en-pirate, ja (a file <voices_directory>/lines/NAME.json)"
        return [
            .text("language", \.language, allowed: languageAllowed) { name in
                name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }
                    ? nil : "'\(name)' is not a line pack name"
            },
            .optionalText("voices_directory", \.voicesDirectory, allowed: "a directory holding lines/ and arrr.wav"),
            .optionalText("cache_directory", \.cacheDirectory, allowed: "a directory, or \"\" for no cache", nonEmpty: false),
            .integer("rate", \.parameters.rate, 80...450, " words per minute"),
            .integer("pitch", \.parameters.pitch, 0...100),
            .integer("range", \.parameters.range, 0...100),
            .integer("volume", \.parameters.volume, 0...200),
        ]
    }
}

extension HunterConfiguration.Audio: ConfigurationSection {
    static var initial: Self { Self() }
    static var settings: [Setting<Self>] {
        [
            .text("device", \.device, allowed: "auto or an ALSA device name: default, plughw:CARD=Device,DEV=0, sysdefault:CARD=vc4hdmi0..."),
            .number("volume_db", \.volumeDB, Limits.volumeDB, " dB"),
        ]
    }
}

extension HuntDirector.Configuration: ConfigurationSection {
    /// The region is the first hunted one, set by `HunterConfiguration.huntConfiguration()`.
    static var initial: Self { Self(region: "treasure") }
    static var settings: [Setting<Self>] {
        [
            .number("found_hold", \.foundHold, 0.5...60, " s"),
            .number("trend_interval", \.trendInterval, 0...600, " s"),
            .number("trend_quiet_after_line", \.trendQuietAfterLine, 0...600, " s"),
            .number("pending_lifetime", \.pendingLifetime, 0...60, " s"),
            Setting("trail") { reader, value in
                guard let list = try reader.nested(TrailList.self, "trail") else { return }
                guard !list.steps.isEmpty else { throw reader.fail("trail", "is empty", allowed: TrailList.allowed) }
                value.trail = list.steps
            },
            .choice("order", \.trailRules.order),
            .number("hint_after", \.trailRules.hintAfter, 5...3600, " s"),
            .number("hint_interval", \.trailRules.hintInterval, 5...3600, " s"),
            .choice("mode", \.trailRules.mode),
            .section("detector", \.detector),
            .flag("spin", \.spin),
        ]
    }
}

/// `hunt.detector`: the treasure detector's click curve.
extension TreasureDetector.Configuration: ConfigurationSection {
    static var initial: Self { Self() }
    static var settings: [Setting<Self>] {
        [
            .flag("enabled", \.enabled),
            .number("edge_rate", \.edgeRate, 0.1...4, " clicks/s"),
            .number("chest_rate", \.chestRate, 1...20, " clicks/s"),
            .number("edge_loss_db", \.edgeLoss, 5...60, " dB"),
            .number("chest_loss_db", \.chestLoss, -20...30, " dB"),
            .integer("steps", \.steps, 2...40),
            .number("time_constant", \.timeConstant, 0.1...10, " s"),
        ]
    }

    static func check(_ value: Self, _ reader: ObjectReader) throws {
        if value.chestLoss >= value.edgeLoss {
            throw reader.fail("chest_loss_db", "\(Limits.number(value.chestLoss)) is not below edge_loss_db (\(Limits.number(value.edgeLoss)))",
                              allowed: "a path loss at the chest below the edge's")
        }
        if value.chestRate <= value.edgeRate {
            throw reader.fail("chest_rate", "\(Limits.number(value.chestRate)) is not above edge_rate (\(Limits.number(value.edgeRate)))",
                              allowed: "more clicks at the chest than at the edge")
        }
    }
}

extension Region {
    /// The same beacons, however the text named them (a UUID's case, a minor "01" or "1").
    func hasTheBeacons(of other: Region) -> Bool {
        uuid == other.uuid && major == other.major && minor == other.minor
    }
}

/// `hunt.trail`: the steps of a trail, in order, each region named once.
struct TrailList: Decodable {
    static let allowed = "an array of { \"region\": \"UUID[:MAJOR[:MINOR]]\", \"clue\" or \"clue_wav\", \"hint\", \"found\", \"reward\" }"
    var steps: [TrailStep] = []

    init(from decoder: any Decoder) throws {
        var container = try ObjectReader.array(decoder, allowed: Self.allowed)
        while !container.isAtEnd {
            let index = container.currentIndex
            let step = try container.decode(TrailStepEntry.self).step
            if let earlier = steps.firstIndex(where: { $0.region.hasTheBeacons(of: step.region) }) {
                throw ConfigFieldError(
                    path: ObjectReader.path(decoder.codingPath + [ConfigKey(intValue: index) ?? ConfigKey("\(index)"), ConfigKey("region")]),
                    problem: "'\(step.region.name)' is already step \(earlier + 1)", allowed: "each treasure once on a trail")
            }
            steps.append(step)
        }
    }
}

struct TrailStepEntry: Decodable {
    var step: TrailStep

    init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, known: ["region", "clue", "clue_wav", "hint", "found", "reward", "box"])
        let regionAllowed = "UUID[:MAJOR[:MINOR]], major and minor 0-65535 (what `scan` prints for a beacon)"
        guard let text = try reader.string("region", allowed: regionAllowed) else {
            throw reader.fail("region", "is missing", allowed: regionAllowed)
        }
        guard let region = RangingOutput.region(text) else {
            throw reader.fail("region", "'\(text)' is not a region", allowed: regionAllowed)
        }
        let spoken = "text of 1 to \(Self.maximumText) characters, said as written"
        func words(_ key: String) throws -> String? {
            guard let text = try reader.string(key, allowed: spoken) else { return nil }
            if text.count > Self.maximumText { throw reader.fail(key, "is \(text.count) characters long", allowed: spoken) }
            return text
        }
        step = TrailStep(region: region, hint: try words("hint"), found: try words("found"))
        let rewardAllowed = "printable text of 1 to \(Self.maximumReward) characters (it is read aloud and shown as a QR code)"
        if let reward = try reader.string("reward", allowed: rewardAllowed) {
            if reward.isEmpty || reward.count > Self.maximumReward {
                throw reader.fail("reward", reward.isEmpty ? "is empty" : "is \(reward.count) characters long", allowed: rewardAllowed)
            }
            if reward.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format }) {
                throw reader.fail("reward", "holds a control character", allowed: rewardAllowed)
            }
            step.reward = reward
        }
        if let box = try reader.bool("box") {
            if box, step.reward != nil {
                throw reader.fail("box", "is true with the step's own reward", allowed: "true (a treasure box's reward, sealed) or a reward of the step's own, not both")
            }
            step.box = box
        }
        let clue = try words("clue")
        let recording = try reader.string("clue_wav", allowed: "the path of a WAV file (PCM, 16-bit)")
        switch (clue, recording) {
        case let (text?, nil): step.clue = .text(text)
        case let (nil, path?): step.clue = .recording(path)
        case (nil, nil): break
        case (.some, .some): throw reader.fail("clue_wav", "is given with clue", allowed: "either clue (text) or clue_wav (a recording)")
        }
    }

    /// What a parent writes for one line (eSpeak NG reads it as it is).
    static let maximumText = 400
    /// A step's reward: read twice at 70 % of a child's pace, and a QR code.
    static let maximumReward = 120
}

extension HunterConfiguration.Treasure: ConfigurationSection {
    static var initial: Self { Self() }
    static var settings: [Setting<Self>] {
        [
            .uuid("uuid", \.uuid),
            .integer("major", \.major, Limits.identifier),
            .integer("minor", \.minor, Limits.identifier),
            .integer("power", \.power, Limits.power, " dBm (RSSI at 1 m)"),
            .integer("interval_ms", \.intervalMilliseconds, Self.intervalRange, " ms"),
            .optionalText("reward", \.reward, allowed: Limits.rewardAllowed, nonEmpty: false, check: Limits.rewardProblem),
        ]
    }
}

extension HunterConfiguration.Web: ConfigurationSection {
    static var initial: Self { Self() }
    static var settings: [Setting<Self>] {
        [
            .flag("enabled", \.enabled),
            .integer("port", \.port, 0...65_535),
        ]
    }
}

/// `tags`: the parent's names and calibrations, one entry per beacon, at most 64.
struct TagList: Decodable {
    static let allowed = "an array of { \"region\": \"UUID:MAJOR:MINOR\", \"name\", \"power\" }, at most 64"
    static let maximum = 64
    var tags: [HunterConfiguration.Tag] = []

    init(from decoder: any Decoder) throws {
        var container = try ObjectReader.array(decoder, allowed: Self.allowed)
        while !container.isAtEnd {
            let index = container.currentIndex
            let tag = try container.decode(TagEntry.self).tag
            let here = decoder.codingPath + [ConfigKey(intValue: index) ?? ConfigKey("\(index)"), ConfigKey("region")]
            if tags.count >= Self.maximum {
                throw ConfigFieldError(path: ObjectReader.path(here), problem: "is tag \(index + 1)", allowed: Self.allowed)
            }
            if tags.contains(where: { $0.key == tag.key }) {
                throw ConfigFieldError(path: ObjectReader.path(here), problem: "names a tag already listed", allowed: "each tag once")
            }
            tags.append(tag)
        }
    }
}

struct TagEntry: Decodable {
    var tag: HunterConfiguration.Tag

    init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, known: ["region", "name", "power"])
        let regionAllowed = "UUID:MAJOR:MINOR, one beacon (what `scan` prints)"
        guard let text = try reader.string("region", allowed: regionAllowed) else {
            throw reader.fail("region", "is missing", allowed: regionAllowed)
        }
        guard let region = RangingOutput.region(text), let major = region.major, let minor = region.minor else {
            throw reader.fail("region", "'\(text)' is not one beacon", allowed: regionAllowed)
        }
        tag = HunterConfiguration.Tag(key: BeaconKey(uuid: region.uuid, major: major, minor: minor))
        let nameAllowed = "a name of 1 to 40 characters"
        if let name = try reader.string("name", allowed: nameAllowed) {
            if name.isEmpty || name.count > 40 { throw reader.fail("name", name.isEmpty ? "is empty" : "is \(name.count) characters long", allowed: nameAllowed) }
            tag.name = name
        }
        tag.power = try reader.int("power", Limits.power, unit: " dBm (RSSI at 1 m)").map { Int8($0) }
    }
}

extension HunterConfiguration.Game: ConfigurationSection {
    static var initial: Self { Self() }
    static var settings: [Setting<Self>] {
        [
            Setting("key") { reader, value in
                guard let text = try reader.string("key", allowed: keyAllowed) else { return }
                do throws(GameKey.TextError) {
                    value.key = try GameKey(text: text)
                } catch let .badCharacter(c) {
                    throw reader.fail("key", "holds '\(c)', not in the key's alphabet", allowed: keyAllowed)
                } catch let .wrongLength(n) {
                    throw reader.fail("key", "has \(n) of the key's 52 characters", allowed: keyAllowed)
                }
            },
            Setting("hunters") { reader, value in
                let allowed = "a list of hunter ids (announce.hunter_id of each hunter), 0 to 65535, or absent for any"
                guard let ids = try reader.nested([Int].self, "hunters") else { return }
                if let bad = ids.first(where: { !Limits.identifier.contains($0) }) {
                    throw reader.fail("hunters", "\(bad) is out of range", allowed: allowed)
                }
                value.hunters = Set(ids.map { UInt16(clamping: $0) })
            },
        ]
    }
}

extension HunterConfiguration.Announce: ConfigurationSection {
    static var initial: Self { Self() }
    static var settings: [Setting<Self>] {
        [
            .integer("hunter_id", \.hunterID, Limits.identifier),
            .number("seconds", \.seconds, 0...3600, " s"),
            .number("reward_timeout", \.rewardTimeout, 1...120, " s"),
        ]
    }
}

/// `ranging`: overrides of every `RangingConfiguration` field, snake_case.
enum RangingSection {
    static var doubles: [(key: String, path: WritableKeyPath<RangingConfiguration, Double>, range: ClosedRange<Double>, unit: String)] {
        [
            ("process_noise", \.processNoise, 0.001...1000, " dB²/s"),
            ("measurement_noise", \.measurementNoise, 0.01...10_000, " dB²"),
            ("innovation_gate", \.innovationGate, 0.5...100, " standard deviations"),
            ("path_loss_exponent", \.pathLossExponent, 0.5...10, ""),
            ("environment_sigma", \.environmentSigma, 0.1...50, " dB"),
            ("calibrated_environment_sigma", \.calibratedEnvironmentSigma, 0.1...50, " dB"),
            ("immediate_edge", \.immediateEdge, 0.01...100, " m"),
            ("near_edge", \.nearEdge, 0.01...1000, " m"),
            ("at_hand_edge", \.atHandEdge, 0.01...100, " m"),
            ("at_hand_window", \.atHandWindow, 0.1...60, " s"),
            ("arrival_margin", \.arrivalMargin, 0...60, " dB"),
            ("at_hand_renewal", \.atHandRenewal, 0...60, " dB"),
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
            ("trend_significance", \.trendSignificance, 0.5...20, ""),
            ("trend_step_margin", \.trendStepMargin, 0...1000, " reading variances"),
            ("trend_colder_significance", \.trendColderSignificance, 0.5...20, ""),
            ("trend_colder_step_margin", \.trendColderStepMargin, 0...1000, " reading variances"),
            ("trend_colder_gap_factor", \.trendColderGapFactor, 1...1_000_000, " median intervals"),
            ("trend_steep_significance", \.trendSteepSignificance, 0.5...20, ""),
            ("trend_steep_slope", \.trendSteepSlope, 0.01...100, " dB/s"),
            ("trend_slope", \.trendSlope, 0.01...100, " dB/s"),
            ("trend_rise_significance", \.trendRiseSignificance, 0.5...1000, ""),
            ("trend_rise_recent_significance", \.trendRiseRecentSignificance, -20...20, ""),
            ("trend_rise_slope", \.trendRiseSlope, 0...100, " dB/s"),
            ("trend_rise_old_significance", \.trendRiseOldSignificance, -20...20, ""),
            ("trend_slope_old_significance", \.trendSlopeOldSignificance, -20...20, ""),
            ("trend_dip_memory", \.trendDipMemory, 0...600, " s"),
            ("independent_reading_rate", \.independentReadingRate, 0.1...1000, " readings/s"),
            ("region_pooling_gate", \.regionPoolingGate, 0...60, " dB"),
            ("region_pooling_deviation", \.regionPoolingDeviation, 0...60, " dB"),
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
            ("trend_step_margin_readings", \.trendStepMarginReadings, 1...100_000),
        ]
    }
    static var ranges: [(key: String, path: WritableKeyPath<RangingConfiguration, ClosedRange<Int>>)] {
        [
            ("plausible_rssi", \.plausibleRSSI),
            ("plausible_measured_power", \.plausibleMeasuredPower),
        ]
    }
    static var keys: [String] { doubles.map(\.key) + ints.map(\.key) + ranges.map(\.key) }
}

extension RangingConfiguration: ConfigurationSection {
    static var initial: RangingConfiguration { .default }
    static var settings: [Setting<RangingConfiguration>] {
        RangingSection.doubles.map { .number($0.key, $0.path, $0.range, $0.unit) }
            + RangingSection.ints.map { .integer($0.key, $0.path, $0.range) }
            + RangingSection.ranges.map { .dBmRange($0.key, $0.path) }
    }

    /// Pairs that must stay ordered: the error names whichever of the two the file set.
    static func check(_ value: RangingConfiguration, _ reader: ObjectReader) throws {
        try ordered(reader, "immediate_edge", value.immediateEdge, "near_edge", value.nearEdge, strict: true)
        try ordered(reader, "minimum_silence", value.minimumSilence, "maximum_silence", value.maximumSilence, strict: false)
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

// MARK: - What a table entry is

/// One key of a section: its name, and how it is read (type- and range-checked) into the
/// section's value.
struct Setting<Root> {
    let key: String
    let read: (ObjectReader, inout Root) throws -> Void

    init(_ key: String, read: @escaping (ObjectReader, inout Root) throws -> Void) {
        self.key = key
        self.read = read
    }

    static func number(_ key: String, _ path: WritableKeyPath<Root, Double>, _ range: ClosedRange<Double>, _ unit: String = "") -> Self {
        Self(key) { reader, value in
            if let number = try reader.double(key, range, unit: unit) { value[keyPath: path] = number }
        }
    }

    /// `range` must lie within `Value`'s own.
    static func integer<Value: FixedWidthInteger>(
        _ key: String, _ path: WritableKeyPath<Root, Value>, _ range: ClosedRange<Int>, _ unit: String = ""
    ) -> Self {
        Self(key) { reader, value in
            if let integer = try reader.int(key, range, unit: unit) { value[keyPath: path] = Value(clamping: integer) }
        }
    }

    /// A non-empty string; `check` returns what is wrong with it (nil: nothing).
    static func text(
        _ key: String, _ path: WritableKeyPath<Root, String>, allowed: String, check: @escaping (String) -> String? = { _ in nil }
    ) -> Self {
        checkedText(key, allowed: allowed, nonEmpty: true, check: check) { $0[keyPath: path] = $1 }
    }

    /// As `text`; nil (the default) when absent.
    static func optionalText(
        _ key: String, _ path: WritableKeyPath<Root, String?>, allowed: String, nonEmpty: Bool = true,
        check: @escaping (String) -> String? = { _ in nil }
    ) -> Self {
        checkedText(key, allowed: allowed, nonEmpty: nonEmpty, check: check) { $0[keyPath: path] = $1 }
    }

    private static func checkedText(
        _ key: String, allowed: String, nonEmpty: Bool, check: @escaping (String) -> String?,
        store: @escaping (inout Root, String) -> Void
    ) -> Self {
        Self(key) { reader, value in
            guard let text = try reader.string(key, allowed: allowed, nonEmpty: nonEmpty) else { return }
            if let problem = check(text) { throw reader.fail(key, problem, allowed: allowed) }
            store(&value, text)
        }
    }

    static func flag(_ key: String, _ path: WritableKeyPath<Root, Bool>) -> Self {
        Self(key) { reader, value in
            if let flag = try reader.bool(key) { value[keyPath: path] = flag }
        }
    }

    static func uuid(_ key: String, _ path: WritableKeyPath<Root, UUID>) -> Self {
        Self(key) { reader, value in
            if let uuid = try reader.uuid(key) { value[keyPath: path] = uuid }
        }
    }

    /// `[LOW, HIGH]` in dBm.
    static func dBmRange(_ key: String, _ path: WritableKeyPath<Root, ClosedRange<Int>>) -> Self {
        Self(key) { reader, value in
            guard reader.has(key) else { return }
            let allowed = "[LOW, HIGH] in dBm, -127 <= LOW <= HIGH <= 20"
            let pair: [Int]
            do {
                pair = try reader.container.decode([Int].self, forKey: ConfigKey(key))
            } catch {
                throw reader.fail(key, "must be two integers", allowed: allowed)
            }
            guard pair.count == 2, pair[0] <= pair[1], Limits.power.contains(pair[0]), Limits.power.contains(pair[1]) else {
                throw reader.fail(key, "\(pair) is not a range", allowed: allowed)
            }
            value[keyPath: path] = pair[0]...pair[1]
        }
    }

    /// One of an enum's raw values.
    static func choice<Value: RawRepresentable & CaseIterable>(_ key: String, _ path: WritableKeyPath<Root, Value>) -> Self
    where Value.RawValue == String {
        Self(key) { reader, value in
            let allowed = Value.allCases.map(\.rawValue).joined(separator: ", ")
            guard let text = try reader.string(key, allowed: allowed) else { return }
            guard let choice = Value(rawValue: text) else { throw reader.fail(key, "'\(text)' is not one of them", allowed: allowed) }
            value[keyPath: path] = choice
        }
    }

    /// A nested object with its own key table.
    static func section<Section: ConfigurationSection>(_ key: String, _ path: WritableKeyPath<Root, Section>) -> Self {
        Self(key) { reader, value in
            if let section = try reader.nested(DecodedSection<Section>.self, key) { value[keyPath: path] = section.value }
        }
    }
}

/// A section decoded through its key table: unknown keys refused, each key read, then the
/// rules between keys.
struct DecodedSection<Value: ConfigurationSection>: Decodable {
    var value = Value.initial

    init(from decoder: any Decoder) throws {
        let settings = Value.settings
        let reader = try ObjectReader(decoder, known: settings.map(\.key))
        for setting in settings { try setting.read(reader, &value) }
        try Value.check(value, reader)
    }
}

// MARK: - Reading one object

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

    /// The key's value as `T` (nil when absent or null), or `problem` when it is another type.
    private func decoded<T: Decodable>(_ type: T.Type, _ key: String, else problem: String, allowed: String) throws -> T? {
        do {
            return try container.decodeIfPresent(T.self, forKey: ConfigKey(key))
        } catch {
            throw fail(key, problem, allowed: allowed)
        }
    }

    func int(_ key: String, _ range: ClosedRange<Int>, unit: String = "") throws -> Int? {
        let allowed = "an integer, " + Limits.text(range) + unit
        let value = try decoded(Int.self, key, else: "must be an integer", allowed: allowed)
        if let value, !range.contains(value) { throw fail(key, "\(value) is out of range", allowed: allowed) }
        return value
    }

    func double(_ key: String, _ range: ClosedRange<Double>, unit: String = "") throws -> Double? {
        let allowed = "a number, " + Limits.text(range) + unit
        let value = try decoded(Double.self, key, else: "must be a number", allowed: allowed)
        if let value, !(value.isFinite && range.contains(value)) {
            throw fail(key, "\(Limits.number(value)) is out of range", allowed: allowed)
        }
        return value
    }

    func string(_ key: String, allowed: String, nonEmpty: Bool = true) throws -> String? {
        let value = try decoded(String.self, key, else: "must be a string", allowed: allowed)
        if nonEmpty, value?.isEmpty == true { throw fail(key, "is empty", allowed: allowed) }
        return value
    }

    func bool(_ key: String) throws -> Bool? {
        try decoded(Bool.self, key, else: "must be true or false", allowed: "true, false")
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

extension ObjectReader {
    /// The array a list section is, or its field's error naming what is allowed.
    static func array(_ decoder: any Decoder, allowed: String) throws -> any UnkeyedDecodingContainer {
        do {
            return try decoder.unkeyedContainer()
        } catch {
            throw ConfigFieldError(path: path(decoder.codingPath), problem: "must be an array", allowed: allowed)
        }
    }
}

struct RegionList: Decodable {
    var regions: [Region] = []

    init(from decoder: any Decoder) throws {
        let allowed = "an array of { \"name\", \"uuid\", \"major\", \"minor\" }"
        var container = try ObjectReader.array(decoder, allowed: allowed)
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
        region = Region(name: RegionID(name), uuid: uuid)
        region.major = try reader.int("major", Limits.identifier).map { UInt16($0) }
        region.minor = try reader.int("minor", Limits.identifier).map { UInt16($0) }
        if region.minor != nil, region.major == nil {
            throw reader.fail("minor", "needs a major", allowed: "a minor only together with a major")
        }
    }
}

