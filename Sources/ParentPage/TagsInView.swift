import Bluetooth
import Game
import Ranging

/// The iBeacons the hunter hears, for the parent's "Tags in view" (pure: sightings and time
/// in). Each tag is ranged as `scan` ranges it (the same engine, every tag its own); the
/// table is bounded (64, the least recently heard out first, gone after 5 minutes unheard:
/// a street of phones cannot grow it).
public struct TagsInView {
    public struct Tag: Sendable, Equatable {
        public var key: BeaconKey
        /// `UUID:MAJOR:MINOR`: what a trail step's region is.
        public var id: String
        /// The parent's name for it (the configuration's `tags`), if any.
        public var name: String?
        /// The last packet's RSSI and the filtered level (what calibration reads).
        public var rssi: Int?
        public var level: Double?
        public var distance: DistanceEstimate?
        public var proximity: Proximity
        /// The power it advertises, and the one calibrated for it (used instead).
        public var advertisedPower: Int8
        public var calibratedPower: Int8?
        public var lastHeard: Double
        public var packets: Int

        /// What a parent reads first: the name given, else "Tag MAJOR:MINOR" (the UUID is
        /// the same on every tag of a kind).
        public var label: String { name ?? "Tag \(key.major):\(key.minor)" }

        /// The live view's JSON of this tag (the `tags` event's data).
        public func json(now: Double) -> String {
            func optional(_ value: Double?, _ decimals: Int) -> String { value.map { HTML.number($0, decimals: decimals) } ?? "null" }
            var out = "{\"id\":" + HTML.jsonString(id)
            out += ",\"name\":" + (name.map { HTML.jsonString($0) } ?? "null")
            out += ",\"level\":" + optional(level, 1)
            out += ",\"rssi\":" + (rssi.map { String($0) } ?? "null")
            out += ",\"meters\":" + optional(distance?.meters, 2)
            out += ",\"sigma\":" + optional(distance?.sigma, 2)
            out += ",\"proximity\":\"" + proximity.rawValue + "\""
            out += ",\"age\":" + HTML.number(max(0, now - lastHeard), decimals: 2)
            out += ",\"heard\":" + HTML.number(lastHeard, decimals: 3)
            out += ",\"power\":" + String(calibratedPower ?? advertisedPower)
            return out + "}"
        }
    }

    public static let capacity = 64
    public static let forgetAfter = 300.0
    /// "Hold a tag against the Pi": the strongest is this far above the next, and louder
    /// than its own power at 1 m.
    public static let nearestMargin = 10.0
    /// Calibration wants this many packets in the filter first.
    public static let calibrationPackets = 20

    private var engine: RangingEngine
    private var tags = RecentlyHeardTable<BeaconKey, Tag>(capacity: capacity)
    public var names: [BeaconKey: String]
    public var calibrations: [BeaconKey: Int8] {
        didSet { engine.calibratedBeacons = Set(calibrations.keys) }
    }

    public init(ranging: RangingConfiguration = .default, names: [BeaconKey: String] = [:], calibrations: [BeaconKey: Int8] = [:]) {
        engine = RangingEngine(configuration: ranging, regions: [], calibratedBeacons: Set(calibrations.keys))
        self.names = names
        self.calibrations = calibrations
    }

    /// One sighting (iBeacons only); true when the table changed.
    @discardableResult
    public mutating func heard(_ sighting: BeaconSighting) -> Bool {
        guard case let .iBeacon(beacon) = sighting.beacon else { return false }
        let key = BeaconKey(uuid: beacon.uuid, major: beacon.major, minor: beacon.minor)
        let s = sighting.calibrated(by: calibrations)
        let id = OutputEvent.regionText(uuid: beacon.uuid, major: beacon.major, minor: beacon.minor)
        tags.update(key, at: sighting.time, default: {
            Tag(key: key, id: id, rssi: nil, level: nil, distance: nil, proximity: .unknown, advertisedPower: beacon.measuredPower, lastHeard: sighting.time, packets: 0)
        }) { tag in
            tag.rssi = sighting.rssi.map(Int.init)
            tag.lastHeard = sighting.time
            tag.packets += 1
            tag.advertisedPower = beacon.measuredPower
        }
        apply(engine.ingest(s))
        return true
    }

    public mutating func advance(to time: Double) {
        apply(engine.advance(to: time))
        tags.removeHeard(before: time - Self.forgetAfter)
    }

    private mutating func apply(_ events: [RangingEvent]) {
        for case let .range(report) in events {
            tags.modify(report.key) { tag in
                tag.level = report.rssi.isFinite ? report.rssi : nil
                tag.distance = report.distance
                tag.proximity = report.proximity
            }
        }
    }

    /// Every tag heard, strongest first (by the filtered level; a tag not yet ranged last).
    public func strongestFirst() -> [Tag] {
        tags.entries.map { entry in
            var tag = entry.value
            tag.name = names[tag.key]
            tag.calibratedPower = calibrations[tag.key]
            return tag
        }.sorted { ($0.level ?? -200, $1.id) > ($1.level ?? -200, $0.id) }
    }

    public func tag(_ id: String) -> Tag? { strongestFirst().first { $0.id == id } }

    public enum Nearest: Equatable {
        case tag(Tag)
        /// Two are about as loud: hold one right against the Pi.
        case unclear
        case none
    }

    /// The tag held against the Pi: the strongest, clearly louder than every other and
    /// louder than its own power at 1 m (so well within 1 m).
    public func nearest() -> Nearest {
        let ranked = strongestFirst().filter { $0.level != nil }
        guard let first = ranked.first, let level = first.level else { return .none }
        let power = Double(first.calibratedPower ?? first.advertisedPower)
        guard level >= power else { return .unclear }
        if ranked.count > 1, let second = ranked[1].level, level - second < Self.nearestMargin { return .unclear }
        return .tag(first)
    }

    /// The power at 1 m a tag held 1 m from the Pi reads now (its filtered level, rounded),
    /// once enough packets were heard; nil before.
    public func calibration(_ id: String) -> Int8? {
        guard let tag = tag(id), tag.packets >= Self.calibrationPackets, let level = tag.level, level > -127, level < 20 else { return nil }
        return Int8(level.rounded())
    }
}
