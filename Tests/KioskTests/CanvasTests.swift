import Testing

@testable import Kiosk

@Suite struct CanvasTests {
    func rowWidths(_ canvas: Canvas) -> [Int] {
        rows(canvas.frame(color: false, accent: nil), color: false).map(columns)
    }

    @Test func overwritingHalfAWideCharacterKeepsRowsTheirWidth() {
        var canvas = Canvas(width: 10, height: 3)
        canvas.put("宝物宝物宝", row: 0, column: 0, paint: .gold)
        canvas.put("x", row: 0, column: 1, paint: .plain)  // the right half of 宝
        canvas.put("宝物宝物宝", row: 1, column: 0, paint: .gold)
        canvas.put("物", row: 1, column: 3, paint: .plain)  // straddles two wide characters
        canvas.put("宝物", row: 2, column: 9, paint: .gold)  // does not fit: nothing drawn
        #expect(rowWidths(canvas) == [10, 10, 10])
        let lines = rows(canvas.frame(color: false, accent: nil), color: false)
        #expect(lines[0] == " x物宝物宝")
        #expect(lines[1] == "宝 物 物宝")
        #expect(lines[2] == String(repeating: " ", count: 10))
    }

    @Test func controlAndZeroWidthCharactersAreNeverDrawn() {
        var canvas = Canvas(width: 6, height: 1)
        canvas.put("a\u{1B}b\u{9B}c\u{200B}d", row: 0, column: 0, paint: .plain)
        #expect(rows(canvas.frame(color: false, accent: nil), color: false) == ["abcd  "])
    }

    @Test func spansThatDoNotFitEndWithAnEllipsis() {
        var canvas = Canvas(width: 12, height: 1)
        canvas.put([Span("reward ", .label), Span("a long, long map", .gold), Span("never", .plain)], row: 0, column: 0)
        #expect(rows(canvas.frame(color: false, accent: nil), color: false) == ["reward a ..."])
    }
}
