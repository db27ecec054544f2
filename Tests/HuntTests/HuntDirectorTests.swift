import FoundationEssentials
import Hunt
import Ranging
import Testing
#if canImport(Glibc)
import Glibc
#endif

let region: RegionID = "treasure"
let key = BeaconKey(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0") ?? UUID(), major: 1, minor: 1)
let other = BeaconKey(uuid: key.uuid, major: 1, minor: 2)

/// A director with a 3 s found hold (the default is 1 s since at hand needs ~2 s at the
/// treasure itself; these tests time the hold, not its length).
func director() -> HuntDirector {
    var configuration = HuntDirector.Configuration(region: region)
    configuration.foundHold = 3
    return HuntDirector(configuration: configuration)
}

/// A director inside the region since 0 s, its enter line said by 2 s, `key` the nearest.
func enteredDirector() -> HuntDirector {
    var d = director()
    _ = d.feed(.regionEnter(time: 0, region: region))
    _ = d.handle(.speechFinished, at: 2)
    _ = d.feed(.nearest(time: 2, region: region, key: key))
    return d
}

/// A range report of `beacon` at `time`, about 1 m away, heard `rate` times a second (nil: not known).
func rangeHeard(_ beacon: BeaconKey, rate: Double?, at time: Double) -> RangingEvent {
    .range(RangeReport(time: time, key: beacon, rssi: -60, distance: DistanceEstimate(meters: 1, logSigma: 0.3),
                       proximity: .near, readingRate: rate))
}

/// Entered, nearest `key`, "near" said at 3 s and finished at 4 s, with `configure`'s changes.
func directorSaidNear(_ configure: (inout HuntDirector.Configuration) -> Void) -> HuntDirector {
    var configuration = HuntDirector.Configuration(region: region)
    configure(&configuration)
    var d = HuntDirector(configuration: configuration)
    _ = d.feed(.regionEnter(time: 0, region: region))
    _ = d.handle(.speechFinished, at: 2)
    _ = d.feed(.nearest(time: 2, region: region, key: key))
    _ = d.feed(.proximity(time: 3, key: key, from: .unknown, to: .near))
    _ = d.handle(.speechFinished, at: 4)
    return d
}

extension HuntDirector {
    mutating func feed(_ event: RangingEvent) -> [HuntAction] { handle(.ranging(event), at: event.time) }
}

@Suite struct HuntDirectorTests {
    @Test func startUpThenEnterPlaysArrrThenTheEnterLine() {
        var d = director()
        #expect(d.handle(.started, at: 0) == [.say(.startup, interrupt: false)])
        #expect(d.handle(.speechFinished, at: 2) == [])
        #expect(d.feed(.regionState(time: 4, region: region, state: .outside)) == [])
        #expect(d.feed(.regionEnter(time: 10, region: region)) == [.sound(.arrr), .say(.regionEntered, interrupt: false)])
        // A second enter for the same region changes nothing.
        #expect(d.feed(.regionEnter(time: 11, region: region)) == [])
    }

    @Test func alreadyInsideAtStartIsSaid() {
        var d = director()
        _ = d.handle(.started, at: 0)
        #expect(d.feed(.regionState(time: 1, region: region, state: .inside)) == [.sound(.arrr), .say(.regionEntered, interrupt: true)])
        #expect(d.isInside)
    }

    /// A controller whose beacon reads -45 dBm from the start: the class is committed in the
    /// same ingest that enters the region, before the region's state. It used to be dropped
    /// (not inside yet) and the treasure was never found.
    @Test func alreadyAtTheTreasureWhenTheRegionIsEnteredIsAFind() {
        var d = director()
        _ = d.handle(.started, at: 0)
        _ = d.handle(.speechFinished, at: 1)
        #expect(d.feed(.proximity(time: 2, key: key, from: .unknown, to: .immediate)) == [])
        #expect(d.feed(.regionState(time: 2, region: region, state: .inside)) == [.sound(.arrr), .say(.regionEntered, interrupt: false)])
        #expect(d.feed(.nearest(time: 2, region: region, key: key)) == [])
        // The immediate line waits behind the enter line, then comes.
        #expect(d.handle(.speechFinished, at: 4) == [.say(.proximityImmediate, interrupt: false)])
        #expect(d.tick(at: 4.5) == [], "found after the hold, counted from when immediate was committed")
        _ = d.handle(.speechFinished, at: 4.8)
        #expect(d.tick(at: 5.1) == [.say(.treasureFound, interrupt: false), .found(step: nil)])
        #expect(d.treasureFound)
    }

    @Test func anEarlyClassIsForgottenOnLeaving() {
        var d = director()
        _ = d.feed(.proximity(time: 1, key: key, from: .unknown, to: .immediate))
        _ = d.feed(.regionState(time: 1, region: region, state: .inside))
        _ = d.feed(.regionExit(time: 2, region: region))
        #expect(d.tick(at: 8) == [.sound(.arrr), .say(.regionLeft, interrupt: true)])
        _ = d.handle(.speechFinished, at: 9)
        #expect(d.feed(.regionEnter(time: 10, region: region)) == [.sound(.arrr), .say(.regionEntered, interrupt: false)])
        _ = d.handle(.speechFinished, at: 12)
        #expect(d.tick(at: 20) == [], "no find from a class before the exit")
    }

    /// The engine started over (a reload of its thresholds) while the hunt was inside, and
    /// it hears nothing of the region: its first word is the state "outside", never an exit.
    /// The hunt stayed inside for good (no "left", hints as if at the chest).
    @Test func anEngineStartedOverThatFindsTheRegionOutsideIsAnExit() {
        var d = director()
        _ = d.feed(.regionState(time: 1, region: region, state: .inside))
        _ = d.handle(.speechFinished, at: 2)
        #expect(d.feed(.regionState(time: 10, region: region, state: .outside)) == [])
        #expect(d.tick(at: 16) == [.sound(.arrr), .say(.regionLeft, interrupt: false)])
        // Back in: entered again.
        _ = d.handle(.speechFinished, at: 17)
        #expect(d.feed(.regionEnter(time: 20, region: region)) == [.sound(.arrr), .say(.regionEntered, interrupt: false)])
    }

    @Test func otherRegionsAreIgnored() {
        var d = director()
        #expect(d.feed(.regionEnter(time: 1, region: "elsewhere")) == [])
        #expect(d.feed(.regionState(time: 1, region: "elsewhere", state: .inside)) == [])
    }

    @Test func changesOfTheClosestClassAreSaidOnceEach() {
        var d = enteredDirector()
        #expect(d.feed(.proximity(time: 3, key: key, from: .unknown, to: .far)) == [.say(.proximityFar, interrupt: false)])
        _ = d.handle(.speechFinished, at: 4)
        #expect(d.feed(.proximity(time: 5, key: key, from: .far, to: .far)) == [])
        // Another beacon of the region no closer than the class said says nothing.
        #expect(d.feed(.proximity(time: 6, key: other, from: .unknown, to: .far)) == [])
        #expect(d.feed(.proximity(time: 7, key: key, from: .far, to: .near)) == [.say(.proximityNear, interrupt: false)])
        _ = d.handle(.speechFinished, at: 8)
        // One closer than the class said is news, whichever the nearest is.
        #expect(d.feed(.proximity(time: 9, key: other, from: .far, to: .immediate)) == [.say(.proximityImmediate, interrupt: false)])
    }

    /// Found at a kind spot metres out (a tag advertising low), then much nearer still, at
    /// the chest: the engine's closer arrival says the find again, where the child now is
    /// (the hunt was silent after a find, and the child never heard it at the chest). Before
    /// a find it is nothing.
    @Test func aFindShortOfTheChestIsSaidAgainAtTheChest() {
        var d = directorSaidNear { $0.foundHold = 0.5 }
        #expect(d.feed(.closerArrival(time: 5, key: key)) == [], "not found yet: nothing")
        _ = d.feed(.proximity(time: 10, key: key, from: .near, to: .immediate))
        #expect(d.tick(at: 10.5) == [.say(.treasureFound, interrupt: false), .found(step: nil)])
        _ = d.handle(.speechFinished, at: 13)
        #expect(d.tick(at: 20) == [])
        #expect(d.feed(.closerArrival(time: 30, key: key)) == [])
        #expect(d.tick(at: 30.3) == [], "held as a find is")
        #expect(d.tick(at: 30.5) == [.say(.treasureFound, interrupt: false), .found(step: nil)])
        #expect(d.treasureFound)
        // Without the renewal (an engine with `atHandRenewal` 0 sends none) the find stands.
        var quiet = directorSaidNear { $0.foundHold = 0.5 }
        _ = quiet.feed(.proximity(time: 10, key: key, from: .near, to: .immediate))
        _ = quiet.tick(at: 10.5)
        _ = quiet.handle(.speechFinished, at: 13)
        #expect(quiet.tick(at: 40) == [])
    }

    /// An unpaired hunter tells the grown-up so at the first find. The child's found line is
    /// not cut for it (the notice comes after it), and a find made again at the chest while
    /// the notice is said (12 s of it) is said once it is over, not dropped as a waiting line
    /// that went stale (the second walking world's replays: 2 walks of 200).
    @Test func aNoticeWaitsForTheFindAndAFindWaitsForTheNoticeNeverDropped() {
        var d = directorSaidNear { $0.foundHold = 0.5 }
        _ = d.feed(.proximity(time: 10, key: key, from: .near, to: .immediate))
        #expect(d.tick(at: 10.5) == [.say(.treasureFound, interrupt: false), .found(step: nil)])
        #expect(d.handle(.notice(.noticeUnpaired), at: 10.5) == [], "not over the found line")
        #expect(d.handle(.speechFinished, at: 13) == [.say(.noticeUnpaired, interrupt: false)])
        #expect(d.feed(.closerArrival(time: 14, key: key)) == [])
        #expect(d.tick(at: 14.5) == [.found(step: nil)], "found again, behind the notice")
        #expect(d.tick(at: 20) == [])
        #expect(d.handle(.speechFinished, at: 25) == [.say(.treasureFound, interrupt: false)], "11 s later, said")
        #expect(d.handle(.speechFinished, at: 27) == [])
        // A notice with nothing of the child's being said is said at once, as before.
        var e = directorSaidNear { $0.foundHold = 0.5 }
        #expect(e.handle(.notice(.noticeUnpaired), at: 5) == [.say(.noticeUnpaired, interrupt: false)])
    }

    /// A child still standing at the treasure it was told it found, the level sinking in a
    /// fade until at hand lets go: no "near" about the treasure just found (the second walking
    /// world: 3 in 22 hours; the tuning walks 0.15 an hour). A walk away is still "far".
    @Test func noNearIsSaidAboutTheTreasureJustFound() {
        var d = directorSaidNear { $0.foundHold = 0.5 }
        _ = d.feed(.proximity(time: 10, key: key, from: .near, to: .immediate))
        #expect(d.tick(at: 10.5) == [.say(.treasureFound, interrupt: false), .found(step: nil)])
        _ = d.handle(.speechFinished, at: 13)
        #expect(d.feed(.proximity(time: 35, key: key, from: .immediate, to: .near)) == [])
        #expect(d.tick(at: 36) == [])
        // Walked away: "far" once confirmed, as ever.
        _ = d.feed(.proximity(time: 40, key: key, from: .near, to: .far))
        var said: [HuntAction] = []
        var t = 40.0
        while t < 80 {
            said += d.tick(at: t)
            t += 0.25
        }
        #expect(said.contains(.say(.proximityFar, interrupt: false)))
        // Before a find "near" is said as it always was.
        var before = enteredDirector()
        #expect(before.feed(.proximity(time: 3, key: key, from: .unknown, to: .near)) == [.say(.proximityNear, interrupt: false)])
    }

    /// A short hold (0.5 s, the appliance's default): "immediate" with a find due is the
    /// find's line, not one of its own cut off by the find half a second later. A kind spot
    /// that reads at hand for less than the hold says nothing (it used to say "immediate"
    /// and then "near" again), and the class said before it stands.
    @Test func anImmediateShorterThanAShortHoldSaysNothing() {
        var d = directorSaidNear { $0.foundHold = 0.5 }
        #expect(d.feed(.proximity(time: 10, key: key, from: .near, to: .immediate)) == [])
        #expect(d.tick(at: 10.3) == [])
        #expect(d.feed(.proximity(time: 10.4, key: key, from: .immediate, to: .near)) == [], "near was said: nothing")
        #expect(d.tick(at: 20) == [], "no find")
        // Held this time: the find, and no "immediate" before it.
        #expect(d.feed(.proximity(time: 30, key: key, from: .near, to: .immediate)) == [])
        #expect(d.tick(at: 30.5) == [.say(.treasureFound, interrupt: false), .found(step: nil)])
        _ = d.handle(.speechFinished, at: 33)
        // A step back to "near" after the find is no news (the child was told it is at the
        // treasure); in again, found again (without the "immediate" before it).
        #expect(d.feed(.proximity(time: 40, key: key, from: .immediate, to: .near)) == [])
        #expect(d.feed(.proximity(time: 50, key: key, from: .near, to: .immediate)) == [])
        #expect(d.tick(at: 50.5) == [.say(.treasureFound, interrupt: false), .found(step: nil)])
        // Entering at the treasure: the enter line, then the find (no "immediate" between).
        var entering = HuntDirector(configuration: { var c = HuntDirector.Configuration(region: region); c.foundHold = 0.5; return c }())
        _ = entering.handle(.started, at: 0)
        _ = entering.handle(.speechFinished, at: 1)
        #expect(entering.feed(.proximity(time: 2, key: key, from: .unknown, to: .immediate)) == [])
        #expect(entering.feed(.regionState(time: 2, region: region, state: .inside)) == [.sound(.arrr), .say(.regionEntered, interrupt: false)])
        #expect(entering.handle(.speechFinished, at: 4) == [])
        #expect(entering.tick(at: 4.1) == [.say(.treasureFound, interrupt: false), .found(step: nil)])
    }

    /// The short hold lets a child walking in onto a fast tag take the last step before the
    /// find; a slow tag's at hand comes seconds after the child stands, and the hold would be
    /// only its own time: waived when every beacon at immediate is heard fewer than
    /// `slowReadingRate` times a second. A tag heard `fastReadingRate` times a second or more
    /// reads at hand sooner before the child stops: held `fastFoundHold`. A long hold ("Stop
    /// right there!") is kept for all.
    @Test func aFindIsHeldByHowFastItsTagIsHeard() {
        func range(_ time: Double, _ beacon: BeaconKey = key, rate: Double?) -> RangingEvent {
            rangeHeard(beacon, rate: rate, at: time)
        }
        /// A director that said "near" (`found_hold` 0.5 s unless `configure` says otherwise),
        /// its beacon heard `rate` times a second at 9 s (nil: no rate heard), at immediate
        /// from 10 s, which says `said`.
        func atImmediate(rate: Double?, said: [HuntAction] = [], sourceLocation: SourceLocation = #_sourceLocation,
                         _ configure: (inout HuntDirector.Configuration) -> Void = { _ in }) -> HuntDirector {
            var d = directorSaidNear { $0.foundHold = 0.5; configure(&$0) }
            if let rate { #expect(d.feed(range(9, rate: rate)) == [], sourceLocation: sourceLocation) }
            #expect(d.feed(.proximity(time: 10, key: key, from: .near, to: .immediate)) == said, sourceLocation: sourceLocation)
            return d
        }
        let found: [HuntAction] = [.say(.treasureFound, interrupt: false), .found(step: nil)]
        let defaults = HuntDirector.Configuration(region: region)
        #expect(defaults.slowReadingRate == 2.5)
        #expect(defaults.fastReadingRate == 5)
        #expect(defaults.fastFoundHold == 1)
        let slow = atImmediate(rate: 1.75, said: found)
        #expect(slow.nextDeadline == nil, "at once")
        // A 4 Hz tag (3.5 readings a second heard): the configured hold.
        var middle = atImmediate(rate: 3.5)
        #expect(middle.nextDeadline == 10.5)
        #expect(middle.tick(at: 10.4) == [])
        #expect(middle.tick(at: 10.5) == found)
        // A 10 Hz tag (7.5 heard): the fast hold.
        var fast = atImmediate(rate: 7.5)
        #expect(fast.nextDeadline == 11)
        #expect(fast.tick(at: 10.5) == [])
        #expect(fast.tick(at: 10.9) == [])
        #expect(fast.tick(at: 11) == found)
        // Heard exactly `fastReadingRate` times a second: fast.
        #expect(atImmediate(rate: 5).nextDeadline == 11)
        // Not known to be slow or fast (no rate heard yet, even with a threshold of 0), or
        // both turned off: the configured hold.
        #expect(atImmediate(rate: nil) { $0.fastReadingRate = 0 }.nextDeadline == 10.5)
        var unknown = atImmediate(rate: nil)
        #expect(unknown.tick(at: 10.5) == found)
        var off = atImmediate(rate: 1) { $0.slowReadingRate = nil; $0.fastReadingRate = nil }
        #expect(off.tick(at: 10.5) == found)
        var offFast = atImmediate(rate: 9) { $0.fastReadingRate = nil }
        #expect(offFast.tick(at: 10.5) == found)
        // Two beacons of the box at immediate, one of them slow and one fast: the fast hold.
        var pair = directorSaidNear { $0.foundHold = 0.5 }
        _ = pair.feed(.proximity(time: 5, key: other, from: .unknown, to: .near))
        _ = pair.feed(range(9, rate: 1))
        _ = pair.feed(range(9, other, rate: 9))
        _ = pair.feed(.proximity(time: 10, key: other, from: .near, to: .immediate))
        #expect(pair.feed(.proximity(time: 10.2, key: key, from: .near, to: .immediate)) == [])
        #expect(pair.tick(at: 10.5) == [])
        #expect(pair.tick(at: 11) == found)
        // The fast hold never shortens a longer configured one, and never outlasts the
        // length at which "immediate" would say its own line (nor does an odd setting).
        #expect(atImmediate(rate: 9) { $0.foundHold = 1.5 }.nextDeadline == 11.5)
        for odd in [Double.nan, .infinity, 5, -1] {
            var d = atImmediate(rate: 9) { $0.fastFoundHold = odd }
            let deadline = d.nextDeadline ?? .nan
            #expect(deadline >= 10.5 && deadline <= 10 + HuntDirector.immediateLineHold, "held \(deadline - 10) s (\(odd))")
            #expect(d.tick(at: 12) == found)
        }
        // A long hold: "immediate" is said, and the find follows after the whole hold.
        let immediateLine: [HuntAction] = [.say(.proximityImmediate, interrupt: false)]
        var long = atImmediate(rate: 1, said: immediateLine) { $0.foundHold = 3 }
        _ = long.handle(.speechFinished, at: 11)
        #expect(long.tick(at: 12.9) == [])
        #expect(long.tick(at: 13) == found)
        #expect(atImmediate(rate: 9, said: immediateLine) { $0.foundHold = 3 }.nextDeadline == 13)
    }

    /// Whoever ticks the director at `nextDeadline` hears the find then, not a tick later,
    /// whatever the deadline's rounding (13.4 + 3 − 13.4 is under 3 in doubles).
    @Test func aFindIsSaidAtItsDeadline() {
        let found: [HuntAction] = [.say(.treasureFound, interrupt: false), .found(step: nil)]
        for (start, hold) in [(13.4, 3.0), (13.9, 3.0), (10.3, 0.5), (10.0, 1.0)] {
            var d = directorSaidNear { $0.foundHold = hold }
            _ = d.feed(.proximity(time: start, key: key, from: .near, to: .immediate))
            _ = d.handle(.speechFinished, at: start + 0.1)
            let deadline = d.nextDeadline ?? .nan
            #expect(deadline == start + hold)
            #expect(d.tick(at: deadline.nextDown) == [], "held \(hold) s from \(start)")
            #expect(d.tick(at: deadline) == found, "held \(hold) s from \(start)")
        }
    }

    @Test func aBodyInFrontOfOneBeaconOfTheBoxIsNotFar() {
        // Two beacons of one treasure, both near. A body in front of one makes it far: the
        // hunter is as close as the other one says, so nothing is said. A real move makes
        // both far: "far" once the last one is. The old nearest's class is never left said
        // (it was: a body said "far", the nearest changed, and the step was never heard).
        var d = enteredDirector()
        #expect(d.feed(.proximity(time: 3, key: key, from: .unknown, to: .near)) == [.say(.proximityNear, interrupt: false)])
        _ = d.handle(.speechFinished, at: 4)
        #expect(d.feed(.proximity(time: 5, key: other, from: .unknown, to: .near)) == [])
        #expect(d.feed(.proximity(time: 10, key: key, from: .near, to: .far)) == [], "a body in front of one beacon")
        #expect(d.feed(.nearest(time: 12, region: region, key: other)) == [])
        #expect(d.feed(.proximity(time: 14, key: key, from: .far, to: .near)) == [], "the body has gone")
        #expect(d.feed(.proximity(time: 30, key: key, from: .near, to: .far)) == [])
        #expect(d.feed(.proximity(time: 31, key: other, from: .near, to: .far)) == [], "far once it has lasted")
        #expect(d.tick(at: 40.9) == [])
        #expect(d.tick(at: 41) == [.say(.proximityFar, interrupt: false)])
        _ = d.handle(.speechFinished, at: 42)
        // A beacon lost is forgotten; the last one lost leaves the exit line to say it.
        #expect(d.feed(.proximity(time: 45, key: other, from: .far, to: .unknown)) == [])
        #expect(d.feed(.proximity(time: 46, key: key, from: .far, to: .near)) == [.say(.proximityNear, interrupt: false)])
        _ = d.handle(.speechFinished, at: 47)
        #expect(d.feed(.proximity(time: 50, key: key, from: .near, to: .unknown)) == [])
    }

    @Test func aFarHeldInsideTheNearEdgeWaitsForTheRange() {
        // After a body's shadow the classifier's hysteresis holds "far" while the range is
        // back inside the near edge (3 m): not said, however long; said once the range leaves it.
        func range(_ time: Double, _ meters: Double?) -> RangingEvent {
            .range(RangeReport(time: time, key: key, rssi: -70, distance: meters.map { DistanceEstimate(meters: $0, logSigma: 0.3) }, proximity: .far))
        }
        var d = enteredDirector()
        #expect(d.feed(.proximity(time: 3, key: key, from: .unknown, to: .near)) == [.say(.proximityNear, interrupt: false)])
        _ = d.handle(.speechFinished, at: 4)
        #expect(d.feed(.proximity(time: 10, key: key, from: .near, to: .far)) == [])
        #expect(d.feed(range(12, 4.5)) == [], "the body: past the edge, not yet 10 s")
        #expect(d.feed(range(16, 2.4)) == [], "the body has gone: the class is held, the range is back")
        #expect(d.tick(at: 21) == [])
        #expect(d.feed(range(30, 2.6)) == [])
        #expect(d.tick(at: 60) == [], "inside the edge: never said")
        #expect(d.feed(range(61, 3.4)) == [], "the range has left the edge ...")
        #expect(d.feed(range(65, 3.6)) == [])
        #expect(d.feed(range(69, 3.5)) == [], "out 8 s: a body may still stand there")
        #expect(d.feed(range(75, 3.5)) == [], "out 14 s: bodies in close succession may still")
        #expect(d.feed(range(79, 3.5)) == [.say(.proximityFar, interrupt: false)], "... and stayed out 18 s")
        // No edge: the class and the range's hold decide (past since the move out at 10 s,
        // said at 28 s); no range known: the class alone, after 10 s.
        var free = directorSaidNear { $0.farEdge = nil }
        _ = free.feed(.proximity(time: 10, key: key, from: .near, to: .far))
        #expect(free.feed(range(16, 2.4)) == [])
        #expect(free.tick(at: 20) == [])
        #expect(free.tick(at: 27) == [])
        #expect(free.tick(at: 28) == [.say(.proximityFar, interrupt: false)])
        var unranged = enteredDirector()
        _ = unranged.feed(.proximity(time: 3, key: key, from: .unknown, to: .near))
        _ = unranged.handle(.speechFinished, at: 4)
        _ = unranged.feed(.proximity(time: 10, key: key, from: .near, to: .far))
        #expect(unranged.feed(range(16, nil)) == [])
        #expect(unranged.tick(at: 20) == [.say(.proximityFar, interrupt: false)])
    }

    @Test func aFarBackWhereTheRangeWasBeforeItWaits() {
        // A beacon whose level sits near the edge (read at 3.2 m): a body takes the class to
        // far, and after it the classifier's hysteresis holds far while the range is back at
        // 3.2 m, past the edge. Not said; a later body that takes the range out for 12 s
        // neither; a walk away (the range past 1.4 times 3.2 m for `farRangeHold`, 18 s) is.
        let hold = HuntDirector.Configuration(region: region).farRangeHold
        #expect(hold == 18)
        func range(_ time: Double, _ meters: Double) -> RangingEvent {
            .range(RangeReport(time: time, key: key, rssi: -70, distance: DistanceEstimate(meters: meters, logSigma: 0.3), proximity: .near))
        }
        var d = enteredDirector()
        #expect(d.feed(.proximity(time: 3, key: key, from: .unknown, to: .near)) == [.say(.proximityNear, interrupt: false)])
        _ = d.handle(.speechFinished, at: 4)
        for t in stride(from: 5.0, through: 20, by: 1) { #expect(d.feed(range(t, 3.2)) == []) }
        #expect(d.feed(.proximity(time: 21, key: key, from: .near, to: .far)) == [], "the body")
        for t in stride(from: 21.0, through: 26, by: 1) { #expect(d.feed(range(t, 9)) == []) }
        for t in stride(from: 27.0, through: 100, by: 1) { #expect(d.feed(range(t, 3.2)) == [], "back where it was, \(t) s") }
        for t in stride(from: 101.0, through: 112, by: 1) { #expect(d.feed(range(t, 9)) == [], "another body, \(t) s") }
        for t in stride(from: 113.0, through: 120, by: 1) { #expect(d.feed(range(t, 3.2)) == []) }
        for t in stride(from: 121.0, through: 120 + hold, by: 1) { #expect(d.feed(range(t, 5)) == [], "walking away, \(t) s") }
        #expect(d.feed(range(121 + hold, 5.5)) == [.say(.proximityFar, interrupt: false)])
        // Without the ratio, the far is said once the range stays past the edge 18 s.
        var plain = directorSaidNear { $0.farReturnRatio = nil }
        for t in stride(from: 5.0, through: 20, by: 1) { _ = plain.feed(range(t, 3.2)) }
        _ = plain.feed(.proximity(time: 21, key: key, from: .near, to: .far))
        var said: Double?
        for t in stride(from: 21.0, through: 50, by: 1) where said == nil {
            if plain.feed(range(t, t < 27 ? 9 : 3.2)) == [.say(.proximityFar, interrupt: false)] { said = t }
        }
        #expect(said == 21 + hold, "\(String(describing: said))")
    }

    @Test func aFarThatDoesNotLastIsNeverSaid() {
        // A body between hunter and beacon for 1-10 s: the engine's class goes far and back.
        var d = enteredDirector()
        #expect(d.feed(.proximity(time: 3, key: key, from: .unknown, to: .near)) == [.say(.proximityNear, interrupt: false)])
        _ = d.handle(.speechFinished, at: 4)
        #expect(d.feed(.proximity(time: 10, key: key, from: .near, to: .far)) == [])
        #expect(d.tick(at: 19.9) == [])
        #expect(d.feed(.proximity(time: 19.9, key: key, from: .far, to: .near)) == [], "back before the confirmation: neither")
        #expect(d.tick(at: 30) == [])
        // A far that lasts is said once, then the way back.
        #expect(d.feed(.proximity(time: 40, key: key, from: .near, to: .far)) == [])
        #expect(d.feed(.proximity(time: 45, key: key, from: .far, to: .far)) == [], "no restart of the wait")
        #expect(d.tick(at: 50) == [.say(.proximityFar, interrupt: false)])
        _ = d.handle(.speechFinished, at: 51)
        #expect(d.tick(at: 70) == [])
        #expect(d.feed(.proximity(time: 71, key: key, from: .far, to: .near)) == [.say(.proximityNear, interrupt: false)])
        _ = d.handle(.speechFinished, at: 72)
        // At the treasure while far waits: immediate is said at once, and far never.
        #expect(d.feed(.proximity(time: 80, key: key, from: .near, to: .far)) == [])
        #expect(d.feed(.proximity(time: 82, key: key, from: .far, to: .immediate)) == [.say(.proximityImmediate, interrupt: false)])
        #expect(d.tick(at: 95) .contains(.say(.proximityFar, interrupt: false)) == false)
        // An exit while far waits: the exit's line, no far after it.
        var e = enteredDirector()
        _ = e.feed(.proximity(time: 3, key: key, from: .unknown, to: .near))
        _ = e.handle(.speechFinished, at: 4)
        _ = e.feed(.proximity(time: 10, key: key, from: .near, to: .far))
        _ = e.feed(.regionExit(time: 12, region: region))
        #expect(e.tick(at: 18) == [.sound(.arrr), .say(.regionLeft, interrupt: false)])
        #expect(e.tick(at: 25) == [])
    }

    @Test func aFarFromTheFirstClassIsSaidAtOnce() {
        // Entered far off: nothing nearer was said, so far is news now.
        var d = enteredDirector()
        #expect(d.feed(.proximity(time: 3, key: key, from: .unknown, to: .far)) == [.say(.proximityFar, interrupt: false)])
    }

    @Test func newerMoreImportantLineInterruptsAndLesserWaits() {
        var d = director()
        _ = d.feed(.regionEnter(time: 0, region: region))
        _ = d.handle(.speechFinished, at: 1)
        _ = d.feed(.nearest(time: 1, region: region, key: key))
        #expect(d.feed(.proximity(time: 2, key: key, from: .unknown, to: .far)) == [.say(.proximityFar, interrupt: false)])
        // Same precedence and newer: replaces the line being spoken.
        #expect(d.feed(.proximity(time: 2.5, key: key, from: .far, to: .near)) == [.say(.proximityNear, interrupt: true)])
        // Exit matters more: interrupts (once it has lasted the confirmation).
        #expect(d.feed(.regionExit(time: 3, region: region)) == [])
        #expect(d.tick(at: 8.9) == [])
        #expect(d.tick(at: 9) == [.sound(.arrr), .say(.regionLeft, interrupt: true)])
        #expect(d.handle(.speechFinished, at: 11) == [])
    }

    @Test func aLesserLineWaitsForTheCurrentOneAndGoesStale() {
        var d = director()
        _ = d.handle(.adapterMissing, at: 0)
        _ = d.feed(.regionEnter(time: 0.1, region: region))  // same precedence: interrupts
        _ = d.feed(.nearest(time: 0.2, region: region, key: key))
        #expect(d.feed(.proximity(time: 0.5, key: key, from: .unknown, to: .near)) == [])
        #expect(d.handle(.speechFinished, at: 1.5) == [.say(.proximityNear, interrupt: false)])

        var late = director()
        _ = late.feed(.regionEnter(time: 0, region: region))
        _ = late.feed(.proximity(time: 0.5, key: key, from: .unknown, to: .near))
        #expect(late.handle(.speechFinished, at: 9) == [], "four seconds old news is not said")
    }

    @Test func immediateHeldIsTreasureFoundOnce() {
        var d = director()
        _ = d.feed(.regionEnter(time: 0, region: region))
        _ = d.handle(.speechFinished, at: 1)
        _ = d.feed(.proximity(time: 2, key: key, from: .near, to: .immediate))
        _ = d.handle(.speechFinished, at: 3)
        #expect(d.tick(at: 4.9) == [])
        #expect(d.tick(at: 5.0) == [.say(.treasureFound, interrupt: false), .found(step: nil)])
        #expect(d.treasureFound)
        _ = d.handle(.speechFinished, at: 7)
        #expect(d.tick(at: 20) == [])
    }

    @Test func brieflyImmediateIsNotFound() {
        var d = director()
        _ = d.feed(.regionEnter(time: 0, region: region))
        _ = d.feed(.proximity(time: 2, key: key, from: .near, to: .immediate))
        _ = d.feed(.proximity(time: 3, key: key, from: .immediate, to: .near))
        #expect(d.tick(at: 10) == [])
        #expect(!d.treasureFound)
    }

    @Test func trendIsRateLimitedAndQuietAfterLines() {
        var d = director()
        _ = d.feed(.regionEnter(time: 0, region: region))
        #expect(d.feed(.trend(time: 1, region: region, trend: .warmer)) == [], "not while speaking")
        _ = d.handle(.speechFinished, at: 2)
        #expect(d.feed(.trend(time: 2.5, region: region, trend: .warmer)) == [], "not right after a line")
        #expect(d.feed(.trend(time: 4, region: region, trend: .warmer)) == [.say(.warmer, interrupt: false)])
        _ = d.handle(.speechFinished, at: 5)
        #expect(d.feed(.trend(time: 8, region: region, trend: .colder)) == [], "at most every 6 s")
        #expect(d.feed(.trend(time: 10.5, region: region, trend: .colder)) == [.say(.colder, interrupt: false)])
    }

    @Test func trendOutsideTheRegionIsNotSaid() {
        var d = director()
        #expect(d.feed(.trend(time: 10, region: region, trend: .warmer)) == [])
    }

    @Test func unknownOnTheWayOutIsLeftToTheExitLine() {
        var d = director()
        _ = d.feed(.regionEnter(time: 0, region: region))
        _ = d.handle(.speechFinished, at: 1)
        _ = d.feed(.proximity(time: 2, key: key, from: .unknown, to: .far))
        _ = d.handle(.speechFinished, at: 3)
        #expect(d.feed(.proximity(time: 9, key: key, from: .far, to: .unknown)) == [])
        #expect(d.feed(.regionExit(time: 9, region: region)) == [])
        #expect(d.tick(at: 15) == [.sound(.arrr), .say(.regionLeft, interrupt: false)])
    }

    @Test func thePagesAddressIsSaidOnceAfterTheStartUpLineNeverOverALine() {
        let page = LineDetail(host: "piratepi", port: 8080, code: "042917")
        var d = director()
        // The page comes up before the radio: nothing yet.
        #expect(d.handle(.pageOpened(page), at: 0) == [])
        #expect(d.tick(at: 1) == [])
        #expect(d.handle(.started, at: 2) == [.say(.startup, interrupt: false)])
        #expect(d.tick(at: 3) == [])
        // After the start-up line, once.
        #expect(d.handle(.speechFinished, at: 4) == [.tell(.noticePage, page, interrupt: false)])
        _ = d.handle(.speechFinished, at: 12)
        #expect(d.tick(at: 13) == [])
        #expect(page.fill("at {host} dot local, port {port}. The code is {code}.") == "at piratepi dot local, port 8080. The code is 0 4 2, 9 1 7.")

        // A line under way when it comes: after it.
        var busy = director()
        _ = busy.handle(.started, at: 0)
        #expect(busy.handle(.pageOpened(page), at: 0.5) == [])
        #expect(busy.handle(.speechFinished, at: 2) == [.tell(.noticePage, page, interrupt: false)])

        // A line of the child's cuts it: said again once the hunt is quiet (at most
        // `pageNoticeTries` times begun).
        var cut = enteredDirector()
        _ = cut.handle(.pageOpened(page), at: 2.5)
        _ = cut.handle(.started, at: 3)
        #expect(cut.handle(.speechFinished, at: 4) == [.tell(.noticePage, page, interrupt: false)])
        #expect(cut.feed(.proximity(time: 5, key: key, from: .unknown, to: .far)) == [.say(.proximityFar, interrupt: true)])
        #expect(cut.handle(.speechFinished, at: 7) == [.tell(.noticePage, page, interrupt: false)])
        _ = cut.handle(.speechFinished, at: 15)
        #expect(cut.tick(at: 20) == [])

        // The radio never comes up: said anyway, after `pageNoticeWait`.
        var deaf = director()
        _ = deaf.handle(.pageOpened(page), at: 0)
        #expect(deaf.tick(at: HuntDirector.pageNoticeWait - 1) == [])
        #expect(deaf.tick(at: HuntDirector.pageNoticeWait) == [.tell(.noticePage, page, interrupt: false)])
    }

    @Test func anExitUndoneWithinTheConfirmationIsNeverSaid() {
        var d = enteredDirector()
        _ = d.feed(.proximity(time: 2, key: key, from: .unknown, to: .far))
        _ = d.handle(.speechFinished, at: 3)
        // A few seconds of lost packets (a body, a wall): the engine's exit and enter are
        // neither said.
        #expect(d.feed(.regionExit(time: 20, region: region)) == [])
        #expect(d.tick(at: 23) == [])
        #expect(d.feed(.regionEnter(time: 24, region: region)) == [])
        #expect(d.tick(at: 40) == [])
        #expect(d.isInside)
        // Still in the game: the next class change is said as usual.
        #expect(d.feed(.proximity(time: 41, key: key, from: .far, to: .near)) == [.say(.proximityNear, interrupt: false)])
        // A lasting exit is said once, after the confirmation, and the way back in again.
        _ = d.handle(.speechFinished, at: 43)
        #expect(d.feed(.regionExit(time: 50, region: region)) == [])
        #expect(d.tick(at: 56) == [.sound(.arrr), .say(.regionLeft, interrupt: false)])
        #expect(!d.isInside)
        _ = d.handle(.speechFinished, at: 58)
        #expect(d.tick(at: 70) == [])
        #expect(d.feed(.regionEnter(time: 71, region: region)) == [.sound(.arrr), .say(.regionEntered, interrupt: false)])
    }

    @Test func noFindWhileTheRegionIsLeftAndTheFindAfterAnExitThatIsUndone() {
        var d = enteredDirector()
        _ = d.feed(.proximity(time: 2, key: key, from: .unknown, to: .near))
        _ = d.handle(.speechFinished, at: 3)
        #expect(d.feed(.proximity(time: 4, key: key, from: .near, to: .immediate)).first == .say(.proximityImmediate, interrupt: false))
        // Lost before the hold is over: no find while it is gone...
        #expect(d.feed(.regionExit(time: 4.2, region: region)) == [])
        _ = d.handle(.speechFinished, at: 6)
        #expect(d.tick(at: 7) == [])
        // ... back before the exit is said: the class the engine held all along stands (it
        // says no new one for a beacon it did not lose), and the child at the chest is found.
        #expect(d.feed(.regionEnter(time: 7.5, region: region)) == [])
        #expect(d.tick(at: 8) == [.say(.treasureFound, interrupt: false), .found(step: nil)])

        // A lasting exit forgets the class: back in, no find until it is said again.
        var gone = enteredDirector()
        _ = gone.feed(.proximity(time: 2, key: key, from: .unknown, to: .near))
        _ = gone.handle(.speechFinished, at: 3)
        _ = gone.feed(.proximity(time: 4, key: key, from: .near, to: .immediate))
        _ = gone.handle(.speechFinished, at: 5)
        _ = gone.feed(.regionExit(time: 5.5, region: region))
        #expect(gone.tick(at: 11.5) == [.sound(.arrr), .say(.regionLeft, interrupt: false)])
        _ = gone.handle(.speechFinished, at: 13)
        _ = gone.feed(.regionEnter(time: 14, region: region))
        _ = gone.handle(.speechFinished, at: 15)
        #expect(gone.tick(at: 20) == [])
    }

    @Test func adapterLinesOncePerChange() {
        var d = director()
        #expect(d.handle(.adapterMissing, at: 0) == [.say(.adapterMissing, interrupt: false)])
        #expect(d.handle(.adapterMissing, at: 5) == [])
        _ = d.handle(.speechFinished, at: 6)
        #expect(d.handle(.adapterBack, at: 9) == [.say(.adapterBack, interrupt: false)])
        #expect(d.handle(.adapterBack, at: 10) == [])
    }

    /// The adapter lost while a longer, more important line is said (a clue, a find): said
    /// when that is over, however long it took. It waited as any line and went stale after
    /// 4 s, so the child never heard the radio was gone, then heard it was back.
    @Test func theAdapterLostDuringALongLineIsSaidAfterItAndBackOnlyWhenMissingWasHeard() {
        var d = director()
        #expect(d.handle(.notice(.noticeNoAdapter), at: 1).map(\.event) == [.noticeNoAdapter])
        #expect(d.handle(.adapterMissing, at: 2) == [])
        #expect(d.handle(.speechFinished, at: 9) == [.say(.adapterMissing, interrupt: false)], "said once the line was over")
        _ = d.handle(.speechFinished, at: 11)
        #expect(d.handle(.adapterBack, at: 20) == [.say(.adapterBack, interrupt: false)])

        // Gone and back while the line is still said: neither is news.
        var e = director()
        _ = e.handle(.notice(.noticeNoAdapter), at: 1)
        #expect(e.handle(.adapterMissing, at: 2) == [])
        #expect(e.handle(.adapterBack, at: 4) == [])
        #expect(e.handle(.speechFinished, at: 9).allSatisfy { $0.event != .adapterMissing && $0.event != .adapterBack })
    }

    @Test func everyEventHasAPrecedenceAndAPackKey() {
        #expect(LineEvent.allCases.count == 31)
        #expect(Set(LineEvent.allCases.map(\.rawValue)).count == 31)
        #expect(LineEvent.treasureFound.precedence > LineEvent.regionLeft.precedence)
        #expect(LineEvent.regionLeft.precedence > LineEvent.proximityNear.precedence)
        #expect(LineEvent.proximityNear.precedence > LineEvent.warmer.precedence)
    }
}

/// The ranging engine and the director together, as the hunter wires them.
@Suite struct EngineAndDirectorTests {
    /// A beacon reading -45 dBm (measured power -59) from the first packet: the hunter is at
    /// the treasure as the region is entered, and the treasure is found within seconds.
    @Test func aTreasureAtHandFromTheStartIsFound() {
        var engine = RangingEngine(configuration: .default, regions: [Region(name: region, uuid: key.uuid)])
        var d = director()
        var said: [(Double, LineEvent)] = []
        func perform(_ actions: [HuntAction], at t: Double) {
            for case let .say(event, _) in actions { said.append((t, event)) }
        }
        perform(d.handle(.started, at: 0), at: 0)
        var speechEnds = 1.5
        for step in 1...250 {
            let t = Double(step) * 0.1
            let events = engine.ingest(RangingSample(key: key, measuredPower: -59, rssi: -45 + (step % 3) - 1, time: t))
            for e in events { perform(d.handle(.ranging(e), at: t), at: t) }
            perform(d.tick(at: t), at: t)
            if t >= speechEnds {
                perform(d.handle(.speechFinished, at: t), at: t)
                speechEnds = t + 1.5
            }
        }
        let found = said.first { $0.1 == .treasureFound }
        #expect(found != nil, "\(said)")
        #expect((found?.0 ?? 99) < 12)
    }

    /// A 10 Hz tag advertising 4 dB low: a minute 9 m out, half a minute at a kind spot 6 m
    /// out (8 dB kind: at hand there, a find short of the chest, as held-out walk 10088), then
    /// over the chest (0.8 m). The
    /// engine's closer arrival makes the director say the find again, at the chest, once.
    @Test func aFindShortOfTheChestIsSaidAgainWhenTheChildReachesIt() {
        var engine = RangingEngine(configuration: .default, regions: [Region(name: region, uuid: key.uuid)])
        var configuration = HuntDirector.Configuration(region: region)
        configuration.foundHold = 0.5
        var d = HuntDirector(configuration: configuration)
        var found: [Double] = []
        func perform(_ actions: [HuntAction], at t: Double) {
            for case .say(.treasureFound, _) in actions { found.append(t) }
        }
        perform(d.handle(.started, at: 0), at: 0)
        var speechEnds = 1.5
        let offsets = [4.0, 0, -4]
        for step in 1...1800 {
            let t = Double(step) * 0.1
            let (meters, kind) = t < 60 ? (9.0, 0.0) : t < 90 ? (6.0, 8.0) : (0.8, 0.0)
            let jitter = Double((step * 7919) % 7 - 3)
            let rssi = Int((-59 - 20 * log10(meters) + kind + offsets[step % 3] + jitter).rounded())
            for e in engine.ingest(RangingSample(key: key, measuredPower: -63, rssi: rssi, time: t)) {
                perform(d.handle(.ranging(e), at: t), at: t)
            }
            perform(d.tick(at: t), at: t)
            if t >= speechEnds {
                perform(d.handle(.speechFinished, at: t), at: t)
                speechEnds = t + 1.5
            }
        }
        #expect(found.count == 2, "\(found)")
        #expect(found.first.map { $0 > 60 && $0 < 90 } == true, "\(found)")
        #expect(found.last.map { $0 > 90 && $0 < 100 } == true, "\(found)")
    }
}

/// The director's table of classes is bounded (64 beacons of the hunted region). Made-up
/// beacons of the region's UUID, each settled at "far", used to push out the one held
/// longest: the real treasure's, "near" since the start, and the class said went "far".
@Suite struct ClassMemoryTests {
    @Test func aFloodOfFarBeaconsDoesNotPushOutTheNearOne() {
        var d = directorSaidNear { _ in }
        var said: [HuntAction] = []
        for k in 0..<100 {
            let t = 10 + Double(k) * 0.05
            let fake = BeaconKey(uuid: key.uuid, major: 0xFA, minor: UInt16(k))
            said += d.feed(.proximity(time: t, key: fake, from: .unknown, to: .far))
        }
        for t in stride(from: 15.0, through: 60, by: 0.25) {
            said += d.tick(at: t)
            said += d.handle(.speechFinished, at: t)
        }
        #expect(!said.contains(.say(.proximity(.far), interrupt: false)), "\(said)")
        #expect(!said.contains(.say(.proximity(.far), interrupt: true)), "\(said)")
    }
}
