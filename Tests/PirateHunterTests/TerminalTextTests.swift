import Game
import Bluetooth
import Testing

@testable import PirateHunter

/// Text from the air or from a user never reaches a terminal as a control: C0, C1 and bidi
/// overrides are escaped in JSON and in messages, dropped from names on the scan table.
@Suite struct TerminalTextTests {
    static let hostile = "ok\u{1B}[2J\u{9B}31m\u{202E}evil\u{2066}"

    @Test func jsonEscapesEveryControl() {
        let line = OutputEvent.say(time: 1, event: .warmer, text: Self.hostile).jsonLine
        #expect(line == #"{"t": 1.0, "event": "say", "event_name": "warmer", "text": "ok\u001b[2J\u009b31m\u202eevil\u2066"}"#)
    }

    @Test func messagesEscapeAndCut() {
        let shown = CLIError.printable(Self.hostile + String(repeating: "x", count: 500), limit: 80)
        #expect(!shown.unicodeScalars.contains { $0.value < 0x20 || (0x80...0x9F).contains($0.value) || $0.value == 0x202E })
        #expect(shown.hasPrefix(#"ok\u{001B}[2J\u{009B}31m\u{202E}evil\u{2066}"#))
        #expect(shown.hasSuffix("..."))
        #expect(shown.count < 120)
    }

    @Test func namesOnTheScanTableAreOnlyPrintableText() {
        #expect(TreasureSignals.printable(Array(Self.hostile.utf8)[...]) == "ok [2J 31mevil", "controls dropped (a control separates words)")
    }
}
