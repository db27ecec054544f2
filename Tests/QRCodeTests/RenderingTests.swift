import QRCode
import Testing

/// Reads half-block lines back into a grid of inked cells, two rows per line.
func inkGrid(fromTerminal lines: [String]) throws -> [[Bool]] {
    var grid: [[Bool]] = []
    for line in lines {
        var upper: [Bool] = []
        var lower: [Bool] = []
        for scalar in line.unicodeScalars {
            switch scalar {
            case "\u{2588}": upper.append(true); lower.append(true)
            case "\u{2580}": upper.append(true); lower.append(false)
            case "\u{2584}": upper.append(false); lower.append(true)
            case " ": upper.append(false); lower.append(false)
            default: Issue.record("unexpected character U+\(String(scalar.value, radix: 16)) in \(line)")
            }
        }
        grid.append(upper)
        grid.append(lower)
    }
    return grid
}

/// What a quiet zone of `zone` around `code` should look like when inked with `inverted`.
func expectedInk(_ code: QRCode, zone: Int, inverted: Bool) -> [[Bool]] {
    let side = code.size + 2 * zone
    return (0..<side).map { y in (0..<side).map { x in code[x - zone, y - zone] != inverted } }
}

@Suite struct TerminalRenderingTests {
    @Test(arguments: [0, 1, 2, 3, 4], [false, true])
    func halfBlocksReadBackToTheModules(quietZone: Int, inverted: Bool) throws {
        for text in ["ARRR-2026-GOLD", "Ye found it! \u{2620} 10% off"] {
            let code = try QRCode(encoding: text)
            let lines = code.terminalLines(quietZone: quietZone, inverted: inverted)
            let side = code.size + 2 * quietZone
            #expect(lines.count == (side + 1) / 2)
            #expect(lines.allSatisfy { $0.unicodeScalars.count == side })
            var grid = try inkGrid(fromTerminal: lines)
            // An odd height leaves one extra half row at the bottom: it must be light too.
            if side % 2 == 1, let extra = grid.popLast() {
                #expect(extra == Array(repeating: inverted, count: side))
            }
            #expect(grid == expectedInk(code, zone: quietZone, inverted: inverted))
            // The quiet zone itself: every cell outside the symbol shows as light.
            for y in 0..<side {
                for x in 0..<side where !(quietZone..<(quietZone + code.size)).contains(x)
                    || !(quietZone..<(quietZone + code.size)).contains(y)
                {
                    #expect(grid[y][x] == inverted, "quiet zone cell (\(x), \(y)) is not light")
                }
            }
            // The two polarities are exact negatives of each other.
            let other = try inkGrid(fromTerminal: code.terminalLines(quietZone: quietZone, inverted: !inverted))
            #expect(zip(grid.joined(), other.joined()).allSatisfy { $0 != $1 })
        }
    }

    @Test func aNegativeQuietZoneIsNone() throws {
        let code = try QRCode(encoding: "A")
        #expect(code.terminalLines(quietZone: -3) == code.terminalLines(quietZone: 0))
        #expect(code.asciiLines(quietZone: -1, inverted: true) == code.asciiLines(quietZone: 0, inverted: true))
        #expect(code.svg(moduleSize: 0, quietZone: -2) == code.svg(moduleSize: 1, quietZone: 0))
    }

    @Test(arguments: [false, true])
    func asciiReadsBackToTheModules(inverted: Bool) throws {
        let code = try QRCode(encoding: "https://pirate-hunter.example/reward?code=ARRR-2026-GOLD&box=3")
        let lines = code.asciiLines(quietZone: 3, inverted: inverted)
        let grid = try lines.map { line in
            let chars = Array(line)
            return try stride(from: 0, to: chars.count, by: 2).map { i -> Bool in
                let cell = String(chars[i...i + 1])
                try #require(cell == "##" || cell == "  ", "bad ASCII cell \(cell.debugDescription)")
                return cell == "##"
            }
        }
        #expect(grid == expectedInk(code, zone: 3, inverted: inverted))
    }
}

@Suite struct ModelTests {
    @Test func subscriptIsLightOutsideTheSymbol() throws {
        let code = try QRCode(encoding: "ARRR-2026-GOLD")
        #expect(code.size == 21 && code.version == 1)
        // The top-left finder pattern's corner is dark; anything off the symbol is light.
        #expect(code[0, 0] && code[code.size - 1, 0] && code[0, code.size - 1])
        #expect(!code[-1, 0] && !code[0, -1] && !code[code.size, 0] && !code[0, code.size] && !code[Int.max, Int.min])
        #expect(code.modules.count == code.size * code.size)
        for y in 0..<code.size {
            for x in 0..<code.size { #expect(code[x, y] == code.modules[y * code.size + x]) }
        }
    }

    @Test func sameTextSameCodeAndCaseMatters() throws {
        #expect(try QRCode(encoding: "ARRR-2026-GOLD") == QRCode(encoding: "ARRR-2026-GOLD"))
        #expect(try QRCode(encoding: "ARRR-2026-GOLD") != QRCode(encoding: "arrr-2026-gold"))
        #expect(try QRCode(encoding: "ARRR-2026-GOLD", correction: .low) != QRCode(encoding: "ARRR-2026-GOLD", correction: .high))
    }
}
