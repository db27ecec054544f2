#if canImport(Glibc)
import Glibc
#endif
import Audio
import Bluetooth
import FoundationEssentials
import Hunt
import Radio
import Ranging
import Simulation

/// `pirate-hunter rehearse [--config FILE] [--out FILE.wav] [--json] [--virtual-time]`: the
/// parent's own trail heard before the party. Its steps are placed 15 m apart on the
/// simulator's air, each a beacon of the step's region; a simulated child listens to each
/// clue, walks to the step's chest, stands at it until it is found (and its reward read),
/// then goes on to the next. Everything the hunt says goes through the real pipeline (the
/// configuration validated as `hunt` validates it), to the speaker, or to `--out`.
enum RehearseCommand {
    static func run(_ arguments: ParsedArguments) throws(CLIError) -> ExitCode {
        let flags = arguments.flags
        let configuration = try HunterConfiguration.load(flags: flags, validate: true)
        var setup = configuration.hunterSetup()
        setup.rewardSVG = try ApplianceRuntime.checkRewardSVG(flags.rewardSVG)
        // A rehearsal is a simulated child, not the appliance: no page (the page runs it).
        setup.web.enabled = false
        let hunt = configuration.huntConfiguration()
        let steps = hunt.trail.isEmpty ? [TrailStep(region: configuration.huntedRegions.first ?? DemoWorld.region)] : hunt.trail
        let walk = RehearsalWalk(steps: steps)
        // A box's reward is not on this air: a step waits 3 s for one, not 10.
        setup.announce?.rewardTimeout = 3
        setup.stopAfterFound = 14
        let virtualTime = arguments.has(Flags.virtualTime) || flags.out != nil
        var staged: SafeFile.Staged?
        if let out = flags.out {
            if arguments.has(Flags.device) { throw CLIError(.usage, "give --device or --out, not both") }
            let wav = try ApplianceRuntime.stagedWAV(out)
            staged = wav.staged
            setup.playback?.device = wav.device
        } else if virtualTime, !arguments.has(Flags.device) {
            setup.playback?.device = "null"
        }
        Log.info("rehearsing \(steps.count) step\(steps.count == 1 ? "" : "s"): about \(Int(walk.length.rounded())) s")
        return try ApplianceRuntime.writing(staged) { () throws(CLIError) -> ExitCode in
            var options = RuntimeOptions(record: nil, duration: flags.duration ?? walk.length + 30)
            if virtualTime { options.clock = .virtual(start: 0) }
            let runtime = try ApplianceRuntime(options)
            let world = DemoWorld(origin: runtime.loop.now)
            let hunter = try Hunter(setup: setup, runtime: runtime)
            do {
                let controller = try SimulatedController(family: .legacy, address: DemoWorld.hunterAddress, startTime: runtime.loop.now)
                let origin = runtime.loop.now
                for (k, beacon) in walk.beacons.enumerated() {
                    let address = BDAddress(bytes: (UInt8(truncatingIfNeeded: k + 1), 0x00, 0x00, 0x7A, 0x60, 0xC1))
                    controller.add(VirtualBeacon(address: address, advertisingData: beacon.advertisingData, interval: 0.1) { t, ch in
                        world.rssi(atDistance: walk.distance(toStep: k, at: t - origin), channel: ch)
                    })
                }
                hunter.start(on: .inProcess(controller, world: { controller.advance(to: $0) }))
            } catch {
                throw CLIError(.software, "simulator: \(error)")
            }
            return try runtime.run(keeping: [hunter])
        }
    }
}

/// The rehearsal's child: on a line, the trail's chests 15 m apart; it waits out each clue
/// (its words at a child's pace, or its recording), walks to the chest at about 1.2 m/s,
/// stands over it long enough for the find, the reward and the next clue, and goes on.
struct RehearsalWalk {
    static let spacing = 15.0
    static let walkSeconds = 12.0
    /// At the chest: the find (immediate held 3 s), its line, a reward's reading.
    static let atChestSeconds = 16.0

    let beacons: [IBeacon]
    private let path: ScriptedPath
    let length: Double

    init(steps: [TrailStep]) {
        beacons = steps.enumerated().map { k, step in
            IBeacon(uuid: step.region.uuid, major: step.region.major ?? 1, minor: step.region.minor ?? UInt16(truncatingIfNeeded: k + 1), measuredPower: -59)
        }
        // Position along the line: -60 m (out of range) before the first chest at 0.
        var waypoints: [ScriptedPath.Waypoint] = [.init(time: 0, distance: -60)]
        var t = 4 + Self.clueSeconds(steps.first)
        waypoints.append(.init(time: t, distance: -60))
        for k in steps.indices {
            let at = Double(k) * Self.spacing - 0.25
            t += Self.walkSeconds
            waypoints.append(.init(time: t, distance: at))
            t += Self.atChestSeconds + (k + 1 < steps.count ? Self.clueSeconds(steps[k + 1]) : 0)
            waypoints.append(.init(time: t, distance: at))
        }
        path = ScriptedPath(waypoints)
        length = t
    }

    /// How long a step's clue takes to say: its lead-in and its words at ~130 a minute, or
    /// its recording (a guess when the file cannot be read: the hunt refuses those anyway).
    static func clueSeconds(_ step: TrailStep?) -> Double {
        switch step?.clue {
        case let .text(text)?: return 5 + Double(text.split(separator: " ").count) * 60 / 130
        case let .recording(path)?: return 5 + ((try? WAVFile.read(path: path, maximumSeconds: 120).durationSeconds) ?? 20)
        case nil: return 5
        }
    }

    /// The child's distance to step `k`'s chest `time` seconds into the rehearsal.
    func distance(toStep k: Int, at time: Double) -> Double {
        max(0.25, abs(path.distance(at: time) - Double(k) * Self.spacing))
    }
}
