#if canImport(Glibc)
import Glibc
#endif
import Radio

/// `pirate-hunter treasure`: the treasure box. Advertises the configured iBeacon (and its
/// reward in the scan response), greets hunters that announce they found it; a kiosk screen
/// when stdout is a terminal, log lines otherwise (systemd).
enum TreasureCommand {
    static func run(_ arguments: ParsedArguments) throws(CLIError) -> ExitCode {
        let flags = arguments.flags
        let duration = flags.duration
        let plain = arguments.has(Flags.noKiosk)
        let load = { () throws(CLIError) -> TreasureSetup in
            try HunterConfiguration.load(flags: flags, defaultPath: HunterConfiguration.treasurePath).treasureSetup()
        }
        // The simulator's visiting hunter and the box are one game: paired with the demo's
        // key when the file has none (nothing real is believed with it: it is public). At a
        // reload too: the file read again has no key, and the box went unpaired (the visitor
        // never greeted again, the kiosk saying "NOT PAIRED").
        let loadPaired = { () throws(CLIError) -> TreasureSetup in
            var setup = try load()
            if setup.transport == .simulator, setup.key == nil { setup.key = DemoWorld.gameKey }
            return setup
        }
        var setup = try loadPaired()
        setup.reload = loadPaired
        setup.duration = duration
        setup.kiosk = !plain && !setup.json && isatty(1) == 1
        var options = RuntimeOptions(record: setup.record, duration: duration)
        options.watchdog = true
        options.signals = [SIGINT, SIGTERM, SIGHUP, SIGWINCH]
        let runtime = try ApplianceRuntime(options)
        let box = try TreasureBox(setup: setup, runtime: runtime)
        if setup.transport == .simulator {
            // The box's own virtual controller, and a hunter who keeps coming by.
            let world = DemoWorld(origin: runtime.loop.now)
            do {
                let controller = try SimulatedController(family: .extended, address: DemoWorld.boxAddress, startTime: runtime.loop.now)
                controller.add(world.visitingHunter(treasure: setup.treasure.beacon, key: setup.key ?? DemoWorld.gameKey))
                box.start(on: .inProcess(controller, world: { controller.advance(to: $0) }))
            } catch {
                throw CLIError(.software, "simulator: \(error)")
            }
        } else {
            box.start(on: .spec(setup.transport))
        }
        return try runtime.run(keeping: [box])
    }
}
