#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The treasure detector: between lines, a click whose rate follows how close the current
/// treasure's beacon is, as metal detectors, parking sensors and tag finders tell it: a
/// click every 2 s at the edge of range, 8 a second at the chest, silence when nothing is
/// heard (never a slow click for "no signal"). Pure: packets and time in, a rate out.
///
/// Its level is the path loss (advertised power at 1 m minus RSSI, dB), kept fast but
/// calm: an average over `timeConstant` seconds (at 1 Hz each packet moves it; at 10 Hz it
/// averages a dozen), which jumps to the new level when two packets in a row are beyond
/// `jump` dB on the same side (a step: the child came round a corner, or turned to face
/// it; the rate follows within two packets). The rate is a curve of that level, in
/// `steps` steps, each held until the level is half a step past its edge (standing still,
/// it does not flutter between two); anything heard beyond the edge of range is the edge's
/// rate, and only silence is silent.
public struct TreasureDetector: Sendable {
    public struct Configuration: Sendable, Equatable {
        public var enabled = true
        /// Clicks a second at the edge of range and at the chest.
        public var edgeRate = 0.5
        public var chestRate = 8.0
        /// Path loss (dB re 1 m) at the edge of range and at the chest (the hunter in a
        /// child's hand about 1 m above a chest on the floor, a tag's power a few dB off).
        public var edgeLoss = 30.0
        public var chestLoss = 4.0
        /// The rate's steps between the two: 10 with a 4 s average ordered more pairs of
        /// moments at every rate than 6 with 2.5 s did (1 Hz 88.4 % against 86.8 % on the
        /// tuning walks, `HuntBenchmark --detector tuning --seeds 400 --steps N
        /// --time-constant T`), and a child standing still at 10 and 4 Hz hears fewer changes.
        public var steps = 10
        /// The level's averaging time (s).
        public var timeConstant = 4.0
        /// Two packets in a row this far (dB) from the level, on one side: the level jumps
        /// (a corner turned, a wall passed). Not less: a walking child's body and the room's
        /// walls move the level 5-15 dB without telling distance, and at 10 Hz two 7 dB
        /// outliers beyond 12 dB come every minute; jumping to them cost 6 points of the pair
        /// score on the walking world's tuning walks (`HuntBenchmark --detector tuning`).
        public var jump = 12.0
        /// ... or this many times the packets' mean deviation from the level, when more: in
        /// a real room (6-8 dB a packet) about 18 dB, in a quiet one 12.
        public var jumpSpread = 3.2
        /// Silent after this long without a packet (s).
        public var silence = 5.0

        public init() {}
    }

    public let configuration: Configuration
    /// Path loss, dB (nil: nothing heard yet, or silent since).
    public private(set) var level: Double?
    /// Clicks a second now; 0 is silent.
    public private(set) var rate = 0.0
    private var step: Int?
    private var lastPacket = -Double.infinity
    private var pendingJump: (loss: Double, side: Double)?
    /// The packets' mean absolute deviation from the level (dB), smoothed.
    private var spread: Double?

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// A packet of the treasure's beacon: `pathLoss` = measured power - RSSI (dB). Returns
    /// the new rate when it changed.
    public mutating func heard(pathLoss: Double, at time: Double) -> Double? {
        guard configuration.enabled, pathLoss.isFinite else { return nil }
        let dt = time - lastPacket
        lastPacket = time
        if let l = level, dt.isFinite {
            let deviation = pathLoss - l
            let threshold = max(configuration.jump, configuration.jumpSpread * (spread ?? 0))
            if abs(deviation) < threshold {
                spread = spread.map { $0 + 0.05 * (abs(deviation) - $0) } ?? abs(deviation)
            }
            if abs(deviation) >= threshold {
                let side = deviation > 0 ? 1.0 : -1.0
                if let p = pendingJump, p.side == side {
                    level = (p.loss + pathLoss) / 2
                    pendingJump = nil
                } else {
                    pendingJump = (pathLoss, side)
                }
            } else {
                pendingJump = nil
                let alpha = 1 - exp(-max(0, dt) / configuration.timeConstant)
                level = l + alpha * deviation
            }
        } else {
            level = pathLoss
            pendingJump = nil
        }
        return update()
    }

    /// Time passes: silent once nothing was heard for `silence` seconds. Returns the new rate
    /// when it changed.
    public mutating func tick(at time: Double) -> Double? {
        guard level != nil, time - lastPacket >= configuration.silence else { return nil }
        level = nil
        pendingJump = nil
        return update()
    }

    /// Silent now (the treasure was found, the hunt is over, a new step begins).
    public mutating func reset() -> Double? {
        level = nil
        pendingJump = nil
        lastPacket = -.infinity
        return update()
    }

    /// The rate of step `k` (0: the edge, `steps`: the chest): even on a log scale.
    public func rate(ofStep k: Int) -> Double {
        let c = configuration
        let f = Double(k) / Double(max(1, c.steps))
        return c.edgeRate * pow(c.chestRate / c.edgeRate, f)
    }

    private mutating func update() -> Double? {
        let c = configuration
        let old = rate
        if let level {
            // 0 at the edge, `steps` at the chest, with a half-step hysteresis.
            let span = max(1e-9, c.edgeLoss - c.chestLoss)
            let position = (c.edgeLoss - level) / span * Double(c.steps)
            if let s = step, abs(position - Double(s)) <= 1.0 {
                // held
            } else {
                step = min(c.steps, max(0, Int(position.rounded())))
            }
        } else {
            step = nil
        }
        rate = step.map { rate(ofStep: $0) } ?? 0
        return rate != old ? rate : nil
    }
}
