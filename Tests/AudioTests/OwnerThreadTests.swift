import Audio
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct OwnerThreadTests {
    /// Which of the loop's signals the calling thread blocks.
    static func blockedLoopSignals() -> [Int32] {
        var current = sigset_t()
        sigemptyset(&current)
        pthread_sigmask(SIG_BLOCK, nil, &current)
        return OwnerThread.loopSignals.filter { sigismember(&current, $0) == 1 }
    }

    /// An owner thread started before the event loop's signalfd (the settings notice's voice)
    /// lives for the whole process: if it took SIGTERM or SIGHUP, their default action would
    /// end the appliance instead of the loop hearing them.
    @Test func anOwnerThreadNeverTakesTheLoopsSignalsAndItsCreatorKeepsItsMask() {
        // The creator blocks none of them, as the main thread before the loop's signalfd
        // (the test's own threads may block every signal).
        let seen = Mutex<(creator: [Int32], owner: [Int32], after: [Int32])?>(nil)
        let creator = OwnerThread(name: "ph-test-creator") {
            var mask = sigset_t()
            sigemptyset(&mask)
            for signal in OwnerThread.loopSignals { sigaddset(&mask, signal) }
            pthread_sigmask(SIG_UNBLOCK, &mask, nil)
            let creatorMask = Self.blockedLoopSignals()
            let owner = Mutex<[Int32]>([])
            let thread = OwnerThread(name: "ph-test") { owner.withLock { $0 = Self.blockedLoopSignals() } }
            thread.join()
            let after = Self.blockedLoopSignals()
            pthread_sigmask(SIG_BLOCK, &mask, nil)
            seen.withLock { $0 = (creatorMask, owner.withLock { $0 }, after) }
        }
        creator.join()
        let result = seen.withLock { $0 }
        #expect(result?.creator == [])
        #expect(result?.owner == OwnerThread.loopSignals)
        #expect(result?.after == [])
    }
}
