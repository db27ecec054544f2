import ParentPage
import Testing

struct JSONDocumentTests {
    @Test func aFileComesBackInItsOrderWithOnlyTheEditedKeysChanged() throws {
        let text = #"{"transport": "auto", "voice": {"language": "en", "rate": 175}, "hunt": {"hint_after": 60, "trail": [{"region": "A"}]}, "game": {"key": "K"}}"#
        var doc = try JSONDocument(parsing: Array(text.utf8))
        var draft = TrailDraft(configuration: doc)
        #expect(draft.steps.map(\.region) == ["A"])
        draft.steps.append(TrailDraft.Step(region: "B", clue: "Look under the <bed> \"now\""))
        draft.hunters = "2, 3"
        doc = draft.applied(to: doc)
        let again = try JSONDocument(parsing: Array(doc.text.utf8))
        #expect(again == doc)
        guard case let .object(members) = again else { Issue.record("not an object"); return }
        #expect(members.map(\.0) == ["transport", "voice", "hunt", "game"])
        #expect(again["hunt"]?["hint_after"]?.numberValue == 60)
        #expect(again["hunt"]?["trail"]?.arrayValue?.count == 2)
        #expect(again["hunt"]?["trail"]?.arrayValue?[1]["clue"]?.stringValue == "Look under the <bed> \"now\"")
        #expect(again["game"]?["key"]?.stringValue == "K")
        #expect(again["game"]?["hunters"] == .array([.number(2), .number(3)]))
        #expect(doc.text.contains("<bed>"), "a file keeps < as typed")
    }

    @Test func badTextIsAnErrorNeverATrap() {
        for text in ["", "{", "{\"a\" 1}", "[1,]", "\"\\u12\"", "tru", String(repeating: "[", count: 100) + String(repeating: "]", count: 100), "{\"a\":1} x", "\"a\u{01}\""] {
            #expect(throws: JSONDocument.SyntaxError.self, "\(text)") { try JSONDocument(parsing: Array(text.utf8)) }
        }
    }

    @Test func escapesAndSurrogatesRoundTrip() throws {
        let doc = try JSONDocument(parsing: Array(#"{"a": "\u00e9\ud83c\udff4\n\t\"\\", "b": [true, false, null, -1.5e2]}"#.utf8))
        #expect(doc["a"]?.stringValue == "é🏴\n\t\"\\")
        #expect(try JSONDocument(parsing: Array(doc.text.utf8)) == doc)
        #expect(doc["b"]?.arrayValue == [.bool(true), .bool(false), .null, .number(-150)])
    }

    @Test func numbersFromAFormOrTheAirNeverTrap() {
        var draft = TrailDraft()
        for text in ["1e400", "nan", "-inf", "99999999999999999999", "2, x"] {
            draft.hunters = text
            #expect(draft.huntersValue == .string(text), "\(text)")
        }
        draft.hunters = "2 3"
        #expect(draft.huntersValue == .array([.number(2), .number(3)]))
        #expect(HTML.number(6e15) == "1e12" && HTML.number(-Double.greatestFiniteMagnitude) == "-1e12" && HTML.number(.nan) == "null")
        #expect(HTML.number(-0.04) == "0.0" && HTML.number(12.345, decimals: 2) == "12.35" && HTML.number(-3.25, decimals: 1) == "-3.3")
    }

    @Test func aPostedFormIsBoundedAndKeepsWhatThePageDoesNotEdit() {
        var previous = TrailDraft()
        var step = TrailDraft.Step(region: "R1")
        step.clueWAV = "one.wav"
        step.box = true
        previous.steps = [step]
        var form: [String: String] = ["order": "any_order", "mode": "bogus", "hunters": " 2 "]
        for n in 0..<30 { form["step-\(n)-region"] = "R\(n + 1)" }
        form["step-0-clue"] = ""
        form["step-1-clue"] = "  line one\r\nline two  "
        let draft = TrailDraft(form: form, keepingFrom: previous)
        #expect(draft.steps.count == TrailDraft.maximumSteps)
        #expect(draft.steps[0].clueWAV == "one.wav" && draft.steps[0].box)
        #expect(draft.steps[1].clue == "line one\nline two")
        #expect(draft.order == "any_order" && draft.mode == "solo" && draft.hunters == "2")
    }

    /// A box step whose tag the parent changed and then chose again (or that moved up when a
    /// step before it was removed) is still a box step: `box` and the recorded clue go with
    /// the tag, not with the step's number.
    @Test func aBoxStepKeepsItsFlagWhenItsTagComesBackOrMoves() throws {
        let file = try JSONDocument(parsing: Array(#"{"hunt": {"trail": [{"region": "A"}, {"region": "BOX", "box": true, "clue_wav": "box.wav"}]}}"#.utf8))
        let previous = TrailDraft(configuration: file)
        #expect(previous.steps[1].box)
        // Step 2 changed to another tag (a draft kept), then back to the box's.
        let changed = TrailDraft(form: ["step-0-region": "A", "step-1-region": "D"], keepingFrom: previous)
        #expect(!changed.steps[1].box && changed.steps[1].clueWAV == nil)
        let back = TrailDraft(form: ["step-0-region": "A", "step-1-region": "BOX"], keepingFrom: changed)
        #expect(back.steps[1].box && back.steps[1].clueWAV == "box.wav")
        #expect(back.applied(to: file)["hunt"]?["trail"]?.arrayValue?[1]["box"]?.boolValue == true)
        // Step 1 removed: the box's step is step 1 now.
        let moved = TrailDraft(form: ["step-0-region": "BOX"], keepingFrom: previous)
        #expect(moved.steps[0].box && moved.steps[0].clueWAV == "box.wav")
        // A step of another tag takes nothing.
        let other = TrailDraft(form: ["step-0-region": "A", "step-1-region": "BOX", "step-2-region": "E"], keepingFrom: previous)
        #expect(!other.steps[0].box && !other.steps[2].box && other.steps[2].clueWAV == nil)
    }

    /// Hunter numbers the file holds that are no whole ids (1e19, 2.5, a huge negative) are
    /// shown as written, for the validator to name when saved: `Int(_:)` of 1e19 trapped,
    /// and the page that `--wait-for-fix` opens to mend a bad file crashed on that file.
    @Test func hunterNumbersThatAreNoIdsDoNotTrap() throws {
        let doc = try JSONDocument(parsing: Array(#"{"game": {"hunters": [2, 1e19, 2.5, -1e300]}}"#.utf8))
        let draft = TrailDraft(configuration: doc)
        #expect(draft.hunters.hasPrefix("2, "))
        #expect(draft.hunters.split(separator: ",").count == 4)
        guard case .string = draft.huntersValue else {
            Issue.record("taken as ids: \(String(describing: draft.huntersValue))")
            return
        }
    }

    /// Random and mutated texts: an error or a document that writes back to itself, never a
    /// trap (a file the page reads may be anything a parent's editor left).
    @Test func randomTextNeverTraps() {
        var state: UInt64 = 0x1234_5678_9ABC_DEF1
        func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        let seed = Array(#"{"a": [1, -2.5e3, "x\u00e9\n", {"b": null, "c": true}], "d": {}}"#.utf8)
        let alphabet = Array(#"{}[]:,"\ -+.eE0123456789tfnulrsaxu"#.utf8) + [0, 0x0A, 0xC3, 0xA9, 0xFF]
        for round in 0..<5_000 {
            var bytes = seed
            for _ in 0..<(1 + Int(next() % 6)) {
                let i = Int(next() % UInt64(bytes.count + 1))
                let b = alphabet[Int(next() % UInt64(alphabet.count))]
                switch next() % 3 {
                case 0 where i < bytes.count: bytes[i] = b
                case 1 where i < bytes.count: bytes.remove(at: i)
                default: bytes.insert(b, at: min(i, bytes.count))
                }
            }
            if round % 5 == 0 { bytes = (0..<Int(next() % 64)).map { _ in alphabet[Int(next() % UInt64(alphabet.count))] } }
            if let doc = try? JSONDocument(parsing: bytes) {
                #expect((try? JSONDocument(parsing: Array(doc.text.utf8))) == doc, "\(String(decoding: bytes, as: UTF8.self))")
            }
        }
    }
}
