#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The ranging engine: sightings in, a few trustworthy facts out.
///
/// Pure and deterministic: no clock of its own (time is the caller's seconds), no I/O.
/// `ingest` takes one sighting; `advance` lets time pass without packets so silence-based
/// decisions (lost beacons, exits, initial state) happen on time; call it from a timer.
/// Times are expected in non-decreasing order; an earlier time is treated as "now".
///
/// `heardOther` tells it of every advertiser heard that is no beacon of a region: while the
/// receiver hears nobody at all (`ReceiverHearing`: deaf), no beacon's silence counts.
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
        var atHand: AtHandDetector
        var measuredPower: Int
        var lastRange: Double?
        var regionIndices: [Int]
        /// Judged gone (proximity unknown, filter reset); kept a while for its gap model.
        var isLost = false
        /// Beacon lost deadline from the last packet (its region exit deadline is the
        /// region's `Member.deadline`).
        var lostDeadline: Double = .infinity
        /// The silence since the last packet excused as the receiver's deafness, inferred from
        /// the others' silence (at most `ReceiverHearing.longestDeafness`; a lost controller's
        /// spells are excused whole and not counted here).
        var excusedSilence = 0.0
        /// The two silence limits, recomputed on a new loss gap or rate or every 10 s (the model moves
        /// slowly in between: its memory is 10 minutes); on every packet while it is young.
        var exitLimit: Double = 0
        var lostLimit: Double = 0
        /// The exit limit when another live beacon of the region shares the budget (see
        /// `RegionSlot.isPresent`): a larger per-beacon budget, no longest-gap floor.
        var sharedExitLimit: Double = 0
        var limitsTime: Double = -Double.infinity
        var limitsRevision: Int = -1
        /// The at-hand detector's renewals already told (`RangingEvent.closerArrival`).
        var renewalsTold = 0
    }

    /// A beacon's level offset from the region's followed one (`RegionSlot.offsets`).
    private struct PoolingOffset: Sendable {
        var offset: Double
        var time: Double
        /// Since when its level has been off the offset by more than `regionPoolingDeviation`.
        var deviatingSince: Double?
    }

    private struct RegionSlot: Sendable {
        var monitor: RegionMonitor
        var nearest: NearestBeaconSelector
        var trend: TrendDetector
        /// Path loss of the region's live beacons with a filtered level.
        var losses: [BeaconKey: Double] = [:]
        /// For each beacon that lies with the followed one (`regionPoolingGate`): the followed
        /// one's level less its own, smoothed over `poolingOffsetSeconds`, and when it was last
        /// updated. At most one entry per live beacon of the region.
        var offsets: [BeaconKey: PoolingOffset] = [:]
        /// Each live beacon of the region: its last packet and its two exit limits.
        var members: [BeaconKey: Member] = [:]
        /// The latest deadline of a beacon alone (last packet + exit limit): the region is
        /// never present after it (every beacon judged gone by its own budget).
        var presentUntil: Double = -Double.infinity
        var nextNearestCheck: Double = -Double.infinity
        /// The region's last packet (any beacon), and the first of its current stay: since
        /// the region was entered or last silent longer than `maximumSilence` (an earlier
        /// visit, or one stray long ago, is no warm-up).
        var lastPacket: Double = -Double.infinity
        var firstPacket: Double = .infinity
        /// The silences of the whole region (no beacon of it heard), learned with the same
        /// model as one beacon's gaps: what shared loss looks like.
        var joint = ArrivalStatistics(unit: 0.1)
        /// For the silence after `lastPacket`, computed once when it passes
        /// `minimumSilence`: whether sharing applies and until when the region is present
        /// (forgotten on the next packet or membership change).
        var sharedUntil: Double??

        struct Member: Sendable {
            var last: Double
            var exitLimit: Double
            var sharedLimit: Double
            var deadline: Double { last + exitLimit }
        }

        mutating func setMember(_ member: Member?, for key: BeaconKey) {
            let old = members[key]?.deadline
            members[key] = member
            if let deadline = member?.deadline, deadline >= presentUntil {
                presentUntil = deadline
            } else if let old, old >= presentUntil {
                // (>=, not ==: the deadlines moved by a deaf spell are summed in another order
                // than `presentUntil` and can differ from it in the last bit.)
                presentUntil = members.values.lazy.map(\.deadline).max() ?? -Double.infinity
            }
            sharedUntil = nil
        }

        /// A packet of beacon `key` of the region at `time`, with the beacon's limits now.
        mutating func heard(_ key: BeaconKey, at time: Double, exitLimit: Double, sharedLimit: Double,
                            _ configuration: RangingConfiguration) {
            // A new stay after an exit (firstPacket is then infinite) or a long silence.
            if firstPacket == .infinity || !(time - lastPacket <= configuration.maximumSilence) { firstPacket = time }
            joint.record(time: time, configuration)
            lastPacket = max(lastPacket, time)
            excusedSilence = 0
            setMember(Member(last: time, exitLimit: exitLimit, sharedLimit: sharedLimit), for: key)
        }

        /// The silence since the region's last packet excused as inferred deafness (as
        /// `Track.excusedSilence`).
        var excusedSilence = 0.0

        /// The receiver was deaf for `spell` s until `end`: the region's silences resume where
        /// they were. An inferred spell is excused only up to `ReceiverHearing.longestDeafness`
        /// in all since the region's last packet; a silence that began inside the spell (a
        /// packet while the controller was gone) only from its start.
        mutating func moveSilences(by spell: Double, inferred: Bool, endingAt end: Double) {
            guard lastPacket.isFinite else { return }
            let seconds = min(inferred ? ReceiverHearing.excusable(spell, after: excusedSilence) : spell, max(0, end - lastPacket))
            if inferred { excusedSilence += seconds }
            guard seconds > 0 else { return }
            if !inferred { joint.excuse(seconds) }
            lastPacket += seconds
            for index in members.indices {
                members.values[index].last += min(seconds, max(0, end - members.values[index].last))
            }
            presentUntil = members.values.lazy.map(\.deadline).max() ?? presentUntil + seconds
            sharedUntil = nil
        }

        /// The region was left: the next stay warms up afresh.
        mutating func noteExit() {
            firstPacket = .infinity
            sharedUntil = nil
        }

        /// Whether the region is still present at `time` (some beacon of it not judged gone).
        ///
        /// Alone, a beacon is judged gone past its exit limit, which it exceeds while present
        /// at most `falseExitsPerHour` times an hour. With two or more live beacons of
        /// independent loss, a false exit needs all of them silent past their limits at once:
        /// two beacons each falsely gone at rate b for about their limit L make a joint one at
        /// ~2·b²·L an hour, so each may spend b = sqrt(B / 2L) (at most `sharingCap` times B)
        /// and the region still meets B. Loss shared by the beacons (a receiver busy with
        /// Wi-Fi, a body in front of the hunter) breaks that independence; it shows in
        /// the silences of the whole region, so the region is also present until its joint
        /// silence passes the limit that a model of those silences (`joint`, the same model as
        /// one beacon's gaps) sets for the same budget B. Sharing starts only after
        /// `sharingWarmUp` s of the current stay, and counts only beacons heard within their
        /// own exit limit of the region's last packet: a beacon that died stops counting once
        /// its own limit has passed (until then the region model still guards).
        mutating func isPresent(at time: Double, _ configuration: RangingConfiguration) -> Bool {
            guard time > lastPacket + configuration.minimumSilence else { return true }
            guard time <= presentUntil else { return false }
            let until: Double?
            if let cached = sharedUntil {
                until = cached
            } else {
                until = sharedDeadline(configuration)
                sharedUntil = .some(until)
            }
            guard let until else { return true }
            return time <= until
        }

        /// The end of the region's presence with its budget shared; nil when it is not.
        private func sharedDeadline(_ configuration: RangingConfiguration) -> Double? {
            guard lastPacket - firstPacket >= RangingEngine.sharingWarmUp else { return nil }
            var live = 0
            var until = -Double.infinity
            for member in members.values where lastPacket - member.last <= member.exitLimit {
                live += 1
                until = max(until, member.last + member.sharedLimit)
            }
            guard live >= 2 else { return nil }
            let jointLimit = joint.silenceLimit(falseAlarmsPerHour: configuration.falseExitsPerHour, at: lastPacket, configuration)
            return max(until, lastPacket + jointLimit)
        }
    }

    /// Regions share the false-exit budget among their live beacons only after this long
    /// (s) of hearing them: the joint silences must have been seen first.
    public static let sharingWarmUp = 120.0
    /// A beacon sharing its region's budget spends at most this many times it.
    public static let sharingCap = 20.0

    /// Per-beacon budget (an hour) when two independent beacons share `budget` for their
    /// region, each with exit limit `limit` seconds: 2·b²·L ≤ B.
    static func sharedBudget(_ budget: Double, limit: Double) -> Double {
        let hours = max(limit, 1e-3) / 3600
        return min(sharingCap * budget, max(budget, (budget / (2 * hours)).squareRoot()))
    }

    /// How long (s) a lost beacon's gap model is kept, so a beacon that comes back after a
    /// long burst is judged with what was learned of it.
    public static let lostBeaconMemory = 600.0

    private let model: LogDistanceModel
    private let proximityTemplate: ProximityClassifier
    private let atHandTemplate: AtHandDetector
    private let filterTemplate: KalmanRSSIFilter
    private var tracks: [BeaconKey: Track] = [:]
    private var slots: [RegionSlot]
    private var now: Double?
    /// What the receiver hears of everyone else (`heardOther(at:)`), to tell a deaf receiver
    /// from silent beacons.
    private var receiver = ReceiverHearing()
    /// No track can be lost or forgotten before this time (a lower bound; sweeps refresh it).
    private var nextSweep: Double = -Double.infinity

    /// How often (s) a region re-evaluates its nearest beacon on sightings of other beacons.
    private let nearestCheckInterval = 0.2

    /// Beacons tracked at once (live or recently lost); when full, the one heard longest ago
    /// is judged gone and forgotten.
    public let maximumBeacons: Int
    /// The tracks in the order they were last heard: the one to evict is found in O(1), not
    /// by walking (and copying) every track for each new beacon of a crowd.
    private var recency: RecentlyHeardTable<BeaconKey, Bool>

    /// Beacons whose advertised power is what was measured for them at 1 m in this room (the
    /// set-up's calibration, which the caller puts in their samples): their distance's
    /// interval uses `calibratedEnvironmentSigma`, everyone else's `environmentSigma`.
    public var calibratedBeacons: Set<BeaconKey>

    public init(configuration: RangingConfiguration = .default, regions: [Region] = [], maximumBeacons: Int = 1024,
                atHand: AtHandDetector? = nil, calibratedBeacons: Set<BeaconKey> = []) {
        self.configuration = configuration
        self.calibratedBeacons = calibratedBeacons
        self.maximumBeacons = max(1, maximumBeacons)
        self.recency = RecentlyHeardTable(capacity: self.maximumBeacons + 1)
        self.regions = regions
        self.model = LogDistanceModel(configuration: configuration)
        self.proximityTemplate = ProximityClassifier(configuration: configuration)
        self.atHandTemplate = atHand ?? AtHandDetector(configuration: configuration)
        self.filterTemplate = KalmanRSSIFilter(configuration: configuration)
        self.slots = regions.map {
            RegionSlot(monitor: RegionMonitor(region: $0),
                       nearest: NearestBeaconSelector(margin: configuration.nearestMargin,
                                                      dwell: configuration.nearestDwell),
                       trend: TrendDetector(configuration: configuration))
        }
    }

    /// Number of beacons currently tracked (seen and not yet judged gone).
    public var trackedBeaconCount: Int { tracks.values.count { !$0.isLost } }

    /// Current state of every region, in the order given at init.
    public var regionStates: [RegionState] { slots.map(\.monitor.state) }

    /// Current nearest beacon of a region, if any.
    public func nearest(inRegion name: RegionID) -> BeaconKey? {
        slots.first { $0.monitor.region.name == name }?.nearest.current
    }

    /// Silence (s) after which a beacon alone counts as gone for its region (exit), as
    /// learned from its gaps (a region of several live beacons may be left sooner: they
    /// share its budget); `nil` for a beacon not tracked.
    public func exitSilenceLimit(for key: BeaconKey) -> Double? {
        tracks[key]?.exitLimit
    }

    /// Silence (s) after which a beacon is judged lost (proximity unknown); `nil` for a
    /// beacon not tracked.
    public func lostSilenceLimit(for key: BeaconKey) -> Double? {
        guard let track = tracks[key], let last = track.arrivals.lastTime else { return nil }
        return track.lostDeadline - last
    }

    public mutating func ingest(_ sample: RangingSample) -> [RangingEvent] {
        heard(at: sample.time)
        var events = advance(to: sample.time)
        let time = now ?? sample.time
        let key = sample.key

        var track: Track
        // Taken out of the table while it changes, so its arrays are not copied on write.
        if let existing = tracks.removeValue(forKey: key) {
            track = existing
        } else {
            let indices = regions.indices.filter { regions[$0].contains(key) }
            if !regions.isEmpty && indices.isEmpty { return events }
            if tracks.count >= maximumBeacons { evictOldest(at: time, into: &events) }
            track = Track(filter: filterTemplate, proximity: proximityTemplate, atHand: atHandTemplate,
                          measuredPower: sample.measuredPower, regionIndices: indices)
        }
        track.isLost = false
        // The packet proves presence even when its RSSI is unusable.
        track.arrivals.record(time: time, configuration)
        if track.arrivals.revision != track.limitsRevision || time - track.limitsTime >= 10 || track.arrivals.count <= 64 {
            track.exitLimit = track.arrivals.silenceLimit(falseAlarmsPerHour: configuration.falseExitsPerHour,
                                                          at: time, configuration)
            track.lostLimit = max(track.exitLimit,
                                  track.arrivals.silenceLimit(falseAlarmsPerHour: configuration.falseUnknownsPerHour,
                                                              at: time, configuration))
            // Young beacons (recomputed every packet) do not share: the region waits
            // `sharingWarmUp` anyway.
            track.sharedExitLimit = track.arrivals.count <= 64 || track.regionIndices.isEmpty ? track.exitLimit
                : min(track.exitLimit,
                      track.arrivals.silenceLimit(falseAlarmsPerHour: Self.sharedBudget(configuration.falseExitsPerHour,
                                                                                         limit: track.exitLimit),
                                                  at: time, configuration, longestGapFloor: false))
            track.limitsTime = time
            track.limitsRevision = track.arrivals.revision
        }
        track.lostDeadline = time + track.lostLimit
        track.excusedSilence = 0
        track.measuredPower = sample.measuredPower
        let accepted = track.filter.update(rssi: sample.rssi, time: time)
        nextSweep = min(nextSweep, track.lostDeadline)

        var loss: Double?
        if accepted, let level = track.filter.level {
            let estimate = model.estimate(measuredPower: track.measuredPower, rssi: level,
                                          rssiVariance: track.filter.variance,
                                          environmentSigma: calibratedBeacons.contains(key) ? configuration.calibratedEnvironmentSigma : nil)
            if estimate != nil {
                let pathLoss = model.pathLoss(measuredPower: track.measuredPower, rssi: level)
                loss = pathLoss
                // At hand (a child standing at the treasure, see AtHandDetector) is immediate
                // while it lasts; otherwise the classifier's own rule.
                if let rssi = sample.rssi {
                    let readingLoss = Double(track.measuredPower - rssi)
                    _ = track.atHand.update(readingLoss: readingLoss, noiseVariance: track.filter.noiseVariance, time: time)
                    // The beacons that lie with this one hear its packet too.
                    for partner in partners(of: key, loss: pathLoss, in: track.regionIndices) {
                        let noise = tracks[partner]?.filter.noiseVariance ?? track.filter.noiseVariance
                        _ = tracks[partner]?.atHand.update(readingLoss: readingLoss, noiseVariance: noise, time: time)
                    }
                }
                // While an arrival is being judged (the level rose well past the last minute's),
                // the class waits for the verdict: a child standing at the treasure is not told
                // "near" while the evidence for "at hand" gathers.
                let change = track.atHand.isAtHand ? track.proximity.force(.immediate)
                    : track.atHand.arrivalSince != nil ? nil
                    : track.proximity.update(pathLoss: pathLoss, time: time,
                                             mayCommit: track.filter.count >= configuration.proximityMinimumPackets,
                                             settled: track.filter.count >= ProximityClassifier.settledReadings)
                if let change, !regions.isEmpty {
                    events.append(.proximity(time: time, key: key, from: change.from, to: change.to))
                }
                // At hand again, much nearer than where it was found (its own packets or a
                // partner's may have renewed it).
                if track.atHand.renewals != track.renewalsTold {
                    track.renewalsTold = track.atHand.renewals
                    if track.atHand.isAtHand, track.proximity.committed == .immediate, !regions.isEmpty {
                        events.append(.closerArrival(time: time, key: key))
                    }
                }
            }
            if track.lastRange.map({ time - $0 >= configuration.rangeInterval }) ?? true {
                track.lastRange = time
                events.append(.range(RangeReport(time: time, key: key, rssi: level, distance: estimate,
                                                 proximity: track.proximity.committed,
                                                 readingRate: track.atHand.readingRate(at: time, over: RangeReport.readingRateSpan))))
            }
        }
        tracks[key] = track
        recency.set(key, true, at: time)

        for index in track.regionIndices {
            slots[index].heard(key, at: time, exitLimit: track.exitLimit, sharedLimit: track.sharedExitLimit, configuration)
            if let transition = slots[index].monitor.packet(at: time, from: key, configuration) {
                events.append(regionEvent(transition, index: index, time: time))
            }
            if let loss { slots[index].losses[key] = loss }
            guard slots[index].monitor.state == .inside else { continue }
            let isCurrent = slots[index].nearest.current == key
            if isCurrent || slots[index].nearest.current == nil || time >= slots[index].nextNearestCheck {
                updateNearest(index: index, time: time, into: &events)
            }
            // The trend follows the nearest beacon's readings, and those of the beacons that lie
            // with it mapped onto its level (this reading less this beacon's level, plus the
            // nearest's).
            if accepted, let followed = slots[index].nearest.current, let rssi = sample.rssi,
               let value = followed == key ? Double(rssi)
                   : pooledReading(rssi, of: key, track: track, loss: loss, followed: followed, index: index, time: time),
               let trend = slots[index].trend.update(value: value, time: time,
                                                     noiseVariance: track.filter.noiseVariance,
                                                     dipUndone: pooledDipUndone(track, followed: followed, index: index)) {
                events.append(.trend(time: time, region: regions[index].name, trend: trend))
            }
        }
        return events
    }

    public mutating func advance(to time: Double) -> [RangingEvent] {
        let time = max(time, now ?? time)
        now = time
        var events: [RangingEvent] = []
        // A deaf receiver's silence says nothing of the beacons: no beacon is lost and no
        // region left while it lasts (their silences resume where they were when it ends).
        // A spell inferred from the others' silence excuses at most what is left of
        // `ReceiverHearing.longestDeafness` for the silence of each beacon and region.
        let gone = receiver.lostSince != nil
        let spell = gone ? nil : receiver.spell(at: time)
        if time >= nextSweep, !gone { sweep(at: time, spell: spell, into: &events) }
        for index in slots.indices {
            // Only an inside region can be left (the rule walks its beacons once per silence).
            let excused = spell.map { ReceiverHearing.excusable($0, after: slots[index].excusedSilence) } ?? 0
            let present = slots[index].monitor.state != .inside || gone
                || slots[index].isPresent(at: time - excused, configuration)
            guard let transition = slots[index].monitor.advance(to: time, anyPresent: present, configuration) else { continue }
            events.append(regionEvent(transition, index: index, time: time))
            if transition == .exited {
                slots[index].noteExit()
                slots[index].nearest.reset()
                slots[index].trend.reset()
                slots[index].offsets = [:]
            }
        }
        return events
    }

    /// The receiver heard an advertiser that is no beacon of a region (a phone, a watch, a
    /// beacon of no region) at `time`: call it for every such advertising report. While
    /// everyone it usually hears is silent at once, the receiver is deaf (Wi-Fi on the
    /// shared antenna, a crowded band, a controller busy or resetting), and no beacon's
    /// silence counts (`ReceiverHearing`). A receiver that hears nobody else never counts as
    /// deaf: without bystanders the rules are as they were.
    public mutating func heardOther(at time: Double) {
        heard(at: time)
        receiver.heardOther(at: max(time, now ?? time))
    }

    /// The receiver itself went away at `time` (the adapter unplugged, reset, its transport
    /// closed): deaf until `receiverBack(at:)`, however long; no beacon lost and no region
    /// left meanwhile.
    public mutating func receiverLost(at time: Double) {
        receiver.lost(at: max(time, now ?? time))
    }

    /// The receiver is back at `time`: every silence resumes where it was when it went.
    public mutating func receiverBack(at time: Double) {
        let time = max(time, now ?? time)
        if let spell = receiver.back(at: time) { moveSilences(by: spell, inferred: false, endingAt: time) }
    }

    /// Anything heard at `time`: a deaf spell that ends here moves every silence on by its
    /// length (the beacons' last packets and deadlines, as if heard that much later).
    private mutating func heard(at time: Double) {
        let time = max(time, now ?? time)
        if let spell = receiver.heard(at: time) { moveSilences(by: spell, inferred: true, endingAt: time) }
    }

    /// Moves every silence on by `spell`. A spell inferred from the others' silence
    /// (`inferred`) is excused only up to `ReceiverHearing.longestDeafness` in all per silence
    /// of a beacon or region: others that come in bursts (a phone heard for a moment every
    /// 40 s) make every pause between bursts look like deafness, and a beacon gone for good
    /// was then judged gone only during the bursts (a 10 s limit after 20 minutes). A
    /// controller gone by its own word excuses its whole spell, but of a silence that began
    /// inside it (a packet while the controller was gone) only the part after that packet:
    /// the spell ends at `end`.
    private mutating func moveSilences(by spell: Double, inferred: Bool, endingAt end: Double) {
        for index in tracks.indices where !tracks.values[index].isLost {
            let excusable = inferred ? ReceiverHearing.excusable(spell, after: tracks.values[index].excusedSilence) : spell
            let seconds = min(excusable, max(0, end - (tracks.values[index].arrivals.lastTime ?? end - spell)))
            tracks.values[index].lostDeadline += seconds
            // Nor is a controller's own outage a loss gap to learn from: a reset of 6 s made
            // the beacon's loss limit 31 s for the next 20 minutes. (An inferred spell is
            // learned as it was: the silences the receiver shares with everyone recur, and
            // the limits that know them keep a beacon from being lost in the next one the
            // others happen to be heard through.)
            if inferred {
                tracks.values[index].excusedSilence += seconds
            } else {
                tracks.values[index].arrivals.excuse(seconds)
            }
        }
        nextSweep = -Double.infinity
        for index in slots.indices { slots[index].moveSilences(by: spell, inferred: inferred, endingAt: end) }
    }

    /// Beacons past their lost deadline are judged gone; lost ones past their memory forgotten.
    /// `spell`: the deaf spell inferred from the others' silence in progress (its length so
    /// far), which moves each live beacon's deadline on by what it may still excuse.
    private mutating func sweep(at time: Double, spell: Double?, into events: inout [RangingEvent]) {
        var earliest = Double.infinity
        var lost: [BeaconKey] = []
        var forgotten: [BeaconKey] = []
        for (key, track) in tracks {
            let excused = spell.map { ReceiverHearing.excusable($0, after: track.excusedSilence) } ?? 0
            if track.isLost {
                let forget = (track.arrivals.lastTime ?? time) + Self.lostBeaconMemory
                if time > forget { forgotten.append(key) } else { earliest = min(earliest, forget) }
            } else if time - excused > track.lostDeadline {
                lost.append(key)
                earliest = min(earliest, (track.arrivals.lastTime ?? time) + Self.lostBeaconMemory)
            } else {
                earliest = min(earliest, track.lostDeadline)
            }
        }
        nextSweep = earliest
        for key in forgotten {
            tracks[key] = nil
            recency.remove(key)
        }
        // Deterministic order for the events.
        lost.sort { ($0.uuid.uuidString, $0.major, $0.minor) < ($1.uuid.uuidString, $1.major, $1.minor) }
        for key in lost { markLost(key, at: time, into: &events) }
    }

    /// A true absence: proximity unknown (committed at once), one last range without a
    /// distance, the filter forgotten; the gap model is kept.
    private mutating func markLost(_ key: BeaconKey, at time: Double, into events: inout [RangingEvent]) {
        guard var track = tracks[key], !track.isLost else { return }
        if let change = track.proximity.markLost(), !regions.isEmpty {
            events.append(.proximity(time: time, key: key, from: change.from, to: change.to))
        }
        if let level = track.filter.level {
            events.append(.range(RangeReport(time: time, key: key, rssi: level, distance: nil,
                                             proximity: .unknown)))
        }
        track.filter.reset()
        track.atHand = atHandTemplate
        track.lastRange = nil
        track.isLost = true
        tracks[key] = track
        for index in track.regionIndices {
            slots[index].losses[key] = nil
            slots[index].offsets[key] = nil
            slots[index].setMember(nil, for: key)
            if slots[index].nearest.current == key {
                slots[index].trend.reset()
                updateNearest(index: index, time: time, into: &events)
            }
        }
    }

    /// The table is full: forget the beacon heard longest ago (judged gone first if it
    /// was not).
    private mutating func evictOldest(at time: Double, into events: inout [RangingEvent]) {
        guard let oldest = recency.oldestKey else { return }
        markLost(oldest, at: time, into: &events)
        tracks[oldest] = nil
        recency.remove(oldest)
    }

    private mutating func updateNearest(index: Int, time: Double, into events: inout [RangingEvent]) {
        slots[index].nextNearestCheck = time + nearestCheckInterval
        let before = slots[index].nearest.current
        if let chosen = slots[index].nearest.update(losses: slots[index].losses, time: time), chosen != before {
            // To a beacon that lies with the old one (it has an offset from it): the offsets
            // move onto the new one's level, and so do the trend's readings, unless the two
            // levels disagree now (a body in front of the old one made the switch, and its dip
            // is in the trend's window: the trend starts afresh). Otherwise both start afresh.
            if let before, let toNew = slots[index].offsets[chosen], let old = tracks[before]?.filter.level,
               let new = tracks[chosen]?.filter.level {
                // Level(new) - level(old) is -toNew.offset as they usually lie.
                let agree = toNew.deviatingSince == nil && abs(old - new - toNew.offset) <= configuration.regionPoolingDeviation
                if agree { slots[index].trend.shift(by: -toNew.offset) } else { slots[index].trend.reset() }
                for (key, entry) in slots[index].offsets {
                    slots[index].offsets[key] = PoolingOffset(offset: entry.offset - toNew.offset, time: entry.time,
                                                              deviatingSince: entry.deviatingSince)
                }
                slots[index].offsets[chosen] = nil
                slots[index].offsets[before] = PoolingOffset(offset: -toNew.offset, time: time, deviatingSince: agree ? nil : time)
            } else {
                slots[index].trend.reset()
                slots[index].offsets = [:]
            }
            events.append(.nearest(time: time, region: regions[index].name, key: chosen))
        }
    }

    /// The other live beacons of exactly `key`'s regions (a tag of another treasure of a
    /// trail is in another step's region, though both may be in a wider one) whose path loss
    /// lies within `regionPoolingGate` of its own (`loss`, dB re 1 m).
    private func partners(of key: BeaconKey, loss: Double, in regionIndices: [Int]) -> [BeaconKey] {
        guard configuration.regionPoolingGate > 0, let index = regionIndices.first else { return [] }
        let all = slots[index].losses.keys.filter {
            $0 != key && liesWith($0, loss: loss, regionIndices: regionIndices, index: index)
        }
        guard all.count > Self.maximumPartners else { return all }
        // Made-up minors of a region's UUID (one phone can cycle a thousand) all lie
        // together: every packet went to every one's at hand, 4 ms a packet on a desktop
        // core. A chest holds a few tags: the nearest in loss are its partners.
        // The nearest few in one pass (no sort of a thousand keys a packet).
        let losses = slots[index].losses
        var nearest: [(key: BeaconKey, gap: Double)] = []
        for other in all {
            let gap = abs((losses[other] ?? loss) - loss)
            guard nearest.count < Self.maximumPartners || gap < (nearest.last?.gap ?? .infinity) else { continue }
            let at = nearest.firstIndex { $0.gap > gap } ?? nearest.endIndex
            nearest.insert((other, gap), at: at)
            if nearest.count > Self.maximumPartners { nearest.removeLast() }
        }
        return nearest.map(\.key)
    }

    /// The most beacons that hear one beacon's packet (`partners`): the tags of one chest.
    static let maximumPartners = 3

    /// Whether a beacon of exactly `regionIndices` at path loss `loss` (dB re 1 m) lies with
    /// `other`: `other` is of the same regions and its last path loss in region `index` is
    /// within `regionPoolingGate` of `loss` (tags of one chest differ by their power errors;
    /// tags at spots a child walks between, by more wherever one of them is near).
    private func liesWith(_ other: BeaconKey, loss: Double, regionIndices: [Int], index: Int) -> Bool {
        guard configuration.regionPoolingGate > 0, let otherLoss = slots[index].losses[other] else { return false }
        return abs(otherLoss - loss) <= configuration.regionPoolingGate && tracks[other]?.regionIndices == regionIndices
    }

    /// The last fall undone (`KalmanRSSIFilter.lastDipUndone`) of any beacon whose readings
    /// the region's trend hears: this one, the followed one and those that lie with it (a
    /// body that passed one of them leaves its dip in the trend's window).
    private func pooledDipUndone(_ track: Track, followed: BeaconKey, index: Int) -> Double? {
        // Without sharing the offsets are empty and the followed beacon is this one.
        var last = track.filter.lastDipUndone
        func consider(_ key: BeaconKey) {
            if let dip = tracks[key]?.filter.lastDipUndone, dip > (last ?? -.infinity) { last = dip }
        }
        consider(followed)
        for key in slots[index].offsets.keys { consider(key) }
        return last
    }

    /// How long (s) the level offset between two beacons that lie together is smoothed over:
    /// their filtered levels each lag and jitter; the offset between them (their power
    /// errors' difference) does not move.
    static let poolingOffsetSeconds = 20.0

    /// A reading of `key`, a beacon that lies with region `index`'s followed one, on the
    /// followed one's level (its own reading plus the smoothed offset between their levels,
    /// which it updates); nil when it does not lie with it (or either has no level yet).
    private mutating func pooledReading(_ rssi: Int, of key: BeaconKey, track: Track, loss: Double?, followed: BeaconKey, index: Int,
                                        time: Double) -> Double? {
        guard let loss, liesWith(followed, loss: loss, regionIndices: track.regionIndices, index: index),
              let level = track.filter.level, let followedLevel = tracks[followed]?.filter.level else { return nil }
        let now = followedLevel - level
        guard let entry = slots[index].offsets[key] else {
            slots[index].offsets[key] = PoolingOffset(offset: now, time: time)
            return Double(rssi) + now
        }
        // A body or a wall in front of one of them only (or beacons that do not lie together
        // after all): the readings stay out and the offset stands, until their levels agree
        // again; a disagreement that lasts `poolingOffsetSeconds` is a new offset.
        guard abs(now - entry.offset) <= configuration.regionPoolingDeviation else {
            let since = entry.deviatingSince ?? time
            slots[index].offsets[key] = time - since >= Self.poolingOffsetSeconds
                ? PoolingOffset(offset: now, time: time)
                : PoolingOffset(offset: entry.offset, time: entry.time, deviatingSince: since)
            return nil
        }
        let weight = 1 - exp(-max(0, time - entry.time) / Self.poolingOffsetSeconds)
        let offset = entry.offset + weight * (now - entry.offset)
        slots[index].offsets[key] = PoolingOffset(offset: offset, time: time)
        return Double(rssi) + offset
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
