#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Hunt
import Ranging
import Simulation

/// The motion model as a grid filter (docs/ranging.md, "Fourth round"): the probability of
/// the hunter's distance (48 log-spaced steps, 0.8-25 m), its radial speed (7 values, each
/// kept for a mean of `speedMemory` s, then any other) and the body's shadow (on or off,
/// turning at `shadowRate` per second, seldom on while the child walks closer), updated by
/// each packet under log-distance path loss with `noise` dB of spread. An experiment beside
/// the engine's trend (`MOTION_PROBE=N`), not part of the engine: on held-out walks it
/// hears what the slope test hears.
struct RadialMotionGrid {
    static let distances: [Double] = (0..<48).map { 0.8 * pow(25.0 / 0.8, Double($0) / 47) }
    static let speeds: [Double] = [-1.2, -0.7, -0.3, 0, 0.3, 0.7, 1.2]
    var p: [Double]
    var lastTime: Double?
    let exponent: Double
    let shadowDepth: Double
    let speedMemory: Double
    let shadowRate: Double
    let noise: Double

    init(exponent: Double = 2.2, shadowDepth: Double = 10, speedMemory: Double = 4, shadowRate: Double = 0.2, noise: Double = 7.5) {
        self.exponent = exponent
        self.shadowDepth = shadowDepth
        self.speedMemory = speedMemory
        self.shadowRate = shadowRate
        self.noise = noise
        let n = Self.distances.count * Self.speeds.count * 2
        p = [Double](repeating: 1 / Double(n), count: n)
    }

    static func index(_ d: Int, _ v: Int, _ s: Int) -> Int { (d * speeds.count + v) * 2 + s }

    mutating func predict(dt: Double) {
        let nd = Self.distances.count, nv = Self.speeds.count
        var q = [Double](repeating: 0, count: p.count)
        let stay = exp(-dt / speedMemory)
        let toggle = 1 - exp(-dt * shadowRate)
        let logStep = log(Self.distances[1] / Self.distances[0])
        // Marginal over v for the speed jumps.
        for d in 0..<nd {
            for s in 0..<2 {
                var total = 0.0
                for v in 0..<nv { total += p[Self.index(d, v, s)] }
                for v in 0..<nv {
                    let mass = stay * p[Self.index(d, v, s)] + (1 - stay) * total / Double(nv)
                    // Move the distance.
                    let target = max(Self.distances[0], Self.distances[d] + Self.speeds[v] * dt)
                    let x = min(Double(nd - 1), max(0, log(target / Self.distances[0]) / logStep))
                    let lo = Int(x), hi = min(nd - 1, lo + 1), f = x - Double(lo)
                    for (ss, w) in [(s, 1 - toggle), (1 - s, toggle)] {
                        q[Self.index(lo, v, ss)] += mass * w * (1 - f)
                        q[Self.index(hi, v, ss)] += mass * w * f
                    }
                }
            }
        }
        p = q
    }

    mutating func update(rssi: Double, measuredPower: Double, time: Double) {
        if let last = lastTime { predict(dt: max(0, time - last)) }
        lastTime = time
        let nd = Self.distances.count, nv = Self.speeds.count
        var total = 0.0
        for d in 0..<nd {
            let base = measuredPower - 10 * exponent * log10(Self.distances[d])
            for s in 0..<2 {
                let mu = base - Double(s) * shadowDepth
                let z = (rssi - mu) / noise
                let like = exp(-0.5 * min(z * z, 50))
                for v in 0..<nv {
                    // Facing away (shadow) goes with walking away or standing.
                    var coupling = 1.0
                    if s == 1, Self.speeds[v] < 0 { coupling = 0.2 }
                    let i = Self.index(d, v, s)
                    p[i] *= like * coupling
                    total += p[i]
                }
            }
        }
        if total > 0 { for i in p.indices { p[i] /= total } } else { p = p.map { _ in 1 / Double(p.count) } }
    }

    var approaching: Double {
        var m = 0.0
        for d in 0..<Self.distances.count { for v in 0..<Self.speeds.count where Self.speeds[v] < -0.2 { for s in 0..<2 { m += p[Self.index(d, v, s)] } } }
        return m
    }
}

/// MOTION_PROBE=N: the grid's "warmer" (the probability of closing at least each of
/// MOTION_TH's thresholds, re-armed below 0.7 of it, at most one per 6 s) against the
/// engine's warmer lines on N walks (MOTION_HELD_OUT=1: the held-out ones), scored by the
/// walking rules (warmer lines alone on both sides).
func probeMotion(count: Int) {
    let heldOut = getenv("MOTION_HELD_OUT") != nil
    let seeds = walkingSeeds(heldOut: heldOut, count: count)
    let thresholds: [Double] = (getenv("MOTION_TH").map { String(cString: $0) } ?? "0.8,0.83,0.85,0.87,0.9").split(separator: ",").compactMap { Double($0) }
    var rows: [String: [(WalkingWorld, WalkScore)]] = [:]
    let memory = getenv("MOTION_MEMORY").flatMap { Double(String(cString: $0)) } ?? 4
    let shadowRate = getenv("MOTION_TOGGLE").flatMap { Double(String(cString: $0)) } ?? 0.2
    for seed in seeds {
        let world = WalkingWorld(seed: seed)
        let reports = world.readings()
        rows["engine warmer", default: []].append((world, engineWarmerScore(world, reports)))
        var grid = RadialMotionGrid(speedMemory: memory, shadowRate: shadowRate)
        var series: [(Double, Double)] = []
        for r in reports {
            grid.update(rssi: Double(r.rssi), measuredPower: Double(r.measuredPower), time: r.time)
            series.append((r.time, grid.approaching))
        }
        for th in thresholds {
            var told = WalkTold()
            var last = -Double.infinity
            var armed = true
            for (t, a) in series {
                if a < th * 0.7 { armed = true }
                if a >= th, armed, t - last >= 6 {
                    told.lines.append((t, .warmer))
                    last = t
                    armed = false
                }
            }
            rows["grid \(th)", default: []].append((world, scoreWalk(world, told)))
        }
    }
    printWarmerRows(rows, ["engine warmer"] + thresholds.map { "grid \($0)" })
}

/// The engine's and the hunt's "warmer" lines alone on a walk, scored by the walking rules.
func engineWarmerScore(_ world: WalkingWorld, _ reports: [SimulatedReading]) -> WalkScore {
    var ours = oursOnWalk(reports, until: world.duration)
    ours.lines = ours.lines.filter { $0.line == .warmer }
    ours.ranges = []
    return scoreWalk(world, ours)
}

/// One line per row of warmer-only scores: false warmers an hour, approaches heard by rate.
func printWarmerRows(_ rows: [String: [(WalkingWorld, WalkScore)]], _ names: [String]) {
    for name in names {
        guard let row = rows[name] else { continue }
        let hours = row.reduce(0) { $0 + $1.1.seconds } / 3600
        let falseWarm = Double(row.reduce(0) { $0 + ($1.1.falseLines[.warmer] ?? 0) }) / hours
        func recall(_ rates: Set<Int>) -> String {
            let (k, n) = approachesHeard(row, rates: rates)
            return format(Double(k) / Double(max(n, 1)), 2)
        }
        print("\(name): false warmers/h \(format(falseWarm, 2)) heard \(recall([10])) / \(recall([4])) / \(recall([1, 2]))")
    }
}

/// RAMP_PROBE=N: a "warmer" from consecutive windows (RAMP_WINDOWS of RAMP_SPAN s each, the
/// last ending now): every window's mean above the one before by RAMP_K standard errors and
/// the last above the first by each of RAMP_Z's thresholds (a ramp raises every boundary, a
/// turn's step only one), at most one per 4 s, against the engine's warmer lines on N walks
/// (RAMP_HELD_OUT=1: the held-out ones), scored by the walking rules (warmer lines alone).
func probeRamp(count: Int) {
    func knob(_ name: String, _ fallback: Double) -> Double { getenv(name).flatMap { Double(String(cString: $0)) } ?? fallback }
    let heldOut = getenv("RAMP_HELD_OUT") != nil
    let windows = Int(knob("RAMP_WINDOWS", 4))
    let span = knob("RAMP_SPAN", 2.5)
    let k = knob("RAMP_K", 1)
    let minimum = knob("RAMP_MIN", 2)
    let thresholds: [Double] = (getenv("RAMP_Z").map { String(cString: $0) } ?? "3,3.5,4,4.5,5").split(separator: ",").compactMap { Double($0) }
    var rows: [String: [(WalkingWorld, WalkScore)]] = [:]
    for seed in walkingSeeds(heldOut: heldOut, count: count) {
        let world = WalkingWorld(seed: seed)
        let all = world.readings()
        let reports = all.filter { $0.beacon == 0 }
        rows["engine warmer", default: []].append((world, engineWarmerScore(world, all)))
        var told = [WalkTold](repeating: WalkTold(), count: thresholds.count)
        var last = [Double](repeating: -.infinity, count: thresholds.count)
        var first = 0
        for (i, r) in reports.enumerated() {
            let start = r.time - Double(windows) * span
            while first < i, reports[first].time <= start { first += 1 }
            var sums = [Double](repeating: 0, count: windows), squares = sums, counts = sums
            for j in first...i {
                let w = min(windows - 1, Int((reports[j].time - start) / span))
                let v = Double(reports[j].rssi)
                sums[w] += v
                squares[w] += v * v
                counts[w] += 1
            }
            guard counts.allSatisfy({ $0 >= minimum }) else { continue }
            let means = zip(sums, counts).map { $0 / $1 }
            var within = 0.0
            for w in 0..<windows { within += squares[w] - counts[w] * means[w] * means[w] }
            let variance = max(within / max(counts.reduce(0, +) - Double(windows), 1), 1)
            func z(_ a: Int, _ b: Int) -> Double { (means[a] - means[b]) / (variance * (1 / counts[a] + 1 / counts[b])).squareRoot() }
            guard (1..<windows).allSatisfy({ z($0, $0 - 1) >= k }) else { continue }
            let total = z(windows - 1, 0)
            for (t, th) in thresholds.enumerated() where total >= th && r.time - last[t] >= 4 {
                told[t].lines.append((r.time, .warmer))
                last[t] = r.time
            }
        }
        for (t, th) in thresholds.enumerated() { rows["ramp z \(th)", default: []].append((world, scoreWalk(world, told[t]))) }
    }
    printWarmerRows(rows, ["engine warmer"] + thresholds.map { "ramp z \($0)" })
}
