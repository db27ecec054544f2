import Bluetooth
import Hunt
import Ranging

extension BeaconKey {
    /// The ranging key of an iBeacon sighting (the hunt is for iBeacons); nil for the others.
    public init?(_ sighting: BeaconSighting) {
        guard case let .iBeacon(b) = sighting.beacon else { return nil }
        self.init(uuid: b.uuid, major: b.major, minor: b.minor)
    }
}

extension RangingSample {
    /// A sighting as the engine's input, for iBeacons only.
    public init?(_ sighting: BeaconSighting) {
        guard case let .iBeacon(b) = sighting.beacon else { return nil }
        self.init(
            key: BeaconKey(uuid: b.uuid, major: b.major, minor: b.minor), measuredPower: Int(b.measuredPower),
            rssi: sighting.rssi.map(Int.init), time: sighting.time)
    }
}

extension BeaconSighting {
    /// The sighting with an iBeacon's advertised power replaced by the one measured for it at
    /// set-up (`tags[].power`), when there is one: what every ranging of the hunter's file
    /// (the hunt, `scan`, the parent's page) takes in, so they agree on its distance.
    public func calibrated(by calibrations: [BeaconKey: Int8]) -> BeaconSighting {
        guard case let .iBeacon(b) = beacon, let power = calibrations[BeaconKey(uuid: b.uuid, major: b.major, minor: b.minor)] else {
            return self
        }
        var s = self
        s.beacon = .iBeacon(IBeacon(uuid: b.uuid, major: b.major, minor: b.minor, measuredPower: power))
        return s
    }
}

extension RangingEngine {
    /// The one path from a sighting to the ranging engine (hunter, treasure box, scan,
    /// replay): an iBeacon's packet ingested at the sighting's time; others are not ranged.
    public mutating func ingest(_ sighting: BeaconSighting) -> [RangingEvent] {
        guard let sample = RangingSample(sighting) else { return [] }
        return ingest(sample)
    }
}

/// The tags (what a finder announces, `TreasureSignals.tag`) of a trail's steps that name
/// one beacon (`UUID:MAJOR:MINOR`): tag -> step (0-based).
public enum TrailTags {
    public static func named(_ trail: [TrailStep]) -> [UInt16: Int] {
        var tags: [UInt16: Int] = [:]
        for (i, step) in trail.enumerated() {
            guard let major = step.region.major, let minor = step.region.minor else { continue }
            tags[TreasureSignals.tag(of: IBeacon(uuid: step.region.uuid, major: major, minor: minor, measuredPower: -59))] = i
        }
        return tags
    }
}
