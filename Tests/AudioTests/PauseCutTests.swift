import Audio
import Testing

/// A more important line takes over at a pause of the one playing, never inside a word.
@Suite struct PauseCutTests {
    static let rate = 22050

    /// A "word" is a loud tone; words are separated by `gap` seconds of silence.
    static func speech(words: [Double], gap: Double, amplitude: Int16 = 12000) -> [Int16] {
        var out: [Int16] = []
        for (w, length) in words.enumerated() {
            let n = Int(length * Double(rate))
            for i in 0..<n { out.append(i % 40 < 20 ? amplitude : -amplitude) }
            if w < words.count - 1 { out += [Int16](repeating: 0, count: Int(gap * Double(rate))) }
        }
        return out
    }

    func render(_ mixer: inout Mixer, seconds: Double) -> [Int16] {
        var out: [Int16] = []
        var period = [Int16](repeating: 0, count: 441)
        for _ in 0..<Int(seconds * 50) {
            mixer.render(into: &period)
            out += period
        }
        return out
    }

    @Test func aLineIsTakenOverAtItsNextPause() {
        var mixer = Mixer(sampleRate: Self.rate)
        let first = Self.speech(words: [0.4, 0.4, 0.4], gap: 0.08)
        mixer.play(PCMBuffer(sampleRate: Self.rate, samples: first), slot: .speech)
        var out = render(&mixer, seconds: 0.2)
        // Mid-word at 0.2 s: the new line waits for the pause at 0.4 s.
        let second = [Int16](repeating: 5000, count: Self.rate)
        mixer.play(PCMBuffer(sampleRate: Self.rate, samples: second), slot: .speech, atPause: true)
        out += render(&mixer, seconds: 1.0)
        let pause = Int(0.4 * Double(Self.rate))
        #expect(Array(out[0..<pause]) == Array(first[0..<pause]), "the first word is whole")
        // Then the new line (after its short fade-in), nothing of the second word.
        let later = Array(out[(pause + 400)..<(pause + 4000)])
        #expect(later.allSatisfy { $0 == 5000 }, "the new line, not the second word")
    }

    @Test func withoutAPauseALineEndingSoonIsLetFinish() {
        var mixer = Mixer(sampleRate: Self.rate)
        let first = Self.speech(words: [0.7], gap: 0)
        mixer.play(PCMBuffer(sampleRate: Self.rate, samples: first), slot: .speech)
        var out = render(&mixer, seconds: 0.1)
        mixer.play(PCMBuffer(sampleRate: Self.rate, samples: [Int16](repeating: 5000, count: Self.rate)), slot: .speech, atPause: true)
        out += render(&mixer, seconds: 1.2)
        #expect(Array(out[0..<first.count]) == first, "the whole line, then the next")
        #expect(out[first.count + 100] == 5000)
    }

    @Test func aLongWordWithoutPauseIsLeftAtItsQuietestMoment() {
        let rate = Self.rate
        // 3 s of loud sound with one softer 10 ms stretch 0.2 s in (a syllable boundary).
        var long = Self.speech(words: [3.0], gap: 0)
        let soft = Int(0.2 * Double(rate))
        for i in soft..<(soft + rate / 100) { long[i] /= 4 }
        let cut = Mixer.nextPause(in: long, from: 0, rate: rate)
        #expect(abs(cut - soft) <= rate / 200, "cut at \(cut), the soft stretch at \(soft)")
        #expect(Mixer.nextPause(in: long, from: long.count, rate: rate) == long.count)
    }

    @Test func effectsAndPlainPlayStillCutAtOnce() {
        var mixer = Mixer(sampleRate: Self.rate)
        mixer.play(PCMBuffer(sampleRate: Self.rate, samples: Self.speech(words: [1.0], gap: 0)), slot: .effect)
        _ = render(&mixer, seconds: 0.1)
        mixer.play(PCMBuffer(sampleRate: Self.rate, samples: [Int16](repeating: 5000, count: Self.rate)), slot: .effect)
        let out = render(&mixer, seconds: 0.1)
        #expect(out[400...].allSatisfy { $0 == 5000 })
    }
}
