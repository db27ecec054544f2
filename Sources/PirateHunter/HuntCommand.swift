#if canImport(Glibc)
import Glibc
#endif
import Audio
import Bluetooth
import FoundationEssentials
import Hunt
import Radio
import Ranging
import Voice

/// `pirate-hunter hunt`: the appliance. `pirate-hunter demo`: the same pipeline on a
/// simulated hunt, heard through the default ALSA device or written to demo.wav.
enum HuntCommand {
    static func run(_ arguments: ParsedArguments) throws(CLIError) -> ExitCode {
        let flags = arguments.flags
        let quiet = arguments.has(Flags.quiet)
        let duration = flags.duration
        let load = { () throws(CLIError) -> HunterSetup in
            try HunterConfiguration.load(flags: flags, validate: true).hunterSetup(quiet: quiet)
        }
        var setup: HunterSetup
        do {
            setup = try load()
        } catch {
            // The service: a mistake in the file is said aloud, and the fix waited for.
            guard arguments.has(Flags.waitForFix), SettingsNotice.canWaitFor(error) else { throw error }
            guard let fixed = SettingsNotice.wait(after: error, flags: flags, json: arguments.has(Flags.json), load: load) else {
                // SIGTERM or SIGINT while waiting: stopped as a hunt is.
                return .ok
            }
            setup = fixed
        }
        setup.rewardSVG = try ApplianceRuntime.checkRewardSVG(flags.rewardSVG)
        var options = RuntimeOptions(record: setup.record, duration: duration)
        options.watchdog = true
        options.clock = try arguments.clock(simulated: setup.transport == .simulator)
        if options.clock != .monotonic, !arguments.has(Flags.device) { setup.playback?.device = "null" }
        // --out: what would be heard, written to a WAV (a temporary of ours that ALSA's file
        // plugin fills, put in place when the hunt ends; never through a planted link).
        var staged: SafeFile.Staged?
        // --quiet says nothing, so there is nothing to write: refused, not ignored.
        if flags.out != nil, arguments.has(Flags.quiet) { throw CLIError(.usage, "give --quiet or --out, not both") }
        if let out = flags.out, setup.playback != nil {
            if arguments.has(Flags.device) { throw CLIError(.usage, "give --device or --out, not both") }
            let wav = try ApplianceRuntime.stagedWAV(out)
            staged = wav.staged
            setup.playback?.device = wav.device
        }
        // SIGHUP re-reads the file; the flags (and --out's file) still win.
        let device = staged == nil ? nil : setup.playback?.device
        setup.reload = { () throws(CLIError) -> HunterSetup in
            var next = try load()
            if let device { next.playback?.device = device }
            return next
        }
        return try ApplianceRuntime.writing(staged) { () throws(CLIError) -> ExitCode in
            try run(setup, options: options)
        }
    }

    private static func run(_ setup: HunterSetup, options: RuntimeOptions) throws(CLIError) -> ExitCode {
        let runtime = try ApplianceRuntime(options)
        let hunter = try Hunter(setup: setup, runtime: runtime)
        if setup.transport == .simulator {
            // The demo's walk, to the first hunted region's beacon (major 1, minor 1).
            let world = DemoWorld(origin: runtime.loop.now)
            let treasure = IBeacon(uuid: setup.regions.first?.uuid ?? DemoWorld.treasureUUID, major: 1, minor: 1, measuredPower: -59)
            do {
                let controller = try SimulatedController(family: .legacy, address: DemoWorld.hunterAddress, startTime: runtime.loop.now)
                controller.add(world.walkingTreasure(treasure))
                // Three more tags in view (the parent's page makes a trail of them): standing 2 m
                // away at 10 Hz, 6 m at 1 Hz, 4 m at 4 Hz.
                let uuid = treasure.uuid
                let near = IBeacon(uuid: uuid, major: 1, minor: 2, measuredPower: -59)
                controller.add(world.standingBeacon(near.advertisingData, address: DemoWorld.hunterAddress, distance: 2, interval: 0.1))
                let far = IBeacon(uuid: uuid, major: 1, minor: 3, measuredPower: -59)
                controller.add(world.standingBeacon(far.advertisingData, address: SimulatedController.defaultAddress, distance: 6, interval: 1))
                let middle = IBeacon(uuid: uuid, major: 1, minor: 4, measuredPower: -59)
                controller.add(world.standingBeacon(middle.advertisingData, address: DemoWorld.boxAddress, distance: 4, interval: 0.25))
                hunter.start(on: .inProcess(controller, world: { controller.advance(to: $0) }))
            } catch {
                throw CLIError(.software, "simulator: \(error)")
            }
        } else {
            hunter.start(on: .spec(setup.transport))
        }
        return try runtime.run(keeping: [hunter])
    }

    static func demo(_ arguments: ParsedArguments) throws(CLIError) -> ExitCode {
        let flags = arguments.flags
        let quiet = arguments.has(Flags.quiet)
        let virtualTime = arguments.has(Flags.virtualTime)
        let configuration = try HunterConfiguration.load(flags: flags)
        var setup = configuration.hunterSetup(quiet: quiet)
        setup.rewardSVG = try ApplianceRuntime.checkRewardSVG(flags.rewardSVG)
        DemoWorld.huntItsTrail(&setup)
        // The demo is heard, not set up: no page (a hunt beside it keeps port 8080).
        setup.web.enabled = false
        // The demo pairs its two sides itself: one key for the hunter, the box and hunter 2.
        let key = configuration.game.key ?? DemoWorld.gameKey
        setup.key = key
        setup.challenge = 0
        // On virtual time nothing is heard unless a device was asked for (a card would play
        // the whole walk in real time while the loop waits to shut down).
        if virtualTime, !arguments.has(Flags.device) { setup.playback?.device = "null" }
        // The default device (`auto`: a USB speaker, else ALSA's default), or demo.wav when
        // there is none (ALSA's file plugin writes a temporary of ours, put in place at the
        // end: never through a planted link).
        var staged: SafeFile.Staged?
        if var playback = setup.playback, playback.device == "default" || playback.device == SoundCards.auto {
            do {
                try ALSAPlayback.open(configuration: playback).shutdown()
            } catch {
                let path = currentDirectory() + "/demo.wav"
                staged = try ApplianceRuntime.stagedOutput(path)
                playback.device = "file:FILE=\(staged?.temporary ?? path),FORMAT=wav"
                Log.info("no audio device (\(error.message)); writing what is said to \(path)")
                setup.playback = playback
            }
        }
        // Whatever ends the demo early, the temporary goes.
        return try ApplianceRuntime.writing(staged) { () throws(CLIError) -> ExitCode in
            var options = RuntimeOptions(record: setup.record, duration: flags.duration ?? DemoWorld.trailLength + 30)
            if virtualTime { options.clock = .virtual(start: 0) }
            let runtime = try ApplianceRuntime(options)
            let world = DemoWorld(origin: runtime.loop.now)
            let radio: (air: SimulatedAir, hunter: SimulatedController, box: SimulatedController)
            do {
                radio = try world.trailAir(key: key)
            } catch {
                throw CLIError(.software, "simulator: \(error)")
            }
            let hunter = try Hunter(setup: setup, runtime: runtime)
            // The treasure box, in the same process and on the same runtime: its log lines are
            // prefixed, and it greets the hunter with the reward's QR code.
            var box = configuration.treasureSetup()
            box.treasure = HunterConfiguration.Treasure()
            box.treasure.uuid = DemoWorld.treasure.uuid
            box.treasure.major = DemoWorld.treasure.major
            box.treasure.minor = DemoWorld.treasure.minor
            box.treasure.power = DemoWorld.treasure.measuredPower
            box.treasure.reward = configuration.treasure.reward ?? DemoWorld.reward
            box.trail = DemoWorld.trail
            box.json = false
            box.logPrefix = "treasure box: "
            box.key = key
            box.ownsSignals = false
            box.web.enabled = false
            let treasureBox = try TreasureBox(setup: box, runtime: runtime)
            // The air moves both controllers; the hunter's session is the one recorded.
            hunter.start(on: .inProcess(radio.hunter, world: { radio.air.advance(to: $0) }))
            treasureBox.start(on: .inProcess(radio.box, world: nil), recorded: false)
            return try runtime.run(keeping: [hunter, treasureBox])
        }
    }

    static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
