#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The compass spin: a child who is stuck turns slowly in a circle ("Spin slowly like a
/// compass, matey!") and is told "Stop! Sail that way!" when they face the treasure. The
/// child's own body shadows the beacon when it is behind them (3-15 dB, graded with the
/// angle), so the level rises and falls once a turn and is highest facing it: what tag
/// finders tell their users to do by hand, done by ear. Pure: packets and time in, "stop
/// now" out.
///
/// It listens for `learn` seconds (about one slow turn) and fits the path loss (advertised
/// power at 1 m minus RSSI) of every packet with a turn: a + b·cos(ω·t - ψ), ω searched over
/// the turning speeds a child manages slowly (25-70°/s), a, b, ψ by least squares. The
/// least loss of the fit is when the child faces the treasure; "stop" is called
/// `latency` seconds before the next such moment (the call takes a moment to say, the
/// child a moment to stop). No turn in the fit (`b` under `minimumSwing` dB: no body
/// shadow to read, or too few packets), or no call by `giveUp`: nothing is said.
public struct CompassSpin: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// Seconds of listening before the fit (more than one slow turn: 6-14 s each).
        public var learn = 16.0
        /// Seconds between the call and the child standing still (the word, then the child).
        public var latency = 1.05
        /// The turning speeds searched (degrees a second).
        public var slowest = 25.0
        public var fastest = 70.0
        /// A fit whose swing (peak to mean, dB) is under this reads no turn.
        public var minimumSwing = 1.0
        /// Nothing said after this long (s).
        public var giveUp = 32.0

        public init() {}
    }

    public enum Phase: Sendable, Equatable {
        case learning
        /// Fitted: "stop" at this time.
        case calling(at: Double)
        case done
    }

    public let configuration: Configuration
    public private(set) var phase = Phase.learning
    private let start: Double
    private var samples: [(t: Double, loss: Double)] = []
    public static let maximumSamples = 512

    /// The child begins to turn at `time` (the request was said).
    public init(configuration: Configuration = Configuration(), at time: Double) {
        self.configuration = configuration
        start = time
    }

    /// A packet of the treasure's beacon: true when the child should stop now.
    public mutating func heard(pathLoss: Double, at time: Double) -> Bool {
        if case .learning = phase, pathLoss.isFinite, samples.count < Self.maximumSamples {
            samples.append((time - start, pathLoss))
        }
        return tick(at: time)
    }

    /// Time passes: true when the child should stop now. After `giveUp`, or once called,
    /// it is done.
    public mutating func tick(at time: Double) -> Bool {
        let c = configuration
        switch phase {
        case .done:
            return false
        case .learning:
            guard time - start >= c.learn else { return false }
            guard let call = fit(after: time - start) else {
                phase = .done
                return false
            }
            phase = .calling(at: start + call)
            return tick(at: time)
        case let .calling(at):
            if time >= at {
                phase = .done
                return time - at < 1  // a call already a second late would point elsewhere
            }
            if time - start >= c.giveUp { phase = .done }
            return false
        }
    }

    /// The time (since the start) to call "stop": `latency` before the first facing moment
    /// of the fitted turn after `now + latency`; nil when no turn is read.
    func fit(after now: Double) -> Double? {
        let c = configuration
        guard samples.count >= 6 else { return nil }
        let n = Double(samples.count)
        let mean = samples.reduce(0) { $0 + $1.loss } / n
        var best: (residual: Double, omega: Double, cosine: Double, sine: Double)?
        var degrees = c.slowest
        while degrees <= c.fastest {
            let w = degrees * Double.pi / 180
            // Least squares of loss - mean on cos(w t), sin(w t) (centred: a is the mean).
            var cc = 0.0, ss = 0.0, cs = 0.0, yc = 0.0, ys = 0.0, mc = 0.0, ms = 0.0
            for p in samples {
                mc += cos(w * p.t)
                ms += sin(w * p.t)
            }
            mc /= n
            ms /= n
            for p in samples {
                let x1 = cos(w * p.t) - mc, x2 = sin(w * p.t) - ms, y = p.loss - mean
                cc += x1 * x1
                ss += x2 * x2
                cs += x1 * x2
                yc += y * x1
                ys += y * x2
            }
            let det = cc * ss - cs * cs
            if det > 1e-9 {
                let cosine = (yc * ss - ys * cs) / det
                let sine = (ys * cc - yc * cs) / det
                var residual = 0.0
                for p in samples {
                    let fitted = cosine * (cos(w * p.t) - mc) + sine * (sin(w * p.t) - ms)
                    residual += (p.loss - mean - fitted) * (p.loss - mean - fitted)
                }
                if best.map({ residual < $0.residual }) ?? true { best = (residual, w, cosine, sine) }
            }
            degrees += 1
        }
        guard let best, (best.cosine * best.cosine + best.sine * best.sine).squareRoot() >= c.minimumSwing else { return nil }
        // loss ≈ mean + b·cos(w t - psi): least at w t - psi = pi (mod 2 pi).
        let psi = atan2(best.sine, best.cosine)
        let period = 2 * Double.pi / best.omega
        var facing = (psi + Double.pi) / best.omega
        while facing < now + c.latency { facing += period }
        return facing - c.latency
    }
}
