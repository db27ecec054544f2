import FoundationEssentials
import Hunt
import Ranging
import Testing

private let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0") ?? UUID()
private func chest(_ n: UInt16) -> Region { Region(name: RegionID("\(uuid.uuidString):1:\(n)"), uuid: uuid, major: 1, minor: n) }
private func beacon(_ n: UInt16) -> BeaconKey { BeaconKey(uuid: uuid, major: 1, minor: n) }

private func trail(order: TrailOrder = .inOrder, mode: HuntMode = .solo, hintAfter: Double = 90, hintInterval: Double = 60,
                   foundHold: Double = 3) -> HuntDirector {
    var configuration = HuntDirector.Configuration(region: chest(1).name)
    configuration.foundHold = foundHold  // the hold these tests time
    configuration.trail = [
        TrailStep(region: chest(1), clue: .text("Look under the big tree."), hint: "It be near something green."),
        TrailStep(region: chest(2), clue: .recording("/srv/clue2.wav"), found: "Ye found the second chest!"),
        TrailStep(region: chest(3)),
    ]
    configuration.trailRules.order = order
    configuration.trailRules.mode = mode
    configuration.trailRules.hintAfter = hintAfter
    configuration.trailRules.hintInterval = hintInterval
    return HuntDirector(configuration: configuration)
}

/// A trail begun, its opening lines over (each said line finished, at 1 s and 2 s).
private func startedTrail(order: TrailOrder, foundHold: Double = 3) -> HuntDirector {
    var d = trail(order: order, foundHold: foundHold)
    _ = d.handle(.started, at: 0)
    _ = d.handle(.speechFinished, at: 1)
    _ = d.handle(.speechFinished, at: 2)
    return d
}

extension HuntDirector {
    /// The child walks into chest `n`'s region and stands at it from `time`.
    mutating func arrive(at n: UInt16, _ time: Double) -> [HuntAction] {
        handle(.ranging(.regionEnter(time: time, region: chest(n).name)), at: time)
            + handle(.ranging(.nearest(time: time, region: chest(n).name, key: beacon(n))), at: time)
            + handle(.ranging(.proximity(time: time, key: beacon(n), from: .near, to: .immediate)), at: time)
    }

    /// Every line said, the director told each one is over as soon as it is said.
    mutating func run(from start: Double, to end: Double, step: Double = 0.5) -> [HuntAction] {
        var all: [HuntAction] = []
        var t = start
        while t <= end {
            var actions = tick(at: t)
            all += actions
            // Each line is over 0.1 s later (and the line that follows it, and so on).
            var ends = t
            while actions.contains(where: \.isLine) {
                ends += 0.1
                actions = handle(.speechFinished, at: ends)
                all += actions
            }
            t += step
        }
        return all
    }
}

extension HuntAction {
    var isLine: Bool {
        switch self {
        case .say, .tell: true
        case .sound, .found, .watchSpin: false
        }
    }

    var event: LineEvent? {
        switch self {
        case let .say(e, _), let .tell(e, _, _): e
        case .sound, .found, .watchSpin: nil
        }
    }

    var detail: LineDetail? {
        if case let .tell(_, d, _) = self { return d }
        return nil
    }
}

@Suite struct TrailTests {
    @Test func theStartSaysTheFirstClueAfterTheStartUpLine() {
        var d = trail()
        #expect(d.handle(.started, at: 0) == [.say(.startup, interrupt: false)])
        let next = d.handle(.speechFinished, at: 2)
        #expect(next == [.tell(.clue, LineDetail(step: 0, treasure: 1, text: "Look under the big tree."), interrupt: false)])
    }

    @Test func eachFindSaysTheFoundLineThenAfterTheRewardTheNextClue() {
        var d = trail()
        _ = d.handle(.started, at: 0)
        _ = d.handle(.speechFinished, at: 1)
        _ = d.handle(.speechFinished, at: 2)  // the first clue is over
        _ = d.arrive(at: 1, 10)
        _ = d.handle(.speechFinished, at: 11)  // the enter line is over: the immediate line
        _ = d.handle(.speechFinished, at: 12)
        let found = d.tick(at: 13)
        #expect(found == [.tell(.treasureFound, LineDetail(step: 0, treasure: 1), interrupt: false), .found(step: 0)])
        #expect(d.findCount == 1 && d.lastFoundStep == 0)
        // The found line ends; the clue waits for the reward, which comes and is said first.
        #expect(d.handle(.speechFinished, at: 15) == [])
        #expect(d.tick(at: 15.5) == [])
        #expect(d.handle(.rewardHeard, at: 16) == [.say(.reward, interrupt: false)])
        #expect(d.handle(.speechFinished, at: 20) == [.tell(.clue, LineDetail(step: 1, treasure: 2, recording: "/srv/clue2.wav"), interrupt: false)])
        // From now on the second chest is hunted.
        #expect(d.region == chest(2).name)
        #expect(!d.huntOver)
    }

    /// Chest 1 found at 10 s and its found line said by 15 s: waiting for the box's reward.
    func foundFirstChestAwaitingTheReward() -> HuntDirector {
        var d = trail()
        _ = d.handle(.started, at: 0)
        _ = d.handle(.speechFinished, at: 1)
        _ = d.handle(.speechFinished, at: 2)
        _ = d.arrive(at: 1, 10)
        _ = d.handle(.speechFinished, at: 11)
        _ = d.tick(at: 13)
        _ = d.handle(.speechFinished, at: 15)
        return d
    }

    /// On a trail a find moves the hunt on: a closer arrival at the chest just found (the
    /// child stepping right over it) says nothing, and none comes before the next find.
    @Test func aCloserArrivalOnATrailSaysNothing() {
        var d = foundFirstChestAwaitingTheReward()
        #expect(d.handle(.ranging(.closerArrival(time: 15.5, key: beacon(1))), at: 15.5) == [])
        _ = d.handle(.rewardAbsent, at: 16)
        _ = d.handle(.speechFinished, at: 18)  // the next clue is over
        #expect(d.handle(.ranging(.closerArrival(time: 19, key: beacon(1))), at: 19) == [])
        #expect(d.handle(.ranging(.closerArrival(time: 20, key: beacon(2))), at: 20) == [])
        #expect(d.run(from: 20.5, to: 40).isEmpty)
        #expect(d.findCount == 1)
    }

    @Test func withoutARewardTheClueFollowsOnceTheBoxHasNone() {
        var d = foundFirstChestAwaitingTheReward()
        let said1 = d.handle(.rewardAbsent, at: 16).map(\.event)
        #expect(said1 == [.clue])
        // And, never told, it waits at most `rewardWait`.
        var late = foundFirstChestAwaitingTheReward()
        let said2 = late.tick(at: 24.9).map(\.event)
        #expect(said2 == [])
        let said3 = late.tick(at: 25.1).map(\.event)
        #expect(said3 == [.clue])
    }

    @Test func aTreasureFoundOutOfOrderIsNamedOnceAndNotCounted() {
        var d = trail()
        _ = d.handle(.started, at: 0)
        _ = d.handle(.speechFinished, at: 1)
        _ = d.handle(.speechFinished, at: 2)
        // Hunting 1, the child stands at 3.
        #expect(d.arrive(at: 3, 10) == [], "another chest's region says nothing of its own")
        #expect(d.tick(at: 12.9) == [])
        #expect(d.tick(at: 13.1) == [.tell(.outOfOrder, LineDetail(step: 2, treasure: 3, next: 1), interrupt: false)])
        _ = d.handle(.speechFinished, at: 15)
        let said4 = d.tick(at: 20).map(\.event)
        #expect(said4 == [], "once while the child stays there")
        #expect(d.findCount == 0)
        #expect(d.progress?.found == [false, false, false])
    }

    @Test func inAnyOrderEveryChestCountsAndTheLastEndsWithTheFinaleAndTheTime() {
        var d = startedTrail(order: .anyOrder)
        _ = d.arrive(at: 2, 10)
        let second = d.tick(at: 13.5)
        #expect(second == [.tell(.treasureFound, LineDetail(step: 1, treasure: 2, text: "Ye found the second chest!"), interrupt: false), .found(step: 1)])
        _ = d.handle(.speechFinished, at: 15)
        #expect(d.handle(.rewardAbsent, at: 15.5) == [.tell(.clue, LineDetail(step: 0, treasure: 1, text: "Look under the big tree."), interrupt: false)])
        _ = d.handle(.speechFinished, at: 17)
        _ = d.handle(.ranging(.regionExit(time: 20, region: chest(2).name)), at: 20)
        _ = d.handle(.speechFinished, at: 21)
        _ = d.arrive(at: 1, 30)
        _ = d.handle(.speechFinished, at: 31)
        let said5 = d.tick(at: 33.5).compactMap(\.event)
        #expect(said5 == [.treasureFound])
        _ = d.handle(.speechFinished, at: 35)
        let said6 = d.handle(.rewardAbsent, at: 35).map(\.event)
        #expect(said6 == [.clue])
        _ = d.handle(.speechFinished, at: 37)
        _ = d.arrive(at: 3, 60)
        _ = d.handle(.speechFinished, at: 61)
        _ = d.tick(at: 63.5)
        #expect(d.huntOver)
        _ = d.handle(.speechFinished, at: 65)
        let finale = d.handle(.rewardAbsent, at: 66)
        #expect(finale == [.tell(.finale, LineDetail(seconds: 63.5), interrupt: false)])
        #expect(d.findCount == 3)
        // After the finale the child walks away from the last chest: nothing more is said
        // about it (it heard "still far away" and "walk back the way you came").
        _ = d.handle(.speechFinished, at: 70)
        var after: [HuntAction] = []
        after += d.handle(.ranging(.proximity(time: 75, key: beacon(3), from: .immediate, to: .near)), at: 75)
        after += d.handle(.ranging(.trend(time: 80, region: chest(3).name, trend: .colder)), at: 80)
        after += d.handle(.ranging(.proximity(time: 85, key: beacon(3), from: .near, to: .far)), at: 85)
        after += d.handle(.ranging(.regionExit(time: 110, region: chest(3).name)), at: 110)
        var t = 85.0
        while t < 140 { after += d.tick(at: t); t += 0.5 }
        after += d.handle(.ranging(.regionEnter(time: 140, region: chest(3).name)), at: 140)
        #expect(after.compactMap(\.event).isEmpty, "\(after)")
        #expect(!after.contains { if case .sound = $0 { true } else { false } }, "\(after)")
    }

    /// Another chest of an any-order trail is found when its hold is over, even where the
    /// hold's end rounds (13.4 + 3 − 13.4 is under 3 in doubles), not a tick later.
    @Test func anotherChestIsFoundWhenItsHoldIsOver() {
        var d = startedTrail(order: .anyOrder)
        _ = d.arrive(at: 2, 13.4)
        #expect(d.tick(at: (13.4 + 3).nextDown).compactMap(\.event) == [])
        #expect(d.tick(at: 13.4 + 3).contains(.found(step: 1)))
    }

    /// Another chest's find is held as the hunted one's is (`FindHoldRule`): at once at a
    /// slow tag, `found_hold` at a 4 Hz one or one not yet heard, 1 s at a fast one.
    @Test func anotherChestsFindIsHeldByHowFastItsTagIsHeard() {
        for (rate, due) in [(Double?.some(1), 10.0), (3.5, 10.5), (9, 11), (nil, 10.5)] {
            var d = startedTrail(order: .anyOrder, foundHold: 0.5)
            if let rate { _ = d.handle(.ranging(rangeHeard(beacon(2), rate: rate, at: 9)), at: 9) }
            _ = d.arrive(at: 2, 10)
            // The hunter wakes for it (a slow tag's is due at once: the next tick's).
            #expect(d.nextDeadline(after: 10) == (due > 10 ? due : nil), "heard \(String(describing: rate)) a second")
            #expect(!d.tick(at: due.nextDown).contains(.found(step: 1)), "heard \(String(describing: rate)) a second")
            #expect(d.tick(at: due).contains(.found(step: 1)), "heard \(String(describing: rate)) a second")
            #expect(d.nextDeadline(after: due) == nil)
        }
    }

    /// The rate a treasure's find is held by is its nearest beacon's: one heard of another
    /// beacon of the treasure stands for nothing once that one is not the nearest, and a due
    /// deadline gone by hides no later one.
    @Test func anotherChestsHoldIsItsNearestBeaconsRate() {
        let box = Region(name: "box", uuid: uuid, major: 7)
        let fast = BeaconKey(uuid: uuid, major: 7, minor: 1), slow = BeaconKey(uuid: uuid, major: 7, minor: 2)
        var rules = TrailProgress.Rules()
        rules.order = .anyOrder
        var trail = TrailProgress(steps: [TrailStep(region: chest(1)), TrailStep(region: box)], rules: rules)
        trail.start(at: 0)
        func range(_ key: BeaconKey, _ rate: Double, at time: Double) { trail.observe(rangeHeard(key, rate: rate, at: time), at: time) }
        trail.observe(.regionEnter(time: 5, region: box.name), at: 5)
        range(fast, 9, at: 6)
        trail.observe(.nearest(time: 7, region: box.name, key: slow), at: 7)
        trail.observe(.proximity(time: 10, key: slow, from: .near, to: .immediate), at: 10)
        #expect(trail.region(of: 1).rate == nil, "the fast beacon's rate is not the nearest's")
        #expect(trail.nextDeadline(after: 10) == 10.5, "found_hold while its rate is not known")
        range(fast, 9, at: 10.1)
        #expect(trail.nextDeadline(after: 10.1) == 10.5, "another beacon's report changes nothing")
        range(slow, 1, at: 10.2)
        #expect(trail.region(of: 1).rate == 1)
        #expect(trail.nextDeadline(after: 10.2) == nil, "a slow tag's find is due at once")
        #expect(trail.tick(at: 10.25) == [.found(step: 1)])
        // The hunted chest held at immediate while another's deadline went by.
        var director = HuntDirector(configuration: {
            var c = HuntDirector.Configuration(region: chest(1).name)
            c.trail = [TrailStep(region: chest(1)), TrailStep(region: chest(2))]
            c.trailRules.order = .anyOrder
            return c
        }())
        _ = director.handle(.started, at: 0)
        _ = director.arrive(at: 2, 10)
        _ = director.arrive(at: 1, 10.2)
        #expect(director.nextDeadline(after: 10.2) == 10.5, "chest 2's own")
        #expect(director.nextDeadline(after: 10.6) == 10.7, "chest 1's, after chest 2's went by untold")
    }

    @Test func aStuckChildGetsTheStepsHintThenNoMoreThanOnePerInterval() {
        var d = trail(hintAfter: 90, hintInterval: 60)
        _ = d.handle(.started, at: 0)
        _ = d.handle(.speechFinished, at: 1)
        _ = d.handle(.speechFinished, at: 2)
        let lines = d.run(from: 3, to: 200)
        let hints = lines.filter { $0.event == .hint }
        #expect(hints == [
            .tell(.hint, LineDetail(step: 0, treasure: 1, text: "It be near something green."), interrupt: false),
            .tell(.hint, LineDetail(step: 0, treasure: 1, text: "It be near something green."), interrupt: false),
        ], "at 90 s and 150 s")
    }

    @Test func aStepWithoutItsOwnHintGetsThePacksAndTheHintWaitsForQuiet() {
        var d = trail(hintAfter: 20, hintInterval: 20)
        _ = d.handle(.started, at: 0)
        _ = d.handle(.speechFinished, at: 1)
        _ = d.handle(.speechFinished, at: 2)
        _ = d.arrive(at: 1, 10)
        _ = d.handle(.speechFinished, at: 11)
        _ = d.handle(.speechFinished, at: 12)
        _ = d.tick(at: 13)  // chest 1 found; step 2 (no hint of its own) begins
        _ = d.handle(.speechFinished, at: 15)
        _ = d.handle(.rewardAbsent, at: 15)  // the second clue
        // Still speaking the (long) clue when the hint is due at 33 s: it waits for its end.
        let speaking = d.run(from: 33, to: 34.5)
        #expect(!speaking.contains { $0.event == .hint })
        _ = d.handle(.speechFinished, at: 35)
        let hint = d.run(from: 35, to: 35)
        #expect(hint.first == .tell(.hint, LineDetail(step: 1, treasure: 2), interrupt: false), "no text: the pack's hint")
        #expect(hint.dropFirst().first == .tell(.clue, LineDetail(step: 1, treasure: 2, recording: "/srv/clue2.wav"), interrupt: false), "then the clue again")
    }

    @Test func noHintWhileTheChildGetsWarmer() {
        var d = trail(hintAfter: 30, hintInterval: 30)
        _ = d.handle(.started, at: 0)
        _ = d.handle(.speechFinished, at: 1)
        _ = d.handle(.speechFinished, at: 2)
        _ = d.handle(.ranging(.regionEnter(time: 5, region: chest(1).name)), at: 5)
        _ = d.handle(.speechFinished, at: 6)
        var hintsAt: [Double] = []
        var t = 6.0
        while t < 120 {
            // Warmer every 20 s until 80 s: progress, so no hint until 30 s after the last.
            if t.truncatingRemainder(dividingBy: 20) == 0, t <= 80 {
                _ = d.handle(.ranging(.trend(time: t, region: chest(1).name, trend: .warmer)), at: t)
                _ = d.handle(.speechFinished, at: t)
            }
            if d.tick(at: t).contains(where: { $0.event == .hint }) {
                hintsAt.append(t)
                _ = d.handle(.speechFinished, at: t)
            }
            t += 0.5
        }
        #expect(hintsAt == [110])
    }

    @Test func aBetterProximityIsProgressAWorseOneIsNot() {
        var d = trail(hintAfter: 30, hintInterval: 30)
        _ = d.handle(.started, at: 0)
        _ = d.handle(.speechFinished, at: 1)
        _ = d.handle(.speechFinished, at: 2)
        let enter = d.handle(.ranging(.regionEnter(time: 10, region: chest(1).name)), at: 10)
        #expect(enter.map(\.event) == [nil, .regionEntered])
        _ = d.handle(.speechFinished, at: 11)
        _ = d.handle(.ranging(.proximity(time: 20, key: beacon(1), from: .unknown, to: .near)), at: 20)
        _ = d.handle(.speechFinished, at: 21)
        _ = d.handle(.ranging(.proximity(time: 30, key: beacon(1), from: .near, to: .far)), at: 30)
        _ = d.handle(.speechFinished, at: 31)
        let said7 = d.run(from: 32, to: 49.5).contains { $0.event == .hint }
        #expect(!said7, "30 s from the near at 20 s")
        let said8 = d.run(from: 50, to: 51).contains { $0.event == .hint }
        #expect(said8)
    }

    @Test func aRivalsFindIsToldOnceInRaceModeOnly() {
        var race = trail(mode: .race)
        _ = race.handle(.started, at: 0)
        _ = race.handle(.speechFinished, at: 1)
        _ = race.handle(.speechFinished, at: 2)
        #expect(race.handle(.rivalFound(hunter: 2, step: 0), at: 5) == [.tell(.rivalFound, LineDetail(step: 0, treasure: 1, hunter: 2), interrupt: false)])
        _ = race.handle(.speechFinished, at: 7)
        #expect(race.handle(.rivalFound(hunter: 2, step: 0), at: 8) == [], "its announcement repeats: told once")
        // Within 10 s of the last rival line: kept, and told once the 10 s are over.
        #expect(race.handle(.rivalFound(hunter: 3, step: 0), at: 9) == [])
        #expect(race.handle(.rivalFound(hunter: 3, step: 7), at: 10) == [], "no such treasure")
        #expect(race.tick(at: 15.25).map(\.event) == [.rivalFound])

        var solo = trail()
        _ = solo.handle(.started, at: 0)
        _ = solo.handle(.speechFinished, at: 1)
        #expect(solo.handle(.rivalFound(hunter: 2, step: 0), at: 5) == [])
    }

    /// 200 announcements in 30 s (a flood, real or not): at most one rival line per 10 s,
    /// the rest counted into it, and the hunt's own clue not held up.
    @Test func aFloodOfRivalsIsOneLinePerTenSecondsAndNeverDelaysTheClue() {
        var race = trail(mode: .race)
        var said: [(Double, LineEvent?)] = []
        said += race.handle(.started, at: 0).map { (0, $0.event) }
        var t = 0.0
        var speechEnds = 1.0
        for k in 0..<200 {
            t = 0.15 * Double(k + 1)
            if t >= speechEnds {
                let out = race.handle(.speechFinished, at: speechEnds)
                said += out.map { (speechEnds, $0.event) }
                speechEnds = out.contains { $0.event != nil } ? speechEnds + 3 : .infinity
            }
            let out = race.handle(.rivalFound(hunter: UInt16(100 + k), step: k % 2), at: t) + race.tick(at: t)
            said += out.map { (t, $0.event) }
            if out.contains(where: { $0.event != nil }), speechEnds == .infinity { speechEnds = t + 3 }
        }
        let rivals = said.filter { $0.1 == .rivalFound || $0.1 == .rivalsFound }
        #expect(rivals.count <= 4, "\(rivals)")
        for (a, b) in zip(rivals, rivals.dropFirst()) { #expect(b.0 - a.0 >= HuntDirector.rivalSpacing) }
        #expect(rivals.dropFirst().allSatisfy { $0.1 == .rivalsFound }, "several finds told as one line")
        let clue = said.first { $0.1 == .clue }
        #expect(clue != nil && clue?.0 ?? 99 <= 1.5, "the first clue at \(clue?.0 ?? -1) s")
    }

    /// A child standing at chest 1 from the start: the find lands while clue 1 is said. Its
    /// found line is said after the clue (not dropped as stale), and the next clue is 2's.
    @Test func aFindDuringAClueIsSaidAfterItAndTheNextClueIsTheNextChests() {
        var d = trail()
        _ = d.handle(.started, at: 0)
        let clue = d.handle(.speechFinished, at: 2)
        #expect(clue.map(\.event) == [.clue])
        _ = d.arrive(at: 1, 2.5)
        var during: [HuntAction] = []
        for k in 1...36 { during += d.tick(at: 2.5 + Double(k) * 0.25) }  // clue 1 goes on for 9 s
        #expect(during.contains(.found(step: 0)))
        let cut = during.contains { $0.isLine }
        #expect(!cut, "the clue was cut: \(during)")
        let after = d.handle(.speechFinished, at: 12)
        #expect(after.map(\.event) == [.treasureFound], "\(after)")
        _ = d.handle(.rewardAbsent, at: 12.5)
        let next = d.handle(.speechFinished, at: 14)
        #expect(next.first?.event == .clue && next.first?.detail?.step == 1, "\(next)")
        let rest = d.run(from: 14.5, to: 40)
        #expect(!rest.contains { $0.event == .clue && $0.detail?.step == 0 }, "a clue for the chest already found")
    }

    @Test func aRivalsFindOfAChestThisHunterHasIsNotNews() {
        var race = trail(mode: .race)
        _ = race.handle(.started, at: 0)
        _ = race.handle(.speechFinished, at: 1)
        _ = race.handle(.speechFinished, at: 2)
        _ = race.arrive(at: 1, 10)
        _ = race.handle(.speechFinished, at: 11)
        _ = race.tick(at: 13.5)
        _ = race.handle(.speechFinished, at: 15)
        #expect(race.handle(.rivalFound(hunter: 2, step: 0), at: 16) == [])
    }

    @Test func rivalsToldAreBounded() {
        var progress = TrailProgress(steps: [TrailStep(region: chest(1))], rules: {
            var rules = TrailProgress.Rules()
            rules.mode = .race
            return rules
        }())
        var told = 0
        for id in 0..<UInt16(TrailProgress.maximumRivals + 10) where progress.rival(id, found: 0) { told += 1 }
        #expect(told == TrailProgress.maximumRivals + 10)
        // The oldest were forgotten: told again; the newest are still remembered.
        let oldest = progress.rival(0, found: 0)
        let newest = progress.rival(UInt16(TrailProgress.maximumRivals + 9), found: 0)
        #expect(oldest && !newest)
    }

    @Test func placeholdersAreFilledAndUnknownOnesLeftOut() {
        let detail = LineDetail(treasure: 3, next: 2, hunter: 7, seconds: 125.4)
        #expect(detail.fill("That be treasure {treasure}, but first find number {next}!") == "That be treasure 3, but first find number 2!")
        #expect(detail.fill("Hunter {hunter} in {minutes} minutes and {seconds} seconds{nothing}.") == "Hunter 7 in 2 minutes and 5 seconds.")
        #expect(detail.fill("an open { brace") == "an open { brace")
        #expect(detail.fill("{minutes:minute:minutes} and {seconds:second:seconds}") == "2 minutes and 5 seconds")
        #expect(LineDetail(seconds: 61).fill("{minutes:minute:minutes} and {seconds:second:seconds}") == "1 minute and 1 second")
    }

    @Test func withoutATrailNothingChanges() {
        var d = director()
        #expect(d.progress == nil)
        #expect(d.handle(.started, at: 0) == [.say(.startup, interrupt: false)])
        #expect(d.handle(.speechFinished, at: 2) == [])
        #expect(d.run(from: 3, to: 300).isEmpty, "no hint, no clue")
        #expect(d.handle(.rivalFound(hunter: 2, step: 0), at: 301) == [])
    }
}

@Suite struct StandingsTests {
    @Test func finishersAreKeptInOrderOncePerHunterAndTreasure() {
        var standings = Standings()
        let changed = [
            standings.record(hunter: 2, treasure: 1, at: 10), standings.record(hunter: 1, treasure: 1, at: 12),
            standings.record(hunter: 2, treasure: 1, at: 13), standings.record(hunter: 2, treasure: 2, at: 20),
        ]
        #expect(changed == [true, true, false, true], "an announcement repeats: the third changes nothing")
        #expect(standings.finishers == [
            .init(hunter: 2, treasure: 1, time: 10), .init(hunter: 1, treasure: 1, time: 12), .init(hunter: 2, treasure: 2, time: 20),
        ])
        #expect(standings.first(of: 1)?.hunter == 2)
        #expect(standings.first(of: 3) == nil)
    }

    @Test func aFloodOfMadeUpIdsCannotPushOutTheFirstFinishers() {
        var standings = Standings(capacity: 4)
        _ = standings.record(hunter: 1, treasure: 1, at: 1)
        for id in UInt16(100)..<200 { _ = standings.record(hunter: id, treasure: 1, at: 2) }
        #expect(standings.finishers.count == 4)
        #expect(standings.finishers.first?.hunter == 1)
        #expect(standings.refused == 97)
    }
}

@Suite struct ClueRepeatTests {
    @Test func theButtonRepeatsTheCurrentClueButNeverCutsALineAsImportant() {
        var d = trail(hintAfter: 600, hintInterval: 600)
        _ = d.handle(.started, at: 0)
        // The first clue is due after the start-up line; while it is said, a press waits for its end.
        let first = d.handle(.speechFinished, at: 1)
        #expect(first.compactMap(\.event) == [.clue])
        #expect(d.handle(.clueAsked, at: 2).isEmpty, "a clue being said is not cut by itself")
        let again = d.handle(.speechFinished, at: 5)
        #expect(again.compactMap(\.event) == [.clue], "said again once it is over")
        _ = d.handle(.speechFinished, at: 8)
        #expect(d.handle(.clueAsked, at: 20).compactMap(\.event) == [.clue], "said at once when nothing is said")
    }

    /// A press while the find or its reward is said (a code being spelled) waits for them:
    /// it cut the reward at its next pause, and the reward was never said again.
    @Test func theButtonNeverCutsTheFindOrItsReward() {
        var d = trail(hintAfter: 600, hintInterval: 600)
        _ = d.handle(.started, at: 0)
        _ = d.handle(.speechFinished, at: 1)
        _ = d.handle(.speechFinished, at: 2)
        // Lines are not said to be over here: the found line is still being said at 14.
        var found = d.arrive(at: 1, 10)
        var t = 10.0
        while t < 14 { found += d.tick(at: t); t += 0.25 }
        #expect(found.contains { $0.event == .treasureFound }, "\(found)")
        // During the found line: the reward comes in, then a press.
        #expect(d.handle(.rewardHeard, at: 14.2).isEmpty, "the reward waits for the found line")
        #expect(d.handle(.clueAsked, at: 14.3).isEmpty, "a press cut the found line")
        let reward = d.handle(.speechFinished, at: 15)
        #expect(reward.compactMap(\.event) == [.reward], "\(reward)")
        #expect(d.handle(.clueAsked, at: 15.5).isEmpty, "a press cut the reward")
        let after = d.handle(.speechFinished, at: 20).compactMap(\.event)
        #expect(after.first == .clue, "the clue follows the reward: \(after)")
    }

    @Test func aFindOutOfOrderIsFollowedByTheClueOfTheChestToFindFirst() {
        var d = trail(hintAfter: 600, hintInterval: 600)
        _ = d.handle(.started, at: 0)
        _ = d.handle(.speechFinished, at: 1)
        _ = d.handle(.speechFinished, at: 2)
        _ = d.arrive(at: 2, 10)
        let lines = d.run(from: 14, to: 20).filter { $0.event != .regionEntered && $0.event != .proximityImmediate }
        #expect(lines.compactMap(\.event) == [.outOfOrder, .clue])
        #expect(lines.last == .tell(.clue, LineDetail(step: 0, treasure: 1, text: "Look under the big tree."), interrupt: false))
    }

    @Test func withoutATrailTheButtonSaysNothing() {
        var d = HuntDirector(configuration: HuntDirector.Configuration(region: "treasure"))
        _ = d.handle(.started, at: 0)
        _ = d.handle(.speechFinished, at: 1)
        #expect(d.handle(.clueAsked, at: 2).isEmpty)
    }
}
