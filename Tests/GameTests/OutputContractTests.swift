import Foundation
import Game
import Testing

/// The README's JSON lines are `OutputEvent`'s: made from its examples, and every event
/// name the encoder writes has one.
@Suite struct OutputContractTests {
    static let begin = "<!-- generated from OutputEvent.contractExamples (Sources/Game/OutputContract.swift); a test keeps the two the same -->\n"
    static let end = "<!-- end of the generated JSON lines -->"

    @Test func theReadmesJSONLinesAreTheEncodersOwn() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let start = try #require(text.range(of: Self.begin), "README.md has no generated JSON lines")
        let stop = try #require(text.range(of: Self.end, range: start.upperBound..<text.endIndex))
        let block = String(text[start.upperBound..<stop.lowerBound])
        #expect(block == OutputEvent.contractMarkdown, "README.md's JSON lines are not OutputEvent's (scripts/readme-commands.sh rewrites them); they should read:\n\(Self.begin)\(OutputEvent.contractMarkdown)\(Self.end)")
    }

    @Test func everyEventNameHasAnExample() {
        let names = OutputEvent.contractExamples.compactMap { $0.event.jsonLine }.compactMap { line -> String? in
            guard let r = line.range(of: #""event": ""#) else { return nil }
            return String(line[r.upperBound...].prefix { $0 != "\"" })
        }
        #expect(names == OutputEvent.eventNames)
    }
}
