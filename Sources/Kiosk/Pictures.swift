/// The treasure chest, in three sizes. Box-drawing and shade characters are the wood (painted in
/// the accent colour), half/quadrant blocks and the lock are gold, `*` and `.` are sparkles
/// that twinkle with time.
struct Picture {
    let rows: [String]
    let width: Int
    var height: Int { rows.count }

    init(_ rows: [String]) {
        self.rows = rows
        width = rows.map { Text.width(of: $0) }.max() ?? 0
    }

    static let extraLarge = Picture([
        "    *           .             *         .  ",
        "  .   ╭─────────────────────────────╮   *  ",
        "      │ ▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒ │      ",
        "*     │ ▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒ │      ",
        "      │ ▒▒▒▒▒▒▒▒▗▄▟█████▙▄▖▒▒▒▒▒▒▒▒ │      ",
        ".  ▗▄▄┴▟█▙▄▟██▙▄▄▟██▙▄▟██▙▄▄▟██▙▄▟█▙┴▄▄▖  *",
        "  ╔═════════════════════════════════════╗  ",
        "  ║░░░░░░░░░░░░░░╔═══════╗░░░░░░░░░░░░░░║  ",
        "  ║░░░░░░░░░░░░░░║  ▄█▄  ║░░░░░░░░░░░░░░║  ",
        "  ║░░░░░░░░░░░░░░║  ▀█▀  ║░░░░░░░░░░░░░░║  ",
        "  ║░░░░░░░░░░░░░░╚═══╤═══╝░░░░░░░░░░░░░░║  ",
        "  ╠══════════════════╧══════════════════╣  ",
        "  ║░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░║  ",
        "  ║░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░║  ",
        "  ╚═════════════════════════════════════╝  ",
    ])

    static let large = Picture([
        "   *        .         *     .   ",
        "     ╭───────────────────╮      ",
        "  .  │ ▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒ │   *  ",
        "     │ ▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒ │      ",
        "   ▗▄┴▟█▙▄▟██▙▄▄▄▟██▙▄▟█▙┴▄▖    ",
        "  ╔═════════════════════════╗   ",
        "  ║░░░░░░░░░╔═════╗░░░░░░░░░║   ",
        "  ║░░░░░░░░░║  O  ║░░░░░░░░░║   ",
        "  ║░░░░░░░░░╚══╤══╝░░░░░░░░░║   ",
        "  ╠════════════╧════════════╣   ",
        "  ║░░░░░░░░░░░░░░░░░░░░░░░░░║   ",
        "  ╚═════════════════════════╝   ",
    ].map { String($0.prefix(31)) })

    static let small = Picture([
        " *   ╭─────╮  .  ",
        "     │ ▒▒▒ │     ",
        "   ▗▄┴▟███▙┴▄▖   ",
        "  ║░░░░╔═╗░░░░║  ",
        "  ║░░░░╚╤╝░░░░║  ",
        "  ╚═════╧═════╝  ",
    ])

    /// Largest first.
    static let bySize = [extraLarge, large, small]

    /// What a picture character is painted with.
    static func paint(of c: Character) -> Paint {
        switch c {
        case "*", ".": return .sparkle
        case "▗", "▖", "▄", "▀", "▟", "▙", "█", "O": return .gold
        default: return .accent
        }
    }

    /// Draws the picture with its top-left corner at `row`, `column`. Sparkles twinkle:
    /// each one steps through a few shapes, two steps a second, out of step with its neighbours.
    func draw(on canvas: inout Canvas, row: Int, column: Int, now: Double) {
        let twinkle: [Character] = ["*", "+", ".", " "]
        let phase = Self.phase(now)
        var sparkle = 0
        for (dy, line) in rows.enumerated() {
            var x = column
            for c in line {
                var shown = c
                let paint = Self.paint(of: c)
                if paint == .sparkle {
                    shown = twinkle[(phase + sparkle * 3) % twinkle.count]
                    sparkle += 1
                }
                if shown != " " { canvas.put(String(shown), row: row + dy, column: x, paint: paint) }
                x += Text.width(of: c)
            }
        }
    }

    /// Half-second steps, for any `now` (including nonsense ones).
    static func phase(_ now: Double) -> Int {
        guard now.isFinite else { return 0 }
        let steps = (now * 2).rounded(.down).truncatingRemainder(dividingBy: 1024)
        return Int(steps < 0 ? -steps : steps)
    }
}
