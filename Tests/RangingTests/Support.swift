import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Ranging

let testUUID = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0") ?? UUID()
let otherUUID = UUID(uuidString: "FDA50693-A4E2-4FB1-AFCF-C6EB07647825") ?? UUID()

func key(_ minor: UInt16, major: UInt16 = 1, uuid: UUID = testUUID) -> BeaconKey {
    BeaconKey(uuid: uuid, major: major, minor: minor)
}

func sample(_ minor: UInt16, _ rssi: Int?, at time: Double, measuredPower: Int = -59) -> RangingSample {
    RangingSample(key: key(minor), measuredPower: measuredPower, rssi: rssi, time: time)
}

/// Configuration with the textbook exponent 2 so that expected numbers are easy to read.
func exponentTwo() -> RangingConfiguration {
    var configuration = RangingConfiguration.default
    configuration.pathLossExponent = 2
    return configuration
}

/// RSSI at `meters` under exponent 2 and measured power -59.
func rssi(atMeters meters: Double) -> Int {
    Int((-59 - 20 * log10(meters)).rounded())
}

/// Feeds `count` packets of one beacon, `interval` apart from `start`; returns all events.
func feed(_ engine: inout RangingEngine, minor: UInt16 = 1, rssi: Int?, from start: Double, count: Int,
          interval: Double = 0.1, measuredPower: Int = -59) -> [RangingEvent] {
    var events: [RangingEvent] = []
    for i in 0..<count {
        events += engine.ingest(sample(minor, rssi, at: start + Double(i) * interval, measuredPower: measuredPower))
    }
    return events
}

extension RangingEvent {
    var proximityChange: (key: BeaconKey, from: Proximity, to: Proximity)? {
        if case .proximity(_, let key, let from, let to) = self { return (key, from, to) }
        return nil
    }

    var rangeReport: RangeReport? {
        if case .range(let report) = self { return report }
        return nil
    }

    var isRegionEvent: Bool {
        switch self {
        case .regionState, .regionEnter, .regionExit: true
        default: false
        }
    }

    var isEnter: Bool {
        if case .regionEnter = self { return true }
        return false
    }

    var isExit: Bool {
        if case .regionExit = self { return true }
        return false
    }

    var regionStateValue: RegionState? {
        if case .regionState(_, _, let state) = self { return state }
        return nil
    }

    var nearestKey: BeaconKey? {
        if case .nearest(_, _, let key) = self { return key }
        return nil
    }

    var trendValue: Trend? {
        if case .trend(_, _, let trend) = self { return trend }
        return nil
    }
}
