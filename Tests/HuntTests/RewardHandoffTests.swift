import Hunt
import Testing

@Suite struct RewardHandoffTests {
    @Test func foundScansActivelyAndAnnouncesThenTheRewardEndsActiveScanning() {
        var h = RewardHandoff(configuration: .init(rewardTimeout: 10, announceSeconds: 60))
        #expect(h.found(at: 100) == [.scanActively(true), .announce(true)])
        #expect(h.deadline == 110)
        #expect(h.heard(nil, at: 100.5) == [], "a scan response without a reward changes nothing")
        #expect(h.heard("ARRR-GOLD", at: 101) == [.scanActively(false), .reward("ARRR-GOLD")])
        #expect(h.heard("AGAIN", at: 101.2) == [], "one reward per find")
        #expect(h.tick(at: 159.9) == [])
        #expect(h.tick(at: 160) == [.announce(false)])
        #expect(h.deadline == nil)
        #expect(h.tick(at: 500) == [])
    }

    @Test func noRewardWithinTheTimeoutGoesBackToPassive() {
        var h = RewardHandoff(configuration: .init(rewardTimeout: 10, announceSeconds: 0))
        #expect(h.found(at: 0) == [.scanActively(true)], "announceSeconds 0: never announces")
        #expect(h.tick(at: 9.9) == [])
        #expect(h.tick(at: 10) == [.scanActively(false), .noReward])
        #expect(h.heard("LATE", at: 11) == [])
    }

    @Test func aSecondFindDuringTheHandoffIsIgnoredAndAfterItStartsAgain() {
        var h = RewardHandoff(configuration: .init(rewardTimeout: 5, announceSeconds: 30))
        _ = h.found(at: 0)
        #expect(h.found(at: 3) == [], "still listening")
        _ = h.heard("X", at: 4)
        #expect(h.found(at: 20) == [], "the reward was read 16 s ago: not again")
        #expect(h.tick(at: 30) == [.announce(false)])
        #expect(h.found(at: 40) == [.scanActively(true), .announce(true)], "a new find, 36 s after the reward")
    }

    @Test func aFindAfterNoRewardListensAgainAndAnnouncesLonger() {
        var h = RewardHandoff(configuration: .init(rewardTimeout: 5, announceSeconds: 30))
        _ = h.found(at: 0)
        #expect(h.tick(at: 5) == [.scanActively(false), .noReward])
        #expect(h.found(at: 12) == [.scanActively(true), .announce(true)], "already announcing: anew (a new challenge)")
        #expect(h.tick(at: 30) == [.scanActively(false), .noReward], "second timeout at 17, seen at the next tick")
        #expect(h.tick(at: 41.9) == [])
        #expect(h.tick(at: 42) == [.announce(false)], "the announcement runs 30 s from the latest find")
    }

    @Test func withoutAnnouncementsARewardIsNotRepeatedWithinAMinute() {
        var h = RewardHandoff(configuration: .init(rewardTimeout: 5, announceSeconds: 0))
        _ = h.found(at: 0)
        _ = h.heard("X", at: 1)
        #expect(h.found(at: 30) == [])
        #expect(h.found(at: 61) == [.scanActively(true)])
    }
}

@Suite struct RewardLineTests {
    @Test func theRewardWaitsForTheFoundLineThenIsSaid() {
        var d = director()
        _ = d.feed(.regionEnter(time: 0, region: region))
        _ = d.handle(.speechFinished, at: 1)
        _ = d.feed(.proximity(time: 2, key: key, from: .near, to: .immediate))
        _ = d.handle(.speechFinished, at: 3)
        #expect(d.tick(at: 5) == [.say(.treasureFound, interrupt: false), .found(step: nil)])
        #expect(d.handle(.rewardHeard, at: 5.5) == [], "never cuts the found line short")
        #expect(d.feed(.proximity(time: 6, key: key, from: .immediate, to: .near)) == [])
        #expect(d.handle(.speechFinished, at: 9) == [.say(.reward, interrupt: false)])
        #expect(d.handle(.speechFinished, at: 15) == [])
    }

    @Test func aRewardHeardInSilenceIsSaidAtOnce() {
        var d = director()
        #expect(d.handle(.rewardHeard, at: 1) == [.say(.reward, interrupt: false)])
    }

    @Test func aRepeatedFindDoesNotCutTheRewardShort() {
        var d = director()
        _ = d.feed(.regionEnter(time: 0, region: region))
        _ = d.handle(.speechFinished, at: 1)
        _ = d.feed(.proximity(time: 2, key: key, from: .near, to: .immediate))
        _ = d.handle(.speechFinished, at: 3)
        _ = d.tick(at: 5)
        _ = d.handle(.speechFinished, at: 8)
        #expect(d.handle(.rewardHeard, at: 8.5) == [.say(.reward, interrupt: false)])
        // The child steps back and forth: near, then immediate held again while the reward plays.
        _ = d.feed(.proximity(time: 9, key: key, from: .immediate, to: .near))
        _ = d.feed(.proximity(time: 9.5, key: key, from: .near, to: .immediate))
        // The find counts (the handoff decides whether its reward is read again), its line is not said.
        #expect(d.tick(at: 13) == [.found(step: nil)])
        #expect(d.handle(.speechFinished, at: 15) == [])
    }
}

@Suite struct RewardReadingTests {
    @Test func aCodeIsReadSpelledAndReadAgain() {
        #expect(RewardReading.text(for: "ARRR-GOLD-26") == "ARRR-GOLD-26. A, R, R, R, dash, G, O, L, D, dash, 2, 6. ARRR-GOLD-26.")
        #expect(RewardReading.spelling("go ☠") == ["G", "O", "space"])
        #expect(RewardReading.text(for: "X") == "X", "one character needs no spelling")
    }
}

@Suite struct RewardWordsOrCodeTests {
    /// Issue #23: "Look under the bed" was spelled letter by letter for 24 s.
    @Test func wordsAreSaidAsASentenceTwice() {
        #expect(RewardReading.text(for: "Look under the bed") == "Look under the bed. Look under the bed.")
        #expect(RewardReading.text(for: "Ice cream!") == "Ice cream! Ice cream!")
        #expect(RewardReading.text(for: "  Look\tunder  the bed ") == "Look under the bed. Look under the bed.")
        #expect(RewardReading.text(for: "Chocolate") == "Chocolate. Chocolate.")
    }

    @Test(arguments: ["Look under the bed", "LOOK UNDER THE BED", "Look in drawer 3", "Chocolate", "たからもの",
                      "Ice cream!", "The captain's blue-green hat", "Go to the gym", "ARRR GOLD", "Mr Smith's shed"])
    func words(_ reward: String) {
        #expect(!RewardReading.isCode(reward), "\(reward)")
    }

    @Test(arguments: ["ARRR-GOLD-2026", "X7K2", "gold26", "gold_coin", "XKCD", "GOLD", "2026", "ARRR GOLD 2026",
                      "Open box X7K2", "a.b", "Q", "PZL rocks", "--", "ARRR-GOLD"])
    func codes(_ reward: String) {
        #expect(RewardReading.isCode(reward), "\(reward)")
    }

    @Test func codesAreStillSpelled() {
        #expect(RewardReading.text(for: "X7K2") == "X7K2. X, 7, K, 2. X7K2.")
        #expect(RewardReading.text(for: "ARRR-GOLD-2026")
            == "ARRR-GOLD-2026. A, R, R, R, dash, G, O, L, D, dash, 2, 0, 2, 6. ARRR-GOLD-2026.")
        #expect(RewardReading.text(for: "") == "")
        #expect(RewardReading.text(for: "   ") == "   ")
    }
}
