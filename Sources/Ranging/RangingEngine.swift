/// The ranging engine: sightings in, a few trustworthy facts out.
///
/// Pure and deterministic: no clock of its own (time is the caller's seconds), no I/O.
/// `ingest` takes one sighting; `advance` lets time pass without packets so silence-based
/// decisions (lost beacons, exits, initial state) happen on time; call it from a timer.
/// Times are expected in non-decreasing order; an earlier time is treated as "now".
///
/// Without regions every beacon is ranged and no region, nearest, trend or proximity-change
/// events come out. With regions only beacons of a region are ranged; proximity changes
/// are reported for them.
public struct RangingEngine: Sendable {
    public let configuration: RangingConfiguration
    public let regions: [Region]

    private struct Track: Sendable {
        var filter: KalmanRSSIFilter
        var arrivals = ArrivalStatistics()
        var proximity: ProximityClassifier
        var measuredPower: Int
        var lastRange: Double?
        var regionIndices: [Int]
    }

    private struct RegionSlot: Sendable {
        var monitor: RegionMonitor
        var nearest: NearestBeaconSelector
        var trend: TrendDetector
        /// Path loss of the region's live beacons with a filtered level.
        var losses: [BeaconKey: Double] = [:]
        var nextNearestCheck: Double = -Double.infinity
    }

    private let model: LogDistanceModel
    private let proximityTemplate: ProximityClassifier
    private let filterTemplate: KalmanRSSIFilter
    private var tracks: [BeaconKey: Track] = [:]
    private var slots: [RegionSlot]
    private var now: Double?
    /// No track can be silent before this time (a lower bound; sweeps refresh it).
    private var nextSweep: Double = -Double.infinity

    /// How often (s) a region re-evaluates its nearest beacon on sightings of other beacons.
    private let nearestCheckInterval = 0.2

    public init(configuration: RangingConfiguration = .default, regions: [Region] = []) {
        self.configuration = configuration
        self.regions = regions
        self.model = LogDistanceModel(configuration: configuration)
        self.proximityTemplate = ProximityClassifier(configuration: configuration)
        self.filterTemplate = KalmanRSSIFilter(configuration: configuration)
        self.slots = regions.map {
            RegionSlot(monitor: RegionMonitor(region: $0),
                       nearest: NearestBeaconSelector(margin: configuration.nearestMargin,
                                                      dwell: configuration.nearestDwell),
                       trend: TrendDetector(configuration: configuration))
        }
    }

    /// Number of beacons currently tracked (seen and not yet lost).
    public var trackedBeaconCount: Int { tracks.count }

    /// Current state of every region, in the order given at init.
    public var regionStates: [RegionState] { slots.map(\.monitor.state) }

    /// Current nearest beacon of a region, if any.
    public func nearest(inRegion name: String) -> BeaconKey? {
        slots.first { $0.monitor.region.name == name }?.nearest.current
    }

    public mutating func ingest(_ sample: RangingSample) -> [RangingEvent] {
        var events = advance(to: sample.time)
        let time = now ?? sample.time
        let key = sample.key

        var track: Track
        if let existing = tracks[key] {
            track = existing
        } else {
            let indices = regions.indices.filter { regions[$0].contains(key) }
            if !regions.isEmpty && indices.isEmpty { return events }
            track = Track(filter: filterTemplate, proximity: proximityTemplate,
                          measuredPower: sample.measuredPower, regionIndices: indices)
        }
        // The packet proves presence even when its RSSI is unusable.
        track.arrivals.record(time: time, falseAlarmsPerHour: configuration.falseUnknownsPerHour, configuration)
        track.measuredPower = sample.measuredPower
        let accepted = track.filter.update(rssi: sample.rssi, time: time)
        nextSweep = min(nextSweep, time + track.arrivals.silenceLimit(falseAlarmsPerHour: configuration.falseUnknownsPerHour, configuration))

        var loss: Double?
        if accepted, let level = track.filter.level {
            let estimate = model.estimate(measuredPower: track.measuredPower, rssi: level,
                                          rssiVariance: track.filter.variance)
            if estimate != nil {
                let pathLoss = model.pathLoss(measuredPower: track.measuredPower, rssi: level)
                loss = pathLoss
                if track.filter.count >= configuration.proximityMinimumPackets,
                   let change = track.proximity.update(pathLoss: pathLoss, time: time),
                   !regions.isEmpty {
                    events.append(.proximity(time: time, key: key, from: change.from, to: change.to))
                }
            }
            if track.lastRange.map({ time - $0 >= configuration.rangeInterval }) ?? true {
                track.lastRange = time
                events.append(.range(RangeReport(time: time, key: key, rssi: level, distance: estimate,
                                                 proximity: track.proximity.committed)))
            }
        }
        tracks[key] = track

        for index in track.regionIndices {
            if let transition = slots[index].monitor.packet(at: time, configuration) {
                events.append(regionEvent(transition, index: index, time: time))
            }
            if let loss { slots[index].losses[key] = loss }
            guard slots[index].monitor.state == .inside else { continue }
            let isCurrent = slots[index].nearest.current == key
            if isCurrent || slots[index].nearest.current == nil || time >= slots[index].nextNearestCheck {
                updateNearest(index: index, time: time, into: &events)
            }
            if accepted, slots[index].nearest.current == key, let level = track.filter.level,
               let trend = slots[index].trend.update(value: level, time: time) {
                events.append(.trend(time: time, region: regions[index].name, trend: trend))
            }
        }
        return events
    }

    public mutating func advance(to time: Double) -> [RangingEvent] {
        let time = max(time, now ?? time)
        now = time
        var events: [RangingEvent] = []
        if time >= nextSweep { sweepLostBeacons(at: time, into: &events) }
        for index in slots.indices {
            guard let transition = slots[index].monitor.advance(to: time, configuration) else { continue }
            events.append(regionEvent(transition, index: index, time: time))
            if transition == .exited {
                slots[index].nearest.reset()
                slots[index].trend.reset()
            }
        }
        return events
    }

    private mutating func sweepLostBeacons(at time: Double, into events: inout [RangingEvent]) {
        var earliest = Double.infinity
        var lost: [BeaconKey] = []
        for (key, track) in tracks {
            guard let last = track.arrivals.lastTime else { continue }
            let deadline = last + track.arrivals.silenceLimit(falseAlarmsPerHour: configuration.falseUnknownsPerHour, configuration)
            if time > deadline { lost.append(key) } else { earliest = min(earliest, deadline) }
        }
        nextSweep = earliest
        // Deterministic order for the events.
        lost.sort { ($0.uuid.uuidString, $0.major, $0.minor) < ($1.uuid.uuidString, $1.major, $1.minor) }
        for key in lost {
            guard var track = tracks.removeValue(forKey: key) else { continue }
            if let change = track.proximity.markLost(), !regions.isEmpty {
                events.append(.proximity(time: time, key: key, from: change.from, to: change.to))
            }
            if let level = track.filter.level {
                events.append(.range(RangeReport(time: time, key: key, rssi: level, distance: nil,
                                                 proximity: .unknown)))
            }
            track.filter.reset()
            for index in track.regionIndices {
                slots[index].losses[key] = nil
                if slots[index].nearest.current == key {
                    slots[index].trend.reset()
                    updateNearest(index: index, time: time, into: &events)
                }
            }
        }
    }

    private mutating func updateNearest(index: Int, time: Double, into events: inout [RangingEvent]) {
        slots[index].nextNearestCheck = time + nearestCheckInterval
        let before = slots[index].nearest.current
        if let chosen = slots[index].nearest.update(losses: slots[index].losses, time: time), chosen != before {
            slots[index].trend.reset()
            events.append(.nearest(time: time, region: regions[index].name, key: chosen))
        }
    }

    private func regionEvent(_ transition: RegionMonitor.Transition, index: Int, time: Double) -> RangingEvent {
        let name = regions[index].name
        switch transition {
        case .determined(let state): return .regionState(time: time, region: name, state: state)
        case .entered: return .regionEnter(time: time, region: name)
        case .exited: return .regionExit(time: time, region: name)
        }
    }
}
