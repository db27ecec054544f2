import Testing
@testable import Ranging

/// A beacon that changes its advertising interval (power-saving firmware, a new setting):
/// the silences learned at the old rate are still silences in seconds.
@Suite struct RateChangeTests {
    /// Packets every `interval` s from `start` for `seconds`, silent for `silence` s at the
    /// start of every `period` s (no silence when 0); returns the time of the last packet.
    @discardableResult
    func feed(_ statistics: inout ArrivalStatistics, interval: Double, from start: Double, seconds: Double,
              silence: Double = 0, period: Double = 60) -> Double {
        var t = start
        var last = start
        while t < start + seconds {
            if silence == 0 || (t - start).truncatingRemainder(dividingBy: period) >= silence {
                statistics.record(time: t, .default)
                last = t
            }
            t += interval
        }
        return last
    }

    @Test func aBeaconThatSlowsDownGetsTheLimitOfItsNewRate() {
        // 10 min at 10 Hz, then 3 min at 1 Hz without loss. Read in the old unit each 1 s
        // gap would be nine lost packets, 180 of them: a limit of tens of seconds.
        var slowed = ArrivalStatistics()
        feed(&slowed, interval: 0.1, from: 0, seconds: 600)
        let last = feed(&slowed, interval: 1.0, from: 600, seconds: 180)
        var always = ArrivalStatistics()
        feed(&always, interval: 1.0, from: 0, seconds: 780)
        let nominal = slowed.nominalInterval ?? 0
        #expect(abs(nominal - 1.0) < 0.05, "the nominal interval follows the new rate: \(nominal) s")
        let limit = slowed.silenceLimit(falseAlarmsPerHour: 0.5, at: last, .default)
        let reference = always.silenceLimit(falseAlarmsPerHour: 0.5, at: last, .default)
        #expect(limit <= reference + 2, "slowed to 1 Hz: \(limit) s against \(reference) s for a beacon always at 1 Hz")
    }

    @Test func aBeaconThatSpeedsUpKeepsTheSilencesItWasSeenTo() {
        // 10 min at 1 Hz with a 5 s silence every minute, then 1 min at 10 Hz. The 5 s
        // silences were four lost packets of 1 s; read in the new unit they would be 0.5 s.
        var quickened = ArrivalStatistics()
        let before = feed(&quickened, interval: 1.0, from: 0, seconds: 600, silence: 5)
        let limitBefore = quickened.silenceLimit(falseAlarmsPerHour: 0.5, at: before, .default, longestGapFloor: false)
        let last = feed(&quickened, interval: 0.1, from: 600, seconds: 60)
        let nominal = quickened.nominalInterval ?? 0
        #expect(abs(nominal - 0.1) < 0.01, "the nominal interval follows the new rate: \(nominal) s")
        let limit = quickened.silenceLimit(falseAlarmsPerHour: 0.5, at: last, .default, longestGapFloor: false)
        #expect(limit >= 5, "ten 5 s silences in 10 min are still 5 s silences at 10 Hz: \(limit) s")
        #expect(abs(limit - limitBefore) <= 0.3 * limitBefore, "in seconds the limit stays: \(limit) s against \(limitBefore) s at 1 Hz")
    }

    @Test func slowGapsForLessThanFourRankingsAreNoRateChange() throws {
        // 10 min at 10 Hz, then 48 gaps of 1 s: the 10th percentile of the 32 recent gaps is
        // slow once 29 of them are, and then for fewer than four re-rankings (one every 8th
        // packet), so the unit stays and the 1 s gaps count as loss of the 10 Hz beacon (a
        // long burst, not a new rate). 64 such gaps are a new rate.
        var statistics = ArrivalStatistics()
        feed(&statistics, interval: 0.1, from: 0, seconds: 600)
        feed(&statistics, interval: 1.0, from: 600, seconds: 48)
        let held = try #require(statistics.nominalInterval)
        #expect(held < 0.15, "48 slow gaps: still the 10 Hz unit (\(held) s)")
        feed(&statistics, interval: 1.0, from: 648, seconds: 16)
        let moved = try #require(statistics.nominalInterval)
        #expect(abs(moved - 1.0) < 0.05, "64 slow gaps: the new rate (\(moved) s)")
    }

    @Test(arguments: [(0.1, 0.2), (0.2, 0.1), (0.35, 0.1)])
    func reexpressingTheLadderIsTheLadderOfTheNewRate(old: Double, new: Double) throws {
        // The same silences (0.7, 2.1 and 4.2 s, in a mixture: many short, a few long, after
        // every 3 s of packets; none long enough to be judged an absence at either rate)
        // learned at one rate and at another; the first ladder
        // re-expressed at the second rate is the ladder learned there, threshold by threshold
        // (0.35 → 0.1 s: the short ones are single losses at 0.35 s, a spike that an
        // interpolation between thresholds smears).
        func learn(_ interval: Double) -> ArrivalStatistics {
            var statistics = ArrivalStatistics()
            var t = 0.0
            var cycle = 0
            while t < 1800 {
                let start = t
                while t < start + 3 {
                    statistics.record(time: t, .default)
                    t += interval
                }
                cycle += 1
                let silence = cycle % 15 == 0 ? 4.2 : cycle % 4 == 0 ? 2.1 : 0.7
                t += silence - interval
            }
            return statistics
        }
        var first = learn(old)
        let second = learn(new)
        first.reexpress(inInterval: new)
        for (i, u) in ArrivalStatistics.ladder.enumerated() {
            let (n, own) = (first.exceeding[i], second.exceeding[i])
            #expect(abs(n - own) <= 0.1 * own + 0.5, "\(old) → \(new) s, gaps of >= \(u) lost: \(n) re-expressed, \(own) learned")
            let (sum, ownSum) = (first.excessSum[i], second.excessSum[i])
            #expect(abs(sum - ownSum) <= 0.15 * ownSum + 1, "\(old) → \(new) s, excess over \(u): \(sum) re-expressed, \(ownSum) learned")
        }
    }
}
