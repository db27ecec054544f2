import Foundation
import Glibc
import Ranging
import Testing
import TestSupport
import Voice

@testable import PirateHunter

private func decode(_ json: String, file: String = "hunter.json") throws(CLIError) -> HunterConfiguration {
    try HunterConfiguration.decode(Array(json.utf8), file: file)
}

/// The CLIError a bad file gives (fails the test when it decodes).
private func failure(_ json: String) -> CLIError? {
    do {
        _ = try decode(json)
        Issue.record("decoded without an error: \(json)")
        return nil
    } catch {
        return error
    }
}

/// The flags as a command gets them: parsed and checked by `command`'s row of the table.
func commandLineFlags(_ arguments: [String], for command: CommandSpec = Commands.hunt) throws(CLIError) -> ConfigurationFlags {
    guard case let .run(parsed) = try ParsedArguments.parse(arguments, for: command) else {
        throw CLIError(.software, "\(command.name) \(arguments): help, not a run")
    }
    return parsed.flags
}

/// The configuration as a command loads it: its row parses the flags, the file is read under them.
private func load(_ arguments: [String], for command: CommandSpec = Commands.hunt) throws(CLIError) -> HunterConfiguration {
    try HunterConfiguration.load(flags: commandLineFlags(arguments, for: command), environment: [:])
}

@Suite struct ConfigurationDefaultsTests {
    @Test func anEmptyObjectGivesEveryDocumentedDefault() throws {
        let configuration = try decode("{}")
        #expect(configuration.file == "hunter.json")
        #expect(configuration.transport == .kernel(adapter: nil))
        #expect(configuration.regions() == [Region(name: "treasure", uuid: HunterConfiguration.defaultUUID)])
        #expect(HunterConfiguration.defaultUUID.uuidString == "50495241-5445-2D48-554E-544552000000")
        #expect(configuration.rangingConfiguration() == RangingConfiguration.default)
        #expect(configuration.voice.language == "en-family")
        #expect(configuration.voice.parameters == SpeechParameters(rate: 175, pitch: 50, range: 50, volume: 100))
        #expect(configuration.audio.device == "auto")
        #expect(configuration.audio.volumeDB == 0)
        let hunt = configuration.huntConfiguration()
        #expect(hunt.region == "treasure")
        #expect(hunt.foundHold == 0.5 && hunt.trendInterval == 6 && hunt.trendQuietAfterLine == 3 && hunt.pendingLifetime == 4)
        #expect(configuration.record == nil)
        #expect(configuration.json == false)
        #expect(configuration.treasure.uuid == HunterConfiguration.defaultUUID)
        #expect(configuration.treasure.major == 1 && configuration.treasure.minor == 1)
        #expect(configuration.treasure.power == -59)
        #expect(configuration.treasure.intervalMilliseconds == 100)
        #expect(configuration.treasure.intervalUnits == 0x00A0)
        #expect(configuration.treasure.reward == nil)
    }

    @Test func nullMeansTheDefault() throws {
        let configuration = try decode(#"{"transport": null, "voice": {"rate": null}, "record": null, "treasure": null}"#)
        #expect(configuration.transport == .kernel(adapter: nil))
        #expect(configuration.voice.parameters.rate == 175)
        #expect(configuration.record == nil)
    }

    @Test func aMissingDefaultFileMeansDefaultsButAMissingExplicitOneExits66() throws {
        let scratch = try Scratch("config")
        let missing = scratch.path + "/hunter.json"
        #expect(try ConfigurationFile.read(missing, explicit: false) == nil)
        #expect(throws: CLIError.self) { try ConfigurationFile.read(missing, explicit: true) }
        do {
            _ = try load(["--config", missing])
            Issue.record("a missing --config file loaded")
        } catch {
            #expect(error.code == .noInput)
            #expect(error.message == "\(missing): no such configuration file")
        }
    }

    @Test func aDirectoryIsNotAConfigurationFile() throws {
        let scratch = try Scratch("config")
        do {
            _ = try ConfigurationFile.read(scratch.path, explicit: true)
            Issue.record("a directory was read")
        } catch {
            #expect(error.code == .noInput)
            #expect(error.message.contains("is a directory"))
        }
    }

    @Test(.enabled(if: getuid() != 0, "root reads any file"))
    func anUnreadableFileExits77() throws {
        let scratch = try Scratch("config")
        let file = try scratch.write("hunter.json", "{}")
        chmod(file, 0)
        do {
            _ = try ConfigurationFile.read(file, explicit: false)
            Issue.record("an unreadable file was read")
        } catch {
            #expect(error.code == .noPermission)
        }
    }

    @Test func theDefaultDirectoriesComeFromSystemdThenXDGThenHome() throws {
        var a = HunterConfiguration()
        a.resolveDirectories(environment: ["CACHE_DIRECTORY": "/var/cache/pirate-hunter", "HOME": "/root"], executablePath: nil)
        #expect(a.voiceConfiguration().cacheDirectory == "/var/cache/pirate-hunter")
        var b = HunterConfiguration()
        b.resolveDirectories(environment: ["XDG_CACHE_HOME": "/home/p/.cache", "HOME": "/home/p"], executablePath: nil)
        #expect(b.voiceConfiguration().cacheDirectory == "/home/p/.cache/pirate-hunter")
        var c = HunterConfiguration()
        c.resolveDirectories(environment: ["HOME": "/home/p"], executablePath: nil)
        #expect(c.voiceConfiguration().cacheDirectory == "/home/p/.cache/pirate-hunter")
        var d = HunterConfiguration()
        d.resolveDirectories(environment: [:], executablePath: nil)
        #expect(d.voiceConfiguration().cacheDirectory == nil)
        // "" in the file switches the cache off, whatever the environment says.
        var e = try decode(#"{"voice": {"cache_directory": ""}}"#)
        e.resolveDirectories(environment: ["CACHE_DIRECTORY": "/var/cache/pirate-hunter"], executablePath: nil)
        #expect(e.voiceConfiguration().cacheDirectory == nil)
    }

    @Test func installedVoicesAreFoundNextToTheExecutable() throws {
        let scratch = try Scratch("config")
        try FileManager.default.createDirectory(
            atPath: scratch.path + "/share/pirate-hunter/voices/lines", withIntermediateDirectories: true)
        var configuration = HunterConfiguration()
        configuration.resolveDirectories(environment: [:], executablePath: scratch.path + "/bin/pirate-hunter")
        #expect(configuration.voiceConfiguration().voicesDirectory == scratch.path + "/share/pirate-hunter/voices")
        var explicit = try decode(#"{"voice": {"voices_directory": "/opt/voices"}}"#)
        explicit.resolveDirectories(environment: [:], executablePath: scratch.path + "/bin/pirate-hunter")
        #expect(explicit.voiceConfiguration().voicesDirectory == "/opt/voices")
    }
}

@Suite struct ConfigurationFileTests {
    static let full = """
        {
          "transport": "serial:/dev/ttyAMA0@921600",
          "regions": [
            { "name": "chest", "uuid": "e2c56db5-dffb-48d2-b060-d0f5a71096e0", "major": 7 },
            { "name": "map", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 7, "minor": 2 },
            { "uuid": "50495241-5445-2D48-554E-544552000000" }
          ],
          "voice": { "language": "ja", "voices_directory": "/opt/voices", "cache_directory": "/var/cache/ph",
                     "rate": 140, "pitch": 30, "range": 70, "volume": 150 },
          "audio": { "device": "default:CARD=Headphones", "volume_db": -6.5 },
          "ranging": {
            "process_noise": 3, "measurement_noise": 36, "innovation_gate": 2.5, "plausible_rssi": [-100, -5],
            "path_loss_exponent": 2.2, "environment_sigma": 9, "plausible_measured_power": [-90, -30],
            "immediate_edge": 0.7, "near_edge": 4, "proximity_hysteresis": 3, "proximity_dwell": 2,
            "proximity_minimum_packets": 4, "false_exits_per_hour": 0.1, "false_unknowns_per_hour": 0.01,
            "minimum_silence": 4, "maximum_silence": 20, "enter_packets": 3, "enter_window": 2,
            "confirm_packets": 4, "confirm_window": 4, "initial_state_timeout": 5, "nearest_margin": 3,
            "nearest_dwell": 2.5, "trend_window": 10, "trend_slope": 0.5, "trend_reversal_factor": 2,
            "trend_minimum_interval": 5, "range_interval": 0.5
          },
          "hunt": { "found_hold": 2, "trend_interval": 8, "trend_quiet_after_line": 4, "pending_lifetime": 5 },
          "record": "/var/log/pirate-hunter/hunt.btsnoop",
          "json": true,
          "treasure": { "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 65535, "minor": 0, "power": -62,
                        "interval_ms": 250, "reward": "ARRR-26 ゴールド" }
        }
        """

    @Test func everyFieldOfAFullFileReachesWhatThePiecesTake() throws {
        let configuration = try decode(Self.full)
        let uuid = try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
        #expect(configuration.transport == .serial(path: "/dev/ttyAMA0", baud: 921_600))
        #expect(configuration.regions() == [
            Region(name: "chest", uuid: uuid, major: 7),
            Region(name: "map", uuid: uuid, major: 7, minor: 2),
            Region(name: "50495241-5445-2D48-554E-544552000000", uuid: HunterConfiguration.defaultUUID),
        ])

        var ranging = RangingConfiguration()
        ranging.processNoise = 3
        ranging.measurementNoise = 36
        ranging.innovationGate = 2.5
        ranging.plausibleRSSI = -100 ... -5
        ranging.pathLossExponent = 2.2
        ranging.environmentSigma = 9
        ranging.plausibleMeasuredPower = -90 ... -30
        ranging.immediateEdge = 0.7
        ranging.nearEdge = 4
        ranging.proximityHysteresis = 3
        ranging.proximityDwell = 2
        ranging.proximityMinimumPackets = 4
        ranging.falseExitsPerHour = 0.1
        ranging.falseUnknownsPerHour = 0.01
        ranging.minimumSilence = 4
        ranging.maximumSilence = 20
        ranging.enterPackets = 3
        ranging.enterWindow = 2
        ranging.confirmPackets = 4
        ranging.confirmWindow = 4
        ranging.initialStateTimeout = 5
        ranging.nearestMargin = 3
        ranging.nearestDwell = 2.5
        ranging.trendWindow = 10
        ranging.trendSlope = 0.5
        ranging.trendReversalFactor = 2
        ranging.trendMinimumInterval = 5
        ranging.rangeInterval = 0.5
        #expect(configuration.rangingConfiguration() == ranging)

        let voice = configuration.voiceConfiguration()
        #expect(voice.language == "ja")
        #expect(voice.voicesDirectory == "/opt/voices")
        #expect(voice.cacheDirectory == "/var/cache/ph")
        #expect(voice.parameters == SpeechParameters(rate: 140, pitch: 30, range: 70, volume: 150))

        let playback = configuration.playbackConfiguration()
        #expect(playback.device == "default:CARD=Headphones")
        #expect(playback.volumeDB == -6.5)

        let hunt = configuration.huntConfiguration()
        #expect(hunt.region == "chest")
        #expect(hunt.foundHold == 2 && hunt.trendInterval == 8 && hunt.trendQuietAfterLine == 4 && hunt.pendingLifetime == 5)
        #expect(configuration.record == "/var/log/pirate-hunter/hunt.btsnoop")
        #expect(configuration.json)
        #expect(configuration.treasure.uuid == uuid)
        #expect(configuration.treasure.major == 65535 && configuration.treasure.minor == 0)
        #expect(configuration.treasure.power == -62)
        #expect(configuration.treasure.intervalMilliseconds == 250)
        #expect(configuration.treasure.intervalUnits == 400)
        #expect(configuration.treasure.reward == "ARRR-26 ゴールド")
    }

    /// A new RangingConfiguration field must get its key (and docs) too.
    @Test func everyRangingFieldHasASnakeCaseKey() {
        let fields = Mirror(reflecting: RangingConfiguration()).children.compactMap(\.label)
        let expected = Set(fields.map { name in
            var out = ""
            for c in name.replacingOccurrences(of: "RSSI", with: "Rssi") {
                if c.isUppercase { out += "_" + c.lowercased() } else { out.append(c) }
            }
            return out
        })
        #expect(fields.count == 50)
        #expect(Set(RangingSection.keys) == expected)
    }

    @Test func theDocumentationNamesEveryKey() throws {
        let docs = try String(contentsOfFile: Repository.path + "/docs/configuration.md", encoding: .utf8)
        let keys = HunterConfiguration.keys + RangingSection.keys
            + ["name", "uuid", "major", "minor", "language", "voices_directory", "cache_directory", "rate", "pitch",
               "range", "volume", "device", "volume_db", "found_hold", "trend_interval", "trend_quiet_after_line",
               "pending_lifetime", "power", "interval_ms", "reward", "hunter_id", "seconds", "reward_timeout", "key", "hunters", "box", "enabled", "port"]
        for key in keys {
            #expect(docs.contains("`\(key)`"), "docs/configuration.md does not document `\(key)`")
        }
    }

    @Test func theDocumentationsExamplesAreValid() throws {
        let docs = try String(contentsOfFile: Repository.path + "/docs/configuration.md", encoding: .utf8)
        let blocks = docs.components(separatedBy: "```json\n").dropFirst().compactMap { $0.components(separatedBy: "```").first }
        #expect(blocks.count == 2)
        for block in blocks {
            _ = try decode(block, file: "docs/configuration.md")
        }
    }

    @Test(arguments: ["config/hunter.example.json", "config/treasure.example.json"])
    func theInstalledExampleFilesAreValid(_ name: String) throws {
        let path = Repository.path + "/" + name
        let bytes = try #require(try ConfigurationFile.read(path, explicit: true))
        let configuration = try HunterConfiguration.decode(bytes, file: path)
        #expect(configuration.file == path)
    }

    @Test(arguments: [
        ("auto", TransportSpec.kernel(adapter: nil)), ("hci0", .kernel(adapter: 0)), ("hci12", .kernel(adapter: 12)),
        ("simulator", .simulator),
        ("serial:/dev/ttyAMA0", .serial(path: "/dev/ttyAMA0", baud: 115_200)),
        ("serial:/dev/ttyUSB0@3000000", .serial(path: "/dev/ttyUSB0", baud: 3_000_000)),
        ("unix:/run/h4.sock", .unix(path: "/run/h4.sock")),
    ])
    func transportsParse(_ text: String, _ expected: TransportSpec) throws {
        #expect(TransportSpec(validating: text) == expected)
        #expect(try decode(#"{"transport": "\#(text)"}"#).transport == expected)
    }

    @Test(arguments: ["", "hci", "hci-1", "hcix", "HCI0", "serial:", "serial:/dev/ttyS0@1234", "serial:ttyS0", "unix:", "usb", "hci0 "])
    func badTransportsAreRefused(_ text: String) {
        #expect(TransportSpec(validating: text) == nil)
    }
}

@Suite struct ConfigurationErrorTests {
    /// (file content, the exact line it must give)
    static let cases: [(String, String)] = [
        (#"{"transport": "bt0"}"#,
         "hunter.json: transport: 'bt0' is not a transport; allowed: \(TransportSpec.allowed)"),
        (#"{"transport": 0}"#, "hunter.json: transport: must be a string; allowed: \(TransportSpec.allowed)"),
        (#"{"regions": []}"#, #"hunter.json: regions: is empty; allowed: one or more { "name", "uuid", "major", "minor" }"#),
        (#"{"regions": {}}"#, #"hunter.json: regions: must be an array; allowed: an array of { "name", "uuid", "major", "minor" }"#),
        (#"{"regions": [{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}, {"uuid": "nope"}]}"#,
         "hunter.json: regions[1].uuid: 'nope' is not a UUID; allowed: a UUID, 8-4-4-4-12 hex digits (E2C56DB5-DFFB-48D2-B060-D0F5A71096E0)"),
        (#"{"regions": [{"name": "x"}]}"#, "hunter.json: regions[0].uuid: is missing; allowed: a UUID, 8-4-4-4-12 hex digits"),
        (#"{"regions": [{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 65536}]}"#,
         "hunter.json: regions[0].major: 65536 is out of range; allowed: an integer, 0 to 65535"),
        (#"{"regions": [{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "minor": 3}]}"#,
         "hunter.json: regions[0].minor: needs a major; allowed: a minor only together with a major"),
        (#"{"regions": [{"name": "a", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}, {"name": "a", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}]}"#,
         "hunter.json: regions[1].name: 'a' names two regions; allowed: a name used once"),
        (#"{"voice": {"rate": 500}}"#, "hunter.json: voice.rate: 500 is out of range; allowed: an integer, 80 to 450 words per minute"),
        (#"{"voice": {"pitch": "high"}}"#, "hunter.json: voice.pitch: must be an integer; allowed: an integer, 0 to 100"),
        (#"{"voice": {"volume": 1.5}}"#, "hunter.json: voice.volume: must be an integer; allowed: an integer, 0 to 200"),
        (#"{"voice": {"language": "en pirate"}}"#,
         "hunter.json: voice.language: 'en pirate' is not a line pack name; allowed: a line pack name: en-family, en-pirate, ja (a file <voices_directory>/lines/NAME.json)"),
        (#"{"voice": 3}"#,
         "hunter.json: voice: must be a JSON object; allowed: an object with keys language, voices_directory, cache_directory, rate, pitch, range, volume"),
        (#"{"audio": {"volume_db": 20}}"#, "hunter.json: audio.volume_db: 20 is out of range; allowed: a number, -60 to 12 dB"),
        (#"{"audio": {"device": ""}}"#,
         "hunter.json: audio.device: is empty; allowed: auto or an ALSA device name: default, plughw:CARD=Device,DEV=0, sysdefault:CARD=vc4hdmi0..."),
        (#"{"ranging": {"near_edge": 0.3}}"#,
         "hunter.json: ranging.near_edge: 0.3 is below immediate_edge (0.5); allowed: a value with immediate_edge less than near_edge"),
        (#"{"ranging": {"immediate_edge": 5}}"#,
         "hunter.json: ranging.immediate_edge: 5 is not less than near_edge (3); allowed: a value with immediate_edge less than near_edge"),
        (#"{"ranging": {"maximum_silence": 2}}"#,
         "hunter.json: ranging.maximum_silence: 2 is below minimum_silence (3); allowed: a value with minimum_silence at most maximum_silence"),
        (#"{"ranging": {"plausible_rssi": [-1, -110]}}"#,
         "hunter.json: ranging.plausible_rssi: [-1, -110] is not a range; allowed: [LOW, HIGH] in dBm, -127 <= LOW <= HIGH <= 20"),
        (#"{"ranging": {"plausible_rssi": "-110..-1"}}"#,
         "hunter.json: ranging.plausible_rssi: must be two integers; allowed: [LOW, HIGH] in dBm, -127 <= LOW <= HIGH <= 20"),
        (#"{"ranging": {"enter_packets": 0}}"#, "hunter.json: ranging.enter_packets: 0 is out of range; allowed: an integer, 1 to 100"),
        (#"{"ranging": {"process_noise": 0}}"#,
         "hunter.json: ranging.process_noise: 0 is out of range; allowed: a number, 0.001 to 1000 dB²/s"),
        (#"{"hunt": {"found_hold": -1}}"#, "hunter.json: hunt.found_hold: -1 is out of range; allowed: a number, 0.5 to 60 s"),
        (#"{"json": "yes"}"#, "hunter.json: json: must be true or false; allowed: true, false"),
        (#"{"record": ""}"#, "hunter.json: record: is empty; allowed: a file path for the btsnoop capture"),
        (#"{"treasure": {"uuid": "E2C56DB5-DFFB-48D2-B060"}}"#,
         "hunter.json: treasure.uuid: 'E2C56DB5-DFFB-48D2-B060' is not a UUID; allowed: a UUID, 8-4-4-4-12 hex digits (E2C56DB5-DFFB-48D2-B060-D0F5A71096E0)"),
        (#"{"treasure": {"major": -1}}"#, "hunter.json: treasure.major: -1 is out of range; allowed: an integer, 0 to 65535"),
        (#"{"treasure": {"minor": 70000}}"#, "hunter.json: treasure.minor: 70000 is out of range; allowed: an integer, 0 to 65535"),
        (#"{"treasure": {"power": 21}}"#,
         "hunter.json: treasure.power: 21 is out of range; allowed: an integer, -127 to 20 dBm (RSSI at 1 m)"),
        (#"{"treasure": {"interval_ms": 20}}"#,
         "hunter.json: treasure.interval_ms: 20 is out of range; allowed: an integer, 100 to 10240 ms"),
        (#"{"treasure": {"reward": "a coupon code far too long to fit"}}"#,
         "hunter.json: treasure.reward: is 33 bytes long; allowed: \(Limits.rewardAllowed)"),
        (#"{"treasure": {"reward": "bad\u0007bell"}}"#,
         "hunter.json: treasure.reward: holds a control character; allowed: \(Limits.rewardAllowed)"),
        (#"{"treasure": {"reward": "two  spaces"}}"#,
         "hunter.json: treasure.reward: holds something a hunter would not print (a private-use character, or a leading, trailing or double space); allowed: \(Limits.rewardAllowed)"),
        (#"[1, 2]"#, "hunter.json: top level: must be a JSON object; allowed: an object with keys \(HunterConfiguration.keys.joined(separator: ", "))"),
    ]

    @Test(arguments: 0..<cases.count)
    func anInvalidFieldIsNamedWithWhatIsAllowedAndExits78(_ index: Int) throws {
        let (json, expected) = Self.cases[index]
        let error = try #require(failure(json))
        #expect(error.code == .config)
        #expect(error.message == expected)
        #expect(!error.message.contains("\n"))
    }

    @Test(arguments: [
        (#"{"transprot": "hci0"}"#, "hunter.json: transprot: unknown key; allowed: transport, regions, voice, audio, ranging, hunt, record, json, treasure, announce, game, web, tags, button"),
        (#"{"voice": {"rat": 150}}"#, "hunter.json: voice.rat: unknown key; allowed: language, voices_directory, cache_directory, rate, pitch, range, volume"),
        (#"{"regions": [{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "majr": 1}]}"#,
         "hunter.json: regions[0].majr: unknown key; allowed: name, uuid, major, minor"),
        // Concatenated: an interpolation in @Test's arguments crashes Swift 6.0.3's type checker.
        (#"{"ranging": {"nearEdge": 3}}"#,
         "hunter.json: ranging.nearEdge: unknown key; allowed: " + RangingSection.keys.joined(separator: ", ")),
        (#"{"treasure": {"interval": 100}}"#,
         "hunter.json: treasure.interval: unknown key; allowed: uuid, major, minor, power, interval_ms, reward"),
    ])
    func anUnknownKeyIsAnErrorNamingIt(_ json: String, _ expected: String) throws {
        let error = try #require(failure(json))
        #expect(error.code == .config)
        #expect(error.message == expected)
    }

    @Test(arguments: [
        ("{\n  \"transport\": \"hci0\"\n  \"json\": true\n}", "hunter.json: line 3, column 3: not valid JSON: expected ',' or '}', found '\"'"),
        ("{\n  \"json\": tru\n}", "hunter.json: line 2, column 11: not valid JSON: expected true"),
        ("{\n  \"record\": \"/tmp/x\n}", "hunter.json: line 2, column 20: not valid JSON: string not closed before the end of the line"),
        ("{\"json\": true} x", "hunter.json: line 1, column 16: not valid JSON: unexpected text after the JSON value"),
        ("", "hunter.json: line 1, column 1: not valid JSON: expected a value, found the end of the file"),
        ("# comment\n{}", "hunter.json: line 1, column 1: not valid JSON: expected a value, found '#'"),
        ("{\n  \"voice\": { \"rate\": 150,\n    \"rate\": 160 }\n}", "hunter.json: line 3, column 5: not valid JSON: key 'rate' appears twice in one object"),
        ("{\"json\": true,}", "hunter.json: line 1, column 15: not valid JSON: trailing comma before '}'"),
    ])
    func notJSONExits78NamingTheLine(_ text: String, _ expected: String) throws {
        let error = try #require(failure(text))
        #expect(error.code == .config)
        #expect(error.message == expected)
    }

    @Test(arguments: [
        // A second key anywhere: top level, a section, a region in the array.
        ("{\"json\": true, \"json\": false}", "hunter.json: line 1, column 16: not valid JSON: key 'json' appears twice in one object"),
        ("{\"regions\": [{\"uuid\": \"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0\",\n  \"uuid\": \"x\"}]}",
         "hunter.json: line 2, column 3: not valid JSON: key 'uuid' appears twice in one object"),
        // Columns count characters, not UTF-8 bytes.
        (#"{"treasure": {"reward": "ゴールド", "reward": "x"}}"#,
         "hunter.json: line 1, column 33: not valid JSON: key 'reward' appears twice in one object"),
        ("{\"ranging\": {\"near_edge\": 3,}}", "hunter.json: line 1, column 29: not valid JSON: trailing comma before '}'"),
        ("{\"regions\": [{\"uuid\": \"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0\"},]}",
         "hunter.json: line 1, column 63: not valid JSON: trailing comma before ']'"),
    ])
    func whatJSONDecoderTakesSilentlyIsRefusedWithItsPlace(_ text: String, _ expected: String) throws {
        let error = try #require(failure(text))
        #expect(error.code == .config)
        #expect(error.message == expected)
    }

    /// Why JSONSyntax exists: the toolchain's JSONDecoder (swift-foundation) says only
    /// "The given data was not valid JSON." with no line or column, keeps the first of two
    /// equal keys and takes a trailing comma. When this fails, the decoder has learnt one of
    /// these and JSONSyntax can shrink.
    @Test func theToolchainsJSONDecoderSaysNeitherWhereNorAboutTwins() throws {
        struct Probe: Decodable { var rate: Int }
        do {
            _ = try JSONDecoder().decode(Probe.self, from: Data("{\n  \"rate\": tru\n}".utf8))
            Issue.record("decoded")
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.debugDescription == "The given data was not valid JSON.")
            #expect(context.underlyingError == nil)
        }
        #expect(try JSONDecoder().decode(Probe.self, from: Data(#"{"rate": 150, "rate": 160}"#.utf8)).rate == 150)
        #expect(try JSONDecoder().decode(Probe.self, from: Data(#"{"rate": 150,}"#.utf8)).rate == 150)
    }

    @Test func theSyntaxLocatorAcceptsValidJSON() {
        #expect(JSONSyntax.firstError(in: Array(ConfigurationFileTests.full.utf8)) == nil)
        #expect(JSONSyntax.firstError(in: Array(#" [1, -2.5e3, "a\"\u00e9", {"k": [true, false, null]}] "#.utf8)) == nil)
        #expect(JSONSyntax.firstError(in: Array("[1,]".utf8))?.problem == "trailing comma before ']'")
        #expect(JSONSyntax.firstError(in: Array("[1 2]".utf8)) == JSONSyntax.Failure(line: 1, column: 4, problem: "expected ',' or ']', found '2'"))
    }
}

@Suite struct ConfigurationFlagTests {
    @Test func flagsOverrideTheFile() throws {
        let scratch = try Scratch("config")
        let file = try scratch.write("hunter.json", """
            { "transport": "hci0", "regions": [{ "name": "chest", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0" }],
              "audio": { "device": "plughw:1,0", "volume_db": -3 }, "voice": { "rate": 150, "language": "ja" },
              "treasure": { "major": 5, "reward": "OLD" } }
            """)
        let configuration = try load(
            ["--config", file, "--hci", "unix:/tmp/h4", "--region", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1",
             "--region", "50495241-5445-2D48-554E-544552000000:2:3", "--device", "null", "--volume", "-12",
             "--lang", "en-pirate", "--voice-dir", "/v", "--cache-dir", "/c", "--record", "/r.btsnoop", "--json"])
        // The treasure's flags are the treasure box's (and the demo's), over the same file.
        let treasure = try load(["--config", file, "--minor", "9", "--power", "-70", "--interval", "200", "--reward", "NEW"],
                                for: Commands.treasure).treasure
        #expect(configuration.file == file)
        #expect(configuration.transport == .unix(path: "/tmp/h4"))
        let uuid = try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
        #expect(configuration.regions() == [
            Region(name: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1", uuid: uuid, major: 1),
            Region(name: "50495241-5445-2D48-554E-544552000000:2:3", uuid: HunterConfiguration.defaultUUID, major: 2, minor: 3),
        ])
        #expect(configuration.huntConfiguration().region == "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1")
        #expect(configuration.playbackConfiguration().device == "null")
        #expect(configuration.playbackConfiguration().volumeDB == -12)
        let voice = configuration.voiceConfiguration()
        #expect(voice.language == "en-pirate")
        #expect(voice.voicesDirectory == "/v")
        #expect(voice.cacheDirectory == "/c")
        #expect(voice.parameters.rate == 150)  // from the file: no flag for it
        #expect(configuration.record == "/r.btsnoop")
        #expect(configuration.json)
        #expect(treasure.major == 5)  // from the file
        #expect(treasure.minor == 9)
        #expect(treasure.power == -70)
        #expect(treasure.intervalMilliseconds == 200)
        #expect(treasure.reward == "NEW")
    }

    @Test func anUnknownLanguageIsNamedWithThePacksThatExist() throws {
        let scratch = try Scratch("config")
        let voices = Repository.path + "/voices"
        let file = try scratch.write("hunter.json", #"{ "voice": { "language": "fr", "voices_directory": "\#(voices)" } }"#)
        do {
            _ = try load(["--config", file])
            Issue.record("loaded")
        } catch {
            #expect(error.code == .config)
            #expect(error.message == "\(file): voice.language: no line pack 'fr' in \(voices)/lines; allowed: en-family, en-pirate, ja")
        }
        do {
            _ = try load(["--config", file, "--lang", "klingon"])
            Issue.record("loaded")
        } catch {
            #expect(error.code == .usage)
            #expect(error.message == "--lang: no line pack 'klingon' in \(voices)/lines; allowed: en-family, en-pirate, ja")
        }
        let fixed = try load(["--config", file, "--lang", "ja"])
        #expect(fixed.voiceConfiguration().language == "ja")
        #expect(fixed.voiceConfiguration().voicesDirectory == voices)
    }

    @Test func withoutFlagsTheFileStands() throws {
        let scratch = try Scratch("config")
        let file = try scratch.write("hunter.json", #"{ "transport": "hci1", "audio": { "device": "plughw:1,0" } }"#)
        let configuration = try load(["--config", file])
        #expect(configuration.transport == .kernel(adapter: 1))
        #expect(configuration.audio.device == "plughw:1,0")
        #expect(!configuration.json)
    }

    @Test func anInvalidFileFailsEvenWhenAFlagWouldOverrideTheField() throws {
        let scratch = try Scratch("config")
        let file = try scratch.write("hunter.json", #"{ "transport": "bogus" }"#)
        do {
            _ = try load(["--config", file, "--hci", "hci0"])
            Issue.record("loaded")
        } catch {
            #expect(error.code == .config)
            #expect(error.message.hasPrefix("\(file): transport: 'bogus' is not a transport"))
        }
    }

    @Test(arguments: [
        // Concatenated: an interpolation in @Test's arguments crashes Swift 6.0.3's type checker.
        (["--hci", "bt0"], "--hci: 'bt0' is not a transport; allowed: " + TransportSpec.allowed),
        (["--region", "nope"], "--region: 'nope' is not UUID[:MAJOR[:MINOR]] (major and minor 0-65535)"),
        (["--region", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:70000"], "--region: 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:70000' is not UUID[:MAJOR[:MINOR]] (major and minor 0-65535)"),
        (["--region", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--region", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"],
         "--region: 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0' is given twice"),
        (["--region", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1", "--region", "e2c56db5-dffb-48d2-b060-d0f5a71096e0:001"],
         "--region: 'e2c56db5-dffb-48d2-b060-d0f5a71096e0:001' is given twice"),
        (["--volume", "loud"], "--volume: 'loud' is not a volume; allowed: -60 to 12 dB"),
        (["--device", ""], "--device: needs a non-empty value"),
        (["--config"], "--config needs a value (--config FILE)"),
    ])
    func aBadFlagIsAUsageError(_ arguments: [String], _ expected: String) {
        do {
            _ = try load(arguments)
            Issue.record("loaded")
        } catch {
            #expect(error.code == .usage)
            #expect(error.message == expected)
        }
    }
}

@Suite struct TreasureFlagTests {
    @Test(arguments: [
        (["--power", "30"], "--power (treasure.power): '30' is out of range; allowed: -127 to 20"),
        (["--power", "-128"], "--power (treasure.power): '-128' is out of range; allowed: -127 to 20"),
        (["--major", "65536"], "--major (treasure.major): '65536' is out of range; allowed: 0 to 65535"),
        (["--minor", "-1"], "--minor (treasure.minor): '-1' is out of range; allowed: 0 to 65535"),
        (["--interval", "50"], "--interval (treasure.interval_ms): '50' is out of range; allowed: 100 to 10240"),
        (["--uuid", "x"], "--uuid (treasure.uuid): 'x' is not a UUID; allowed: 8-4-4-4-12 hex digits"),
        (["--hunter-id", "65536"], "--hunter-id (announce.hunter_id): '65536' is out of range; allowed: 0 to 65535"),
    ])
    func aBadTreasureValueIsAConfigurationErrorNamingTheField(_ arguments: [String], _ expected: String) {
        do {
            _ = try load(arguments, for: arguments[0] == "--hunter-id" ? Commands.hunt : Commands.treasure)
            Issue.record("loaded")
        } catch {
            #expect(error.code == .config)
            #expect(error.message == expected)
        }
    }

    @Test func announceSectionAndFlag() throws {
        let scratch = try Scratch("config")
        let path = try scratch.write("hunter.json", #"{"announce": {"hunter_id": 7, "seconds": 30, "reward_timeout": 5}}"#)
        var configuration = try load(["--config", path])
        #expect(configuration.announce == HunterConfiguration.Announce(hunterID: 7, seconds: 30, rewardTimeout: 5))
        configuration = try load(["--config", path, "--hunter-id", "9"])
        #expect(configuration.announce.hunterID == 9)
        let bad = try scratch.write("bad.json", #"{"announce": {"hunter_id": 70000}}"#)
        #expect(throws: CLIError.self) { try load(["--config", bad]) }
    }
}

@Suite struct JournalStreamTests {
    @Test func onlyTheStreamSystemdConnectedCountsAsTheJournal() throws {
        let scratch = try Scratch("config")
        let file = try scratch.write("stream", "")
        let fd = open(file, O_WRONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        var info = stat()
        try #require(fstat(fd, &info) == 0)
        #expect(JournalStream.isStandardError(environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"], descriptor: fd))
        #expect(!JournalStream.isStandardError(environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino + 1)"], descriptor: fd))
        #expect(!JournalStream.isStandardError(environment: ["JOURNAL_STREAM": "garbage"], descriptor: fd))
        #expect(!JournalStream.isStandardError(environment: [:], descriptor: fd))
    }

    @Test func oneEventIsOneLine() {
        #expect(JournalStream.oneLine("say: arrr\nnext") == "say: arrr next")
        #expect(JournalStream.oneLine("a\tb\r\nc") == "a b  c")
    }

    @Test func theHunterSetupCarriesTheConfiguration() throws {
        let configuration = try decode(ConfigurationFileTests.full)
        let setup = configuration.hunterSetup()
        #expect(setup.transport == .serial(path: "/dev/ttyAMA0", baud: 921_600))
        #expect(setup.regions == configuration.regions())
        #expect(setup.ranging == configuration.rangingConfiguration())
        #expect(setup.json && setup.record == "/var/log/pirate-hunter/hunt.btsnoop")
        #expect(setup.hunt == configuration.huntConfiguration())
        #expect(setup.voice?.language == "ja" && setup.voice?.parameters.rate == 140)
        #expect(setup.playback?.device == "default:CARD=Headphones" && setup.playback?.volumeDB == -6.5)
        let quiet = configuration.hunterSetup(quiet: true)
        #expect(quiet.hunt == nil && quiet.voice == nil && quiet.playback == nil)
        #expect(quiet.regions == configuration.regions())
    }
}
