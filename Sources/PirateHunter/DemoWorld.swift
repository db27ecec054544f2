import Bluetooth
import FoundationEssentials
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
        let d = distance(at: time)
        if loss.nextIsLost(&noise) || d > Self.range { return nil }
        let reading = model.reading(atDistance: d, channel: channel, noise: &noise)
        return Int8(clamping: Int(reading.rounded()))
    }

    func controller() throws(TransportError) -> SimulatedController {
        let address = BDAddress("C0:FF:EE:15:60:1D") ?? (try? BDAddress(littleEndian: [1, 2, 3, 4, 5, 6][...]))
        guard let address else { throw .notFound("demo address") }
        let beacon = VirtualBeacon(address: address, advertisingData: Self.treasure.advertisingData, interval: 0.1) { [self] t, ch in
            rssi(at: t, channel: ch)
        }
        return try SimulatedController(family: .legacy, beacons: [beacon], startTime: origin)
    }
}
