import Bluetooth
import FoundationEssentials
import GameKey
import Hunt
import Radio
import Ranging
import Simulation

/// The demo's little world: one treasure beacon, and a hunter who walks toward it, wanders
/// off, comes back and finds it, in about a minute. The radio follows the public noise model
/// (log-distance path loss, 5.7 dB noise, ±5 dB per advertising channel, burst loss) and a
/// treasure out of range beyond 30 m.
final class DemoWorld {
    static let treasureUUID = UUID(uuidString: "50697261-7465-4875-6E74-547265617375") ?? UUID()
    static let treasure = IBeacon(uuid: treasureUUID, major: 1, minor: 1, measuredPower: -59)
    static var region: Region { Region(name: "treasure", uuid: treasureUUID) }
    /// The demo treasure box's reward, unless `--reward` gives one.
    static let reward = "ARRR-GOLD-2026"
    /// The demo's own game key (fixed: its runs are reproducible; never a real game's).
    static let gameKey: GameKey = (try? GameKey(text: "PIRA-TEHU-NTER-DEMO-KEYA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA")) ?? GameKey.random()
    static let boxAddress = BDAddress(bytes: (0x1D, 0x60, 0x15, 0xEE, 0xFF, 0xC0))
    static let hunterAddress = BDAddress(bytes: (0x07, 0x00, 0x00, 0x7E, 0xA7, 0xC0))

    /// (seconds after start, metres from the treasure)
    static let walk: [(Double, Double)] = [
        (0, 60), (4, 60),  // out of range: the initial state is "outside"
        (10, 14), (15, 4), (18, 1.5), (22, 1.5),  // walks toward it: enter, then near
        (27, 10), (31, 60), (43, 60),  // wanders off: far, then out of range and gone
        (48, 8), (52, 1.5), (56, 0.25), (70, 0.25),  // comes back and finds it
    ]
    static let length = 70.0
    /// Beyond this the treasure is not heard at all (walls, bodies, receiver sensitivity).
    static let range = 30.0

    // MARK: The demo's trail

    /// Three chests on a line: 1 (the treasure box, with the reward) at 0 m, 3 at 12 m and
    /// 2 at 24 m (tags, no reward). The child finds 1, wanders to 3 before 2 (out of order),
    /// is stuck there (a hint), hears hunter 2 find 2 first, finds 2, goes back to 3: the end.
    static let chestPositions: [Double] = [0, 24, 12]
    static func chest(_ number: Int) -> IBeacon {
        IBeacon(uuid: treasureUUID, major: 1, minor: UInt16(number), measuredPower: -59)
    }
    static func chestRegion(_ number: Int) -> Region {
        Region(name: RegionID("\(treasureUUID.uuidString):1:\(number)"), uuid: treasureUUID, major: 1, minor: UInt16(number))
    }
    static var trail: [TrailStep] {
        [
            // The treasure box: found on its proof (its sealed reward), not its iBeacon alone.
            TrailStep(region: chestRegion(1), clue: .text("Find the chest where the old sea chest sleeps."), box: true),
            TrailStep(region: chestRegion(2), clue: .text("Walk past the rocks to the far end of the beach."), hint: "Go further, past the first chest ye passed!"),
            TrailStep(region: chestRegion(3), clue: .text("Go back to the chest ye found too early!")),
        ]
    }
    static let tagAddresses = [BDAddress(bytes: (0x02, 0x00, 0x00, 0x7A, 0x60, 0xC0)), BDAddress(bytes: (0x03, 0x00, 0x00, 0x7A, 0x60, 0xC0))]
    static let rivalAddress = BDAddress(bytes: (0x02, 0x00, 0x00, 0x7E, 0xA7, 0xC0))
    /// (seconds after start, position on the line in metres)
    static let trailWalk: [(Double, Double)] = [
        (0, -50), (4, -50),  // out of range of every chest: the initial state is "outside"
        (8, -8), (11, -1.5), (13, -0.2), (28, -0.2),  // to chest 1, found, its reward read
        (36, 11.8), (84, 11.8),  // to chest 3: out of order; stuck there, a hint
        (91, 23.8), (100, 23.8),  // to chest 2 (hunter 2 got there first)
        (106, 12.2), (150, 12.2),  // back to chest 3: the trail is done
    ]
    static let trailLength = 126.0

    /// The demo hunts its own trail of three chests, whatever the configured regions: a
    /// race (hunter 2 is out there too), a hint after 12 s stuck, chests 2 and 3 (tags,
    /// no reward) given up on for their reward after 3 s.
    static func huntItsTrail(_ setup: inout HunterSetup) {
        setup.regions = trail.map(\.region)
        setup.hunt?.trail = trail
        setup.hunt?.region = trail[0].region.name
        setup.hunt?.trailRules.order = .inOrder
        setup.hunt?.trailRules.mode = .race
        setup.hunt?.trailRules.hintAfter = 12
        setup.hunt?.trailRules.hintInterval = 30
        // The scripted walk is timed for a 3 s hold at each chest (the rival's find and the
        // hint fall where the story wants them).
        setup.hunt?.foundHold = 3
        setup.announce?.rewardTimeout = 3
        // Time for the last found line and the finale.
        setup.stopAfterFound = 16
    }
    /// Hunter 2 announces finding chest 2 from this time on.
    static let rivalFindsAt = 69.0

    private let trailPath = ScriptedPath(DemoWorld.trailWalk.map { ScriptedPath.Waypoint(time: $0.0, distance: $0.1) })

    /// The demo child's distance to chest `number` (1-based) at `time` (the loop's clock).
    func distance(toChest number: Int, at time: Double) -> Double {
        max(0.2, abs(trailPath.distance(at: time - origin) - Self.chestPositions[number - 1]))
    }

    /// The air of the trail demo: the box (chest 1) and the hunter hear each other at the
    /// child's distance to chest 1.
    func trailAir(key: GameKey) throws(TransportError) -> (air: SimulatedAir, hunter: SimulatedController, box: SimulatedController) {
        let air = SimulatedAir(startTime: origin) { [self] t, _, _, ch in rssi(atDistance: distance(toChest: 1, at: t), channel: ch) }
        let hunter = try SimulatedController(family: .legacy, address: Self.hunterAddress, startTime: origin)
        let box = try SimulatedController(family: .extended, address: Self.boxAddress, startTime: origin)
        air.join(hunter)
        air.join(box)
        for number in [2, 3] {
            hunter.add(VirtualBeacon(address: Self.tagAddresses[number - 2], advertisingData: Self.chest(number).advertisingData, interval: 0.1) { [self] t, ch in
                rssi(atDistance: distance(toChest: number, at: t), channel: ch)
            })
        }
        // Hunter 2, at chest 2 (12 m from chest 3, where the demo child is stuck), announces its find.
        let rival = GameSignals.announcement(
            GameSignals.Announcement(hunterID: 2, treasureTag: TreasureSignals.tag(of: Self.chest(2)), challenge: 7), by: key.authenticator)
        hunter.add(VirtualBeacon(address: Self.rivalAddress, advertisingData: rival.advertisingData, interval: 0.1) { [self] t, ch in
            t - origin < Self.rivalFindsAt ? nil : rssi(atDistance: distance(toChest: 2, at: t) + 1, channel: ch)
        })
        return (air, hunter, box)
    }

    private let model = PathLossModel()
    private var noise: GaussianSource
    private var loss = GilbertElliottLoss(lossFraction: 0.2, meanBurstPackets: 3)
    private let path: ScriptedPath
    private let origin: Double

    init(origin: Double, seed: UInt64 = 7) {
        self.origin = origin
        noise = GaussianSource(seed: seed)
        path = ScriptedPath(Self.walk.map { ScriptedPath.Waypoint(time: $0.0, distance: $0.1) })
    }

    func distance(at time: Double) -> Double { path.distance(at: time - origin) }

    /// One packet's RSSI, nil when lost or too weak to hear.
    func rssi(at time: Double, channel: Int) -> Int8? {
        rssi(atDistance: distance(at: time), channel: channel)
    }

    /// The air between the hunter's controller and the treasure box's: both hear each other
    /// at the distance the walk says. The box speaks extended commands, the hunter legacy ones.
    func air() throws(TransportError) -> (air: SimulatedAir, hunter: SimulatedController, box: SimulatedController) {
        let air = SimulatedAir(startTime: origin) { [self] t, _, _, ch in rssi(at: t, channel: ch) }
        let hunter = try SimulatedController(family: .legacy, address: Self.hunterAddress, startTime: origin)
        let box = try SimulatedController(family: .extended, address: Self.boxAddress, startTime: origin)
        air.join(hunter)
        air.join(box)
        return (air, hunter, box)
    }

    /// For `hunt --hci simulator` and `scan --hci simulator`: `beacon` advertised from the
    /// box's address, 10 times a second, along the demo's walk (again every `length` seconds).
    func walkingTreasure(_ beacon: IBeacon) -> VirtualBeacon {
        VirtualBeacon(address: Self.boxAddress, advertisingData: beacon.advertisingData, interval: 0.1) { [self] t, ch in
            rssi(atDistance: path.distance(at: (t - origin).truncatingRemainder(dividingBy: Self.length)), channel: ch)
        }
    }

    /// A beacon standing `distance` metres away, advertising every `interval` seconds
    /// (`scan --hci simulator`).
    func standingBeacon(_ data: [UInt8], address: BDAddress, distance: Double, interval: Double) -> VirtualBeacon {
        VirtualBeacon(address: address, advertisingData: data, interval: interval) { [self] _, ch in rssi(atDistance: distance, channel: ch) }
    }

    /// For `treasure --hci simulator`: hunter 7, who found this treasure, walks up to the box
    /// every minute, lingers and leaves (announcing itself all the while).
    /// Hunter 7, paired with `key`: at the box from the start (greeted once held at
    /// immediate), then off and back again every minute.
    func visitingHunter(treasure: IBeacon, key: GameKey) -> VirtualBeacon {
        let a = GameSignals.Announcement(hunterID: 7, treasureTag: TreasureSignals.tag(of: treasure), challenge: 7)
        let beacon = GameSignals.announcement(a, by: key.authenticator)
        let stops: [(Double, Double)] = [(0, 1.5), (1, 0.3), (35, 0.3), (42, 4), (50, 40), (60, 40)]
        let visit = ScriptedPath(stops.map {
            ScriptedPath.Waypoint(time: $0.0, distance: $0.1)
        })
        return VirtualBeacon(address: Self.hunterAddress, advertisingData: beacon.advertisingData, interval: 0.1) { [self] t, ch in
            let d = visit.distance(at: (t - origin).truncatingRemainder(dividingBy: 60))
            return rssi(atDistance: d, channel: ch)
        }
    }

    /// One packet's RSSI at distance `d`, nil when lost or too weak to hear.
    func rssi(atDistance d: Double, channel: Int) -> Int8? {
        if loss.nextIsLost(&noise) || d > Self.range { return nil }
        let reading = model.reading(atDistance: d, channel: channel, noise: &noise)
        return Int8(clamping: Int(reading.rounded()))
    }
}
