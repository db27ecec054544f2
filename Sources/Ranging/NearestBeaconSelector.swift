/// The nearest beacon of a region, by path loss (dB re 1 m, so beacons with different
/// measured powers compare fairly). A challenger replaces the current nearest only when
/// its path loss is lower by `margin` dB continuously for `dwell` seconds. If the current
/// nearest disappears, the best remaining one takes over at once.
public struct NearestBeaconSelector: Sendable, Equatable {
    public let margin: Double
    public let dwell: Double
    public private(set) var current: BeaconKey?
    private var challenger: BeaconKey?
    private var challengerSince: Double = 0

    public init(margin: Double, dwell: Double) {
        self.margin = margin
        self.dwell = dwell
    }

    /// `losses`: path loss of every live beacon of the region. Returns the new nearest when
    /// it changed.
    public mutating func update(losses: [BeaconKey: Double], time: Double) -> BeaconKey? {
        guard let best = losses.min(by: { $0.value < $1.value || ($0.value == $1.value && $0.key.description < $1.key.description) }) else {
            current = nil
            challenger = nil
            return nil
        }
        guard let currentKey = current, let currentLoss = losses[currentKey] else {
            current = best.key
            challenger = nil
            return best.key
        }
        guard best.key != currentKey, currentLoss - best.value >= margin else {
            challenger = nil
            return nil
        }
        if challenger != best.key {
            challenger = best.key
            challengerSince = time
        }
        guard time - challengerSince >= dwell else { return nil }
        current = best.key
        challenger = nil
        return best.key
    }

    public mutating func reset() {
        current = nil
        challenger = nil
    }
}
