import Audio
import Voice
import Foundation
import Testing
@testable import PirateHunter

/// When a line is over, as the loop counts it: a line that interrupts one still playing
/// starts only at that one's next pause (the mixer's `atPause`), so its end is counted from
/// there. Counted from the post, the end came up to a second early and the next line (the
/// reward after the found line) cut its last words.
@Suite struct SpeakerTimingTests {
    /// Two "words" of 0.4 s (a tone) with 0.3 s of silence between them, at 22050 Hz.
    static let twoWords: PCMBuffer = {
        let rate = 22050
        func tone(_ seconds: Double) -> [Int16] {
            (0..<Int(seconds * Double(rate))).map { Int16((sin(Double($0) * 0.2) * 12000).rounded()) }
        }
        return PCMBuffer(sampleRate: rate, channels: 1, samples: tone(0.4) + [Int16](repeating: 0, count: rate * 3 / 10) + tone(0.4))
    }()

    @Test func aLineInterruptingAWordWaitsForItsEndAsTheMixerDoes() {
        let line = Self.twoWords
        // 0.1 s into the first word: the mixer cuts at the pause after it, 0.3 s later.
        let wait = Speaker.waitForPause(after: line, startedAt: 10, now: 10.1)
        let mixerCut = Mixer.nextPause(in: line.samples, from: 2205, rate: 22050)
        #expect(abs(wait - Double(mixerCut - 2205) / 22050) < 1e-9)
        #expect(wait > 0.25 && wait < 0.35, "\(wait) s")
        // In the second word: its end (the line ends within a second).
        let late = Speaker.waitForPause(after: line, startedAt: 10, now: 10.8)
        #expect(late > 0.25 && late < 0.35, "\(late) s")
        // In the silence between the words: at once.
        #expect(Speaker.waitForPause(after: line, startedAt: 10, now: 10.5) < 0.01)
        // Over: at once.
        #expect(Speaker.waitForPause(after: line, startedAt: 10, now: 12) == 0)
        // Not started yet (it waits for a pause itself): the new line takes its place then.
        #expect(abs(Speaker.waitForPause(after: line, startedAt: 10.4, now: 10.1) - 0.3) < 1e-9)
    }
}

/// A line eSpeak cannot render is silence for the child and a line in the journal naming
/// what was not said and why (it used to be silence alone).
@Suite struct SynthesisFailureTests {
    @Test func aFailedSynthesisIsSilentAndSaysWhy() throws {
        let engine = try EspeakSynthesizer.shared()
        let result: Result<PCMBuffer, VoiceError>
        do {
            result = .success(try engine.synthesize("Ahoy", voice: .name("no-such-voice-zz")))
        } catch {
            result = .failure(error)
        }
        let speech = Synthesized(result, sampleRate: engine.sampleRate)
        #expect(speech.audio.samples.isEmpty)
        let line = try #require(speech.failureLine("a line (warmer)"))
        #expect(line.hasPrefix("voice: a line (warmer) is not said: "), "\(line)")
        #expect(line.count > "voice: a line (warmer) is not said: ".count + 3, "\(line)")

        let spoken = Synthesized(.success(try engine.synthesize("Ahoy", voice: .name("en"))), sampleRate: engine.sampleRate)
        #expect(!spoken.audio.samples.isEmpty)
        #expect(spoken.failureLine("a line (warmer)") == nil)
    }
}
