import Hunt
import Testing

@Suite struct LineCompositionTests {
    @Test func aClueIsTheLeadInThenTheParentsWords() {
        let detail = LineDetail(step: 0, treasure: 2, text: "Look under the bed.")
        let line = detail.parts(of: .clue, template: "On to treasure number {treasure}!")
        #expect(line == ComposedLine(pack: "On to treasure number 2!", parent: "Look under the bed."))
        #expect(line?.text == "On to treasure number 2! Look under the bed.")
        #expect(detail.text(of: .clue, template: "On to treasure number {treasure}!") == line?.text)
        // A recorded clue: the lead-in alone (the recording follows it).
        #expect(LineDetail(treasure: 2, recording: "/c.wav").parts(of: .clue, template: "Treasure {treasure}!")
            == ComposedLine(pack: "Treasure 2!"))
    }

    @Test func aParentsHintOrFoundLineStandsAlone() {
        let detail = LineDetail(step: 1, treasure: 2, text: "Near something green.")
        var asked = false
        let hint = detail.parts(of: .hint, template: { asked = true; return "pack hint" }())
        #expect(hint == ComposedLine(parent: "Near something green."))
        #expect(!asked, "the pack's line is not picked when unused")
        #expect(detail.parts(of: .treasureFound, template: "x") == ComposedLine(parent: "Near something green."))
    }

    @Test func thePacksComposedLinesAndThePreRenderedOnes() {
        let detail = LineDetail(treasure: 3, next: 1)
        #expect(detail.parts(of: .outOfOrder, template: "That is {treasure}, find {next}!") == ComposedLine(pack: "That is 3, find 1!"))
        #expect(detail.parts(of: .hint, template: "Look up high!") == ComposedLine(pack: "Look up high!"))
        #expect(detail.parts(of: .treasureFound, template: "x") == nil)
        #expect(detail.parts(of: .warmer, template: "x") == nil)
        #expect(ComposedLine().text == "")
    }
}
