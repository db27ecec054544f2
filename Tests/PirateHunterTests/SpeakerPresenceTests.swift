import Testing
@testable import PirateHunter

/// When the speaker counts as found late (the missed notice and clue said again there).
@Suite struct SpeakerPresenceTests {
    @Test func aSpeakerThereFromTheStartIsNeverFoundLate() {
        var presence = SpeakerPresence()
        #expect(presence.heard(.opened) == nil)
        #expect(presence.heard(.unavailable) == nil, "one lost later is the playback's business")
        #expect(presence.heard(.opened) == nil)
    }

    @Test func aSpeakerMissingAtTheStartIsFoundOnce() {
        var presence = SpeakerPresence()
        #expect(presence.heard(.unavailable) == .missing)
        #expect(presence.heard(.opened) == .found)
        #expect(presence.heard(.unavailable) == nil)
        #expect(presence.heard(.opened) == nil)
    }

    /// A Pi 4 booted before its USB speaker: `auto` plays on the jack (often with nothing in
    /// it) meanwhile, and the USB speaker is found when it comes. The jack's open counted as
    /// the speaker, and the clue said into the empty jack was never said again.
    @Test func aUSBSpeakerAfterALSAsDefaultIsFound() {
        var presence = SpeakerPresence()
        #expect(presence.heard(.fallback) == .onFallback)
        #expect(presence.heard(.opened) == .found)
        #expect(presence.heard(.fallback) == nil, "back on the default after an unplug: the playback's business")
    }
}
