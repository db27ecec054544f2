import Foundation
import QRCode
import Testing
import TestSupport

/// A real decoder reads the codes back: zbarimg (Debian package zbar-tools, installed by
/// scripts/deps.sh) scans a grey image drawn from each rendering. Missing is a failure.
enum Decoder {
    /// `dark[y][x]` true = a black pixel block; drawn `scale` pixels per module as binary PGM.
    static func pgm(_ dark: [[Bool]], scale: Int = 4) -> Data {
        let height = dark.count * scale
        let width = (dark.first?.count ?? 0) * scale
        var data = Data("P5\n\(width) \(height)\n255\n".utf8)
        for row in dark {
            let line = row.flatMap { Array(repeating: $0 ? UInt8(0) : UInt8(255), count: scale) }
            for _ in 0..<scale { data.append(contentsOf: line) }
        }
        return data
    }

    /// The bytes zbarimg finds in the image, as text (its `--raw` mode converts no charset).
    static func decode(_ dark: [[Bool]]) throws -> String {
        let zbarimg = "/usr/bin/zbarimg"
        try #require(
            FileManager.default.isExecutableFile(atPath: zbarimg),
            "zbarimg is not installed (Debian package zbar-tools; run scripts/deps.sh)")
        let file = FileManager.default.temporaryDirectory
            .appendingPathComponent("qrcode-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).pgm")
        try pgm(dark).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try Program.run(zbarimg, ["--raw", "-q", "--nodbus", "-1", file.path])
        try #require(result.status == 0, "zbarimg found no QR code (exit \(result.status))")
        var text = result.stdout
        if text.hasSuffix("\n") { text.removeLast() }
        return text
    }
}

@Suite struct DecodeTests {
    @Test(arguments: rewardTexts)
    func theMatrixDecodesToTheText(text: String) throws {
        let code = try QRCode(encoding: text)
        #expect(try Decoder.decode(expectedInk(code, zone: 4, inverted: false)) == text)
    }

    @Test func theSVGDecodesToTheText() throws {
        let text = "Ye found it! \u{2620} 10% off"
        let svg = try QRCode(encoding: text, correction: .high).svg(quietZone: 4)
        let side = try #require(ParsedSVG(svg).viewBox.last)
        #expect(try Decoder.decode(ParsedSVG(svg).grid(side: side)) == text)
    }

    /// What a camera sees: on a dark terminal the ink is light, on a light terminal dark.
    @Test(arguments: [true, false])
    func theTerminalPolarityMeantForItsBackgroundDecodes(darkTerminal: Bool) throws {
        let text = "ARRR-2026-GOLD"
        let lines = try QRCode(encoding: text).terminalLines(quietZone: 2, inverted: darkTerminal)
        let ink = try inkGrid(fromTerminal: lines)
        let darkPixels = ink.map { row in row.map { darkTerminal ? !$0 : $0 } }
        #expect(try Decoder.decode(darkPixels) == text)
    }
}
