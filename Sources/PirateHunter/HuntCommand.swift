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
    /// The shared configuration flags plus `--quiet` (range and print, say nothing).
    static func configuration(_ cursor: inout ArgumentCursor, command: String) throws(CLIError) -> (ConfigurationFlags, quiet: Bool) {
        var flags = ConfigurationFlags()
        var quiet = false
        while let argument = cursor.next() {
            if try flags.consume(argument, from: &cursor) { continue }
            switch argument {
            case "--quiet": quiet = true
            case "--reward-svg": flags.rewardSVG = try cursor.value(for: argument)
            default: throw CLIError(.usage, "\(command): unknown option '\(argument)'")
            }
        }
        return (flags, quiet)
    }

    static func run(_ cursor: inout ArgumentCursor) throws(CLIError) -> ExitCode {
        let (flags, quiet) = try configuration(&cursor, command: "hunt")
        let load = { () throws(CLIError) -> HunterSetup in
            let setup = try HunterConfiguration.load(flags: flags).hunterSetup(quiet: quiet)
            if setup.transport == .simulator { throw CLIError(.usage, "hunt: the simulator is for 'demo'") }
            return setup
        }
        var setup = try load()
        setup.rewardSVG = flags.rewardSVG
        // SIGHUP re-reads the file; the flags still win.
        setup.reload = load
        return try Hunter(setup: setup).run()
    }

    static func demo(_ cursor: inout ArgumentCursor) throws(CLIError) -> ExitCode {
        let (flags, quiet) = try configuration(&cursor, command: "demo")
        let configuration = try HunterConfiguration.load(flags: flags)
        var setup = configuration.hunterSetup(quiet: quiet)
        setup.rewardSVG = flags.rewardSVG
        // The demo hunts its own virtual treasure, whatever the configured regions.
        setup.regions = [DemoWorld.region]
        setup.hunt?.region = DemoWorld.region.name
        setup.duration = DemoWorld.length + 20
        // Time for the found line, the reward read out and the box's greeting.
        setup.stopAfterFound = 14
        // The default device, or demo.wav when there is none.
        if var playback = setup.playback, playback.device == "default" {
            do {
                try ALSAPlayback.open(configuration: playback).shutdown()
            } catch {
                let path = currentDirectory() + "/demo.wav"
                playback.device = "file:FILE=\(path),FORMAT=wav"
                printError("demo: no audio device (\(error.message)); writing what is said to \(path)")
                setup.playback = playback
            }
        }
        let world = DemoWorld(origin: monotonicSeconds())
        let radio: (air: SimulatedAir, hunter: SimulatedController, box: SimulatedController)
        do {
            radio = try world.air()
        } catch {
            throw CLIError(.software, "demo: \(error)")
        }
        let hunter = try Hunter(setup: setup, simulator: radio.hunter, air: radio.air)
        // The treasure box, in the same process and on the same loop: its log lines are
        // prefixed, and it greets the hunter with the reward's QR code.
        var box = configuration.treasureSetup()
        box.treasure = HunterConfiguration.Treasure()
        box.treasure.uuid = DemoWorld.treasure.uuid
        box.treasure.major = DemoWorld.treasure.major
        box.treasure.minor = DemoWorld.treasure.minor
        box.treasure.power = DemoWorld.treasure.measuredPower
        box.treasure.reward = configuration.treasure.reward ?? DemoWorld.reward
        box.json = false
        box.record = nil
        box.logPrefix = "treasure box: "
        let treasureBox = try TreasureBox(setup: box, loop: hunter.loop, simulator: radio.box)
        hunter.onShutdown = { treasureBox.stop() }
        treasureBox.begin()
        return try hunter.run()
    }

    static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
