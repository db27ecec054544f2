import Audio
import FoundationEssentials
import Synchronization
import Testing
import Voice

#if canImport(Glibc)
import Glibc
#endif

/// A flood of lines (a radio making the hunt talk) is refused at the engine's door, and a
/// line superseded before its turn is never rendered.
@Suite struct SynthesisQueueTests {
    final class Results: Sendable {
        let rendered = Mutex(0)
        let empty = Mutex(0)
        let refused = Mutex(0)
        let done = Mutex(0)
    }

    @Test func theQueueIsBoundedAndStaleLinesAreNotRendered() throws {
        let engine = try EspeakSynthesizer.shared()
        let results = Results()
        let total = 60
        let text = "Blast! Hunter one hundred and seven got to treasure two first! Keep going, matey."
        // The engine busy with a long line first (taken off the queue, being rendered), so
        // that the flood finds it busy, as a radio flood does, whatever else runs.
        let busy = Results()
        let long = String(repeating: "The treasure is under the old oak tree by the garden gate, matey. ", count: 12)
        engine.synthesize(long, voice: .name("en")) { _ in busy.done.withLock { $0 += 1 } }
        let taken = ContinuousClock.now + .seconds(10)
        while engine.queuedJobs > 0, ContinuousClock.now < taken { usleep(1000) }
        for k in 0..<total {
            // Every line but the last is superseded at once (as a newer line would).
            let isLast = k == total - 1
            engine.synthesize(text, voice: .name("en"), stale: { !isLast }) { result in
                switch result {
                case .success(let audio) where audio.samples.isEmpty: results.empty.withLock { $0 += 1 }
                case .success: results.rendered.withLock { $0 += 1 }
                case .failure: results.refused.withLock { $0 += 1 }
                }
                results.done.withLock { $0 += 1 }
            }
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while results.done.withLock({ $0 }) < total, ContinuousClock.now < deadline { usleep(10_000) }
        let refused = results.refused.withLock { $0 }, rendered = results.rendered.withLock { $0 }, empty = results.empty.withLock { $0 }
        #expect(refused >= total - EspeakSynthesizer.maximumQueuedJobs - 1, "refused \(refused)")
        #expect(refused + rendered + empty == total)
        #expect(rendered <= 1, "stale lines were rendered: \(rendered)")
        // The engine is shared with the tests running beside this one: the queue drains, but
        // one of theirs may be waiting at the moment the flood is over.
        let drained = ContinuousClock.now + .seconds(30)
        while engine.queuedJobs > 0, ContinuousClock.now < drained { usleep(1000) }
        #expect(engine.queuedJobs == 0)
        #expect(busy.done.withLock { $0 } == 1)
    }
}
