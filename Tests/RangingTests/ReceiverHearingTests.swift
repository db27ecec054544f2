import Testing
@testable import Ranging

/// A receiver that hears nobody at all is deaf (Wi-Fi on the shared antenna, a crowded band, a
/// controller resetting), and its silence says nothing of the beacons: no region is left and
/// no beacon lost while the others it usually hears are silent with them. Without others, or
/// while they are heard, the beacons' silences count as before.
@Suite struct ReceiverHearingTests {
    let region = Region(name: "treasure", uuid: testUUID)

    @Test func aReceiverThatHearsNobodyElseIsNeverDeaf() {
        var hearing = ReceiverHearing()
        for i in 0..<100 { #expect(hearing.heard(at: Double(i) * 0.1) == nil) }
        #expect(!hearing.isDeaf(at: 40))
        #expect(hearing.heard(at: 40) == nil)
    }

    /// Others heard every `interval` s from 0 until `end`; returns the last time heard.
    func hearOthers(_ hearing: inout ReceiverHearing, every interval: Double, until end: Double) -> Double {
        var t = 0.0, last = 0.0
        while t < end {
            _ = hearing.heard(at: t)
            hearing.heardOther(at: t)
            last = t
            t += interval
        }
        return last
    }

    @Test func everyoneSilentPastTheOthersUsualGapsIsDeafUntilSomeoneIsHeard() {
        var hearing = ReceiverHearing()
        // Others every 0.3 s for 10 s: deaf after 3 × 0.3 s, but at least 1 s.
        let last = hearOthers(&hearing, every: 0.3, until: 10)
        #expect(!hearing.isDeaf(at: last + 0.9))
        #expect(hearing.isDeaf(at: last + 1.1))
        #expect(hearing.isDeaf(at: last + 30))
        // Past `longestDeafness` the receiver hears nothing: that silence counts.
        #expect(!hearing.isDeaf(at: last + ReceiverHearing.longestDeafness + 1))
        // Heard again 20 s on: the spell was 20 s.
        let spell = hearing.heard(at: last + 20)
        #expect(spell.map { abs($0 - 20) < 1e-9 } == true)
        #expect(!hearing.isDeaf(at: last + 20.5))
    }

    @Test func othersThatWentQuietBeforeTheSilenceTellNothing() {
        var hearing = ReceiverHearing()
        var t = hearOthers(&hearing, every: 0.3, until: 10)
        // The beacons go on alone for 20 s (the phone left): their silence after that is theirs.
        while t < 30 {
            _ = hearing.heard(at: t)
            t += 0.1
        }
        #expect(!hearing.isDeaf(at: t + 10))
        #expect(hearing.heard(at: t + 10) == nil)
    }

    @Test func aLostControllerIsDeafUntilBackAndItsSpellIsCountedOnce() {
        var hearing = ReceiverHearing()
        let last = hearOthers(&hearing, every: 0.3, until: 10)
        hearing.lost(at: last + 0.2)
        #expect(hearing.isDeaf(at: last + 0.5))
        #expect(hearing.isDeaf(at: last + 500))
        // Back 90 s on: the others had not yet been silent long enough when it went, so the
        // spell runs from the loss.
        let spell = hearing.back(at: last + 90.2)
        #expect(spell.map { abs($0 - 90) < 1e-9 } == true)
        #expect(!hearing.isDeaf(at: last + 90.3))
        #expect(hearing.heard(at: last + 90.4) == nil)
        #expect(hearing.back(at: last + 91) == nil)
    }

    @Test func slowOthersAskForALongerSilence() {
        var hearing = ReceiverHearing()
        // Others every 2 s: deaf only after 6 s of nobody.
        let last = hearOthers(&hearing, every: 2, until: 40)
        #expect(!hearing.isDeaf(at: last + 5.5))
        #expect(hearing.isDeaf(at: last + 6.5))
    }

    /// One 10 Hz beacon of the region and, with `others`, phones heard 4 times a second; from
    /// `deafFrom` for `deafFor` s the receiver hears nobody (with `beaconOff` only the beacon is
    /// silent, and for good). Returns the exits and the unknowns.
    func walk(others: Bool, deafFrom: Double = 300, deafFor: Double, beaconOff: Bool = false, until end: Double = 420)
        -> (exits: [Double], unknowns: [Double]) {
        var engine = RangingEngine(configuration: .default, regions: [region])
        var exits: [Double] = []
        var unknowns: [Double] = []
        func note(_ events: [RangingEvent]) {
            for e in events {
                if e.isExit { exits.append(e.time) }
                if let change = e.proximityChange, change.to == .unknown { unknowns.append(e.time) }
            }
        }
        var t = 0.0
        var i = 0
        while t < end {
            let deaf = t >= deafFrom && t < deafFrom + deafFor
            let beaconSilent = beaconOff ? t >= deafFrom : deaf
            if !beaconSilent { note(engine.ingest(sample(1, -70 + (i % 3) * 3 - 3, at: t))) }
            if others, !deaf, i % 5 == 2 { engine.heardOther(at: t + 0.01) }
            note(engine.advance(to: t + 0.05))
            t += 0.1
            i += 1
        }
        return (exits, unknowns)
    }

    @Test func aDeafSpellIsNoExitWhenOthersAreUsuallyHeard() {
        // 25 s of nobody, five minutes into the hunt: without others it is an exit (the beacon
        // silent past its limit); with them, nothing.
        let alone = walk(others: false, deafFor: 25)
        #expect(alone.exits.contains { $0 > 300 && $0 < 325 })
        let withOthers = walk(others: true, deafFor: 25)
        #expect(withOthers.exits.isEmpty)
        #expect(withOthers.unknowns.isEmpty)
    }

    @Test func aBeaconSilentWhileOthersAreHeardIsGoneAsBefore() throws {
        // The beacon switched off (or the child walked away) while the phones are still heard.
        let alone = walk(others: false, deafFor: 0, beaconOff: true)
        let withOthers = walk(others: true, deafFor: 0, beaconOff: true)
        let first = try #require(alone.exits.first)
        #expect(withOthers.exits.first == first)
        #expect(!withOthers.unknowns.isEmpty)
    }

    @Test func aReceiverDeafForMoreThanAMinuteLeavesTheRegion() {
        let long = walk(others: true, deafFor: 100)
        #expect(long.exits.contains { $0 > 300 + ReceiverHearing.longestDeafness && $0 < 400 })
    }

    @Test func aControllerGoneByItsOwnWordIsDeafHoweverLongAndWithNobodyElse() throws {
        // No others at all; the beacon heard until 300 s, the controller gone from 300.5 s for
        // 100 s (longer than any silence of others counts), then back without the beacon.
        var engine = RangingEngine(configuration: .default, regions: [region])
        var t = 0.0
        var i = 0
        var events: [RangingEvent] = []
        while t < 300 {
            events += engine.ingest(sample(1, -70 + (i % 3) * 3 - 3, at: t))
            events += engine.advance(to: t + 0.05)
            t += 0.1
            i += 1
        }
        let lastPacket = t - 0.1
        let limit = try #require(engine.exitSilenceLimit(for: key(1)))
        engine.receiverLost(at: 300.5)
        var exit: Double?
        var unknown: Double?
        func note(_ more: [RangingEvent], at time: Double) {
            for e in more {
                if e.isExit, exit == nil { exit = time }
                if e.proximityChange?.to == .unknown, unknown == nil { unknown = time }
            }
        }
        t = 300.5
        while t < 400.5 {
            note(engine.advance(to: t), at: t)
            t += 0.25
        }
        #expect(exit == nil && unknown == nil)
        engine.receiverBack(at: 400.5)
        while t < 500 {
            note(engine.advance(to: t), at: t)
            t += 0.05
        }
        // Its silence before the loss (0.4 s) counts, the 100 s of the outage do not.
        let left = try #require(exit)
        #expect(abs(left - (lastPacket + 100 + limit)) < 0.3)
        #expect(unknown != nil)
    }

    /// A packet that comes while the controller is gone by its own word (a report queued
    /// before the reset, a transport that delivers late): the beacon's silence then starts at
    /// that packet, and only what is left of the outage after it is excused. The whole
    /// outage was excused again from it, and the beacon's last packet put past now: a tag
    /// switched off was held 20 s longer (the outage's part before the packet), and the next
    /// packet's gap was negative.
    @Test func aPacketWhileTheControllerIsGoneIsNotExcusedTwice() throws {
        func exitTime(packetDuringOutage: Bool) throws -> (exit: Double, limit: Double) {
            var engine = RangingEngine(configuration: .default, regions: [region])
            var t = 0.0
            var i = 0
            while t < 300 {
                _ = engine.ingest(sample(1, -70 + (i % 3) * 3 - 3, at: t))
                _ = engine.advance(to: t + 0.05)
                t += 0.1
                i += 1
            }
            let limit = try #require(engine.exitSilenceLimit(for: key(1)))
            engine.receiverLost(at: 300)
            if packetDuringOutage { _ = engine.ingest(sample(1, -70, at: 320)) }
            #expect(engine.advance(to: 340).isEmpty)
            engine.receiverBack(at: 340)
            t = 340
            while t < 500 {
                if engine.advance(to: t).contains(where: \.isExit) { return (t, limit) }
                t += 0.05
            }
            Issue.record("never left")
            return (0, limit)
        }
        // Its last packet 0.1 s before the outage: that much of its silence counts.
        let quiet = try exitTime(packetDuringOutage: false)
        #expect(abs(quiet.exit - (340 + quiet.limit - 0.1)) < 0.3)
        // Its last packet at 320, inside the outage: the silence from it was all deaf, and
        // counts from the controller's return.
        let heard = try exitTime(packetDuringOutage: true)
        #expect(abs(heard.exit - (340 + heard.limit)) < 0.3, "left at \(heard.exit), limit \(heard.limit)")
    }

    /// Others heard in bursts (a phone: ten reports 25 ms apart every 40 s) make every pause
    /// between bursts look like deafness (their usual gap is 25 ms). A beacon gone for good
    /// then had its silence excused 40 s at every burst: judged gone only after some 20
    /// minutes. Inferred deafness excuses at most a minute of one silence.
    @Test func othersInBurstsExcuseAtMostAMinuteOfABeaconsSilence() throws {
        var engine = RangingEngine(configuration: .default, regions: [region])
        var t = 0.0
        var i = 0
        var exit: Double?
        var unknown: Double?
        var lastPacket = 0.0
        var limit: Double?
        while t < 1200 {
            if t < 300 {
                _ = engine.ingest(sample(1, -70 + (i % 3) * 3 - 3, at: t))
                lastPacket = t
                limit = engine.exitSilenceLimit(for: key(1))
            }
            // A burst every 40 s: ten reports 25 ms apart, the last before the beacon's end
            // 0.3 s before it (the silence then starts with the others heard).
            if i % 400 == 197 { for k in 0..<10 { engine.heardOther(at: t + 0.001 + Double(k) * 0.025) } }
            for e in engine.advance(to: t + 0.05) {
                if e.isExit, exit == nil { exit = t + 0.05 }
                if e.proximityChange?.to == .unknown, unknown == nil { unknown = t + 0.05 }
            }
            t += 0.1
            i += 1
        }
        let left = try #require(exit), exitLimit = try #require(limit)
        #expect(left <= lastPacket + ReceiverHearing.longestDeafness + exitLimit + 0.5, "left \(left - lastPacket) s after the last packet")
        let gone = try #require(unknown)
        #expect(gone <= lastPacket + ReceiverHearing.longestDeafness + 120, "unknown \(gone - lastPacket) s after the last packet")
    }

    /// The controller reset for 6 s (gone by its own word, then back), the beacon heard on
    /// either side: the outage is no loss gap of the beacon's. It was learned as one, and
    /// every exit and loss limit was 1.5 times it (9 s and more) for the next 20 minutes.
    @Test func aControllerResetIsNoLossGapOfTheBeacons() throws {
        var engine = RangingEngine(configuration: .default, regions: [region])
        var t = 0.0
        var i = 0
        var before: Double?
        while t < 400 {
            let gone = t >= 300 && t < 306
            if abs(t - 300) < 0.05 { engine.receiverLost(at: t) }
            if abs(t - 306) < 0.05 { engine.receiverBack(at: t) }
            if !gone { _ = engine.ingest(sample(1, -70 + (i % 3) * 3 - 3, at: t)) }
            _ = engine.advance(to: t + 0.05)
            if t < 300 { before = engine.lostSilenceLimit(for: key(1)) }
            t += 0.1
            i += 1
        }
        let limitBefore = try #require(before)
        let after = try #require(engine.lostSilenceLimit(for: key(1)))
        #expect(after < limitBefore + 1, "lost limit \(limitBefore) s before the reset, \(after) s after")
    }

    @Test func theSilenceAfterADeafSpellCountsFromWhereItWas() throws {
        // Deaf 20 s, then the beacon never comes back while the phones do: the region is left
        // as long after the spell as it would have been after the beacon's last packet.
        var engine = RangingEngine(configuration: .default, regions: [region])
        var t = 0.0
        var i = 0
        var lastPacket = 0.0
        var exit: Double?
        while t < 420 {
            let deaf = t >= 300 && t < 320
            if t < 300 {
                _ = engine.ingest(sample(1, -70 + (i % 3) * 3 - 3, at: t))
                lastPacket = t
            }
            if !deaf, i % 5 == 2 { engine.heardOther(at: t + 0.01) }
            if engine.advance(to: t + 0.05).contains(where: \.isExit), exit == nil { exit = t + 0.05 }
            t += 0.1
            i += 1
        }
        let limit = try #require(engine.exitSilenceLimit(for: key(1)))
        let left = try #require(exit)
        // The spell began at the last report of anyone (the beacon's last packet or a phone's
        // just after it) and ended with the first phone after it.
        #expect(abs(left - (lastPacket + 20 + limit)) < 0.6)
    }
}
