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
        guard setup.transport == .simulator else { return try TreasureBox(setup: setup).run() }
        // The simulator: the box's own virtual controller, and a hunter who keeps coming by.
        let origin = monotonicSeconds()
        let world = DemoWorld(origin: origin)
        do {
            let controller = try SimulatedController(family: .extended, address: DemoWorld.boxAddress, startTime: origin)
            controller.add(world.visitingHunter(treasure: setup.treasure.beacon))
            return try TreasureBox(setup: setup, simulator: controller).run()
        } catch {
            throw CLIError(.software, "treasure: simulator: \(error)")
        }
    }
}
