#if canImport(Glibc)
import Glibc
#endif
import Radio

/// `pirate-hunter treasure`: the treasure box. Advertises the configured iBeacon (and its
/// reward in the scan response), greets hunters that announce they found it; a kiosk screen
/// when stdout is a terminal, log lines otherwise (systemd).
enum TreasureCommand {
    static func run(_ cursor: inout ArgumentCursor) throws(CLIError) -> ExitCode {
        var flags = ConfigurationFlags()
        var duration: Double?
        var plain = false
        while let argument = cursor.next() {
            if try flags.consume(argument, from: &cursor) { continue }
            switch argument {
            case "--duration":
                let text = try cursor.value(for: argument)
                guard let d = Double(text), d > 0 else { throw CLIError(.usage, "treasure: --duration '\(text)' is not a positive number of seconds") }
                duration = d
            case "--no-kiosk": plain = true
            default: throw CLIError(.usage, "treasure: unknown option '\(argument)'")
            }
        }
        let load = { () throws(CLIError) -> TreasureSetup in
            try HunterConfiguration.load(flags: flags, defaultPath: HunterConfiguration.treasurePath).treasureSetup()
        }
        var setup = try load()
        setup.reload = load
        setup.duration = duration
        setup.kiosk = !plain && !setup.json && isatty(1) == 1
        var options = RuntimeOptions(record: setup.record, duration: duration)
        options.signals = [SIGINT, SIGTERM, SIGHUP, SIGWINCH]
        let runtime = try ApplianceRuntime(options)
        let box = try TreasureBox(setup: setup, runtime: runtime)
        if setup.transport == .simulator {
            // The box's own virtual controller, and a hunter who keeps coming by.
            let world = DemoWorld(origin: runtime.loop.now)
            do {
                let controller = try SimulatedController(family: .extended, address: DemoWorld.boxAddress, startTime: runtime.loop.now)
                controller.add(world.visitingHunter(treasure: setup.treasure.beacon))
                box.start(on: .inProcess(controller, world: { controller.advance(to: $0) }))
            } catch {
                throw CLIError(.software, "simulator: \(error)")
            }
        } else {
            box.start(on: .spec(setup.transport))
        }
        return try runtime.run()
    }
}
