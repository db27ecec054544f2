#if canImport(Glibc)
import Glibc
#endif
import Audio
import FoundationEssentials
import Hunt
import Radio
import Ranging
import Voice

/// `pirate-hunter hunt`: the appliance. `pirate-hunter demo`: the same pipeline on a
/// simulated hunt, heard through the default ALSA device or written to demo.wav.
enum HuntCommand {
    struct Flags {
        var transport = "auto"
        var regions: [Region] = []
        var device = "default"
        var json = false
        var record: String?
        var voiceDirectory: String?
        var language = "en-pirate"
        var cacheDirectory: String?
        var quiet = false
    }

    static func parseFlags(_ cursor: inout ArgumentCursor, command: String) throws(CLIError) -> Flags {
        var flags = Flags()
        while let argument = cursor.next() {
            switch argument {
            case "--hci": flags.transport = try cursor.value(for: argument)
            case "--region":
                let text = try cursor.value(for: argument)
                guard let region = RangingOutput.region(text) else {
                    throw CLIError(.usage, "\(command): --region '\(text)' is not UUID[:MAJOR[:MINOR]]")
                }
                flags.regions.append(region)
            case "--device": flags.device = try cursor.value(for: argument)
            case "--json": flags.json = true
            case "--record": flags.record = try cursor.value(for: argument)
            case "--voice-dir": flags.voiceDirectory = try cursor.value(for: argument)
            case "--lang": flags.language = try cursor.value(for: argument)
            case "--cache-dir": flags.cacheDirectory = try cursor.value(for: argument)
            case "--quiet": flags.quiet = true
            default: throw CLIError(.usage, "\(command): unknown option '\(argument)'")
            }
        }
        return flags
    }

    static func setup(_ flags: Flags) throws(CLIError) -> HunterSetup {
        var setup = HunterSetup()
        guard let transport = TransportSpec(flags.transport) else {
            throw CLIError(.usage, "--hci '\(flags.transport)': expected \(TransportSpec.help)")
        }
        setup.transport = transport
        setup.regions = flags.regions
        setup.json = flags.json
        setup.record = flags.record
        if !flags.quiet, let region = flags.regions.first {
            setup.hunt = HuntDirector.Configuration(region: region.name)
            var voice = VoiceConfiguration(voicesDirectory: VoiceLocations.resolve(explicit: flags.voiceDirectory), language: flags.language)
            voice.cacheDirectory = flags.cacheDirectory ?? defaultCacheDirectory()
            setup.voice = voice
            setup.playback = PlaybackConfiguration(device: flags.device)
        }
        return setup
    }

    static func defaultCacheDirectory() -> String {
        if let cache = getenv("CACHE_DIRECTORY") { return String(cString: cache) }  // systemd's CacheDirectory=
        if let home = getenv("XDG_CACHE_HOME") { return String(cString: home) + "/pirate-hunter" }
        if let home = getenv("HOME") { return String(cString: home) + "/.cache/pirate-hunter" }
        return "/tmp/pirate-hunter-cache"
    }

    static func run(_ cursor: inout ArgumentCursor) throws(CLIError) -> ExitCode {
        let flags = try parseFlags(&cursor, command: "hunt")
        guard !flags.regions.isEmpty else {
            throw CLIError(.usage, "hunt: no treasure region (--region UUID[:MAJOR[:MINOR]])")
        }
        var setup = try setup(flags)
        if setup.transport == .simulator {
            throw CLIError(.usage, "hunt: the simulator is for 'demo'")
        }
        setup.reload = { () throws(CLIError) -> HunterSetup in try Self.setup(flags) }
        let hunter = try Hunter(setup: setup)
        return try hunter.run()
    }

    static func demo(_ cursor: inout ArgumentCursor) throws(CLIError) -> ExitCode {
        var flags = try parseFlags(&cursor, command: "demo")
        if flags.regions.isEmpty { flags.regions = [DemoWorld.region] }
        var setup = try setup(flags)
        setup.duration = DemoWorld.length + 2
        setup.stopAfterFound = 5
        // The default device, or demo.wav when there is none.
        if var playback = setup.playback, flags.device == "default" {
            playback.sampleRate = 22050
            do {
                let probe = try ALSAPlayback.open(configuration: playback)
                probe.shutdown()
            } catch {
                let path = currentDirectory() + "/demo.wav"
                playback.device = "file:FILE=\(path),FORMAT=wav"
                // The file plugin needs a slave that keeps time: the null device does not,
                // so the demo paces itself by its own clock and the WAV gets what was played.
                printError("demo: no audio device (\(error.message)); writing what is said to \(path)")
                setup.playback = playback
            }
        }
        let world = DemoWorld(origin: monotonicSeconds())
        let simulator: SimulatedController
        do {
            simulator = try world.controller()
        } catch {
            throw CLIError(.software, "demo: \(error)")
        }
        let hunter = try Hunter(setup: setup, simulator: simulator)
        return try hunter.run()
    }

    static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
