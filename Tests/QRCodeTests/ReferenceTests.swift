import Foundation
import QRCode
import Testing

/// Texts a reward may carry: a coupon code, UTF-8 beyond ASCII, a URL, one character, and a
/// long text that needs a large version (with its version information blocks).
let rewardTexts: [String] = [
    "ARRR-2026-GOLD",
    "Ye found it! \u{2620} 10% off",
    "https://pirate-hunter.example/reward?code=ARRR-2026-GOLD&box=3",
    "A",
    String(repeating: "Fifteen men on the dead man's chest, yo-ho-ho! ", count: 20),
]

func rows(of code: QRCode) -> [[Bool]] {
    (0..<code.size).map { y in (0..<code.size).map { x in code[x, y] } }
}

@Suite struct ReferenceTests {
    @Test func theNonASCIITextIsEncodedAsItsUTF8Bytes() throws {
        let text = rewardTexts[1]
        #expect(text.utf8.count == text.unicodeScalars.count + 2)  // ☠ is three bytes
    }

    @Test(arguments: rewardTexts, ErrorCorrection.allCases)
    func matrixMatchesQrencodeModuleForModule(text: String, correction: ErrorCorrection) throws {
        let ours = try QRCode(encoding: text, correction: correction)
        let reference = try ReferenceCLI.matrix(text, level: correction.rawValue)
        #expect(ours.size == reference.count)
        #expect(ours.size == 17 + 4 * ours.version)
        #expect(ours.modules.count == ours.size * ours.size)
        let mismatches = zip(rows(of: ours).joined(), reference.joined()).filter { $0 != $1 }.count
        #expect(mismatches == 0, "\(mismatches) modules differ from qrencode for \(text.debugDescription)")
    }

    @Test func aNulInsideTheTextIsEncodedToo() throws {
        let text = "ARRR\u{0}GOLD"
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("qrcode-nul-\(getpid()).txt")
        try Data(text.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let ours = try QRCode(encoding: text)
        // The throwing calls outside #expect: Swift 6.0's macro does not take a `try` inside.
        let reference = try ReferenceCLI.matrix(file: file, level: "M")
        let withoutNul = try QRCode(encoding: "ARRRGOLD")
        #expect(rows(of: ours) == reference)
        #expect(ours != withoutNul)
    }

    // Even margins only: with an odd margin qrencode 4.1.1's UTF8 output drops the bottom
    // margin row (11 lines for 21 + 2 * 1 rows), where terminalLines keeps the whole quiet zone.
    @Test(arguments: [0, 2, 4], [false, true])
    func terminalLinesAreWhatQrencodeDrawsInUTF8(quietZone: Int, inverted: Bool) throws {
        // qrencode's UTF8 inks light modules (for dark terminals), UTF8i inks dark ones.
        let text = rewardTexts[0]
        let type = inverted ? "UTF8" : "UTF8i"
        let reference = try ReferenceCLI.run(["-t", type, "-m", "\(quietZone)", "-l", "M", "-8", text])
        let ours = try QRCode(encoding: text).terminalLines(quietZone: quietZone, inverted: inverted)
        #expect(ours == reference)
    }

    @Test(arguments: [0, 2, 4], [false, true])
    func asciiLinesAreWhatQrencodeDrawsInASCII(quietZone: Int, inverted: Bool) throws {
        let text = rewardTexts[2]
        let type = inverted ? "ASCIIi" : "ASCII"
        let reference = try ReferenceCLI.run(["-t", type, "-m", "\(quietZone)", "-l", "Q", "-8", text])
        let ours = try QRCode(encoding: text, correction: .quartile).asciiLines(quietZone: quietZone, inverted: inverted)
        #expect(ours == reference)
    }
}
