public import Ranging

/// What a cell is painted with; the colour codes are chosen when the frame is written.
enum Paint: Equatable {
    case plain, accent, gold, sparkle, title, label, good, warn, greet
    case hunter(Proximity)

    /// The SGR parameters (always starting from a reset, so no attribute leaks).
    func sgr(accent: Proximity?) -> String {
        switch self {
        case .plain: return "0"
        case .accent: return "0;38;5;\(Palette.colour(for: accent))"
        case .gold, .title: return "0;1;38;5;220"
        case .sparkle: return "0;1;38;5;230"
        case .label: return "0;38;5;245"
        case .good: return "0;38;5;114"
        case .warn: return "0;1;38;5;203"
        case .greet: return "0;1;38;5;226"
        case .hunter(let p): return "0;1;38;5;\(Palette.colour(for: p))"
        }
    }
}

/// The proximity colours (xterm 256-colour palette).
public enum Palette {
    /// 33 blue (no hunter, or unknown), 51 cyan (far), 208 orange (near), 196 red (immediate).
    public static func colour(for proximity: Proximity?) -> Int {
        switch proximity {
        case .immediate: return 196
        case .near: return 208
        case .far: return 51
        case .unknown, .none: return 33
        }
    }
}

/// A fixed grid of terminal cells: whatever is drawn is clipped to it, so a frame can never
/// be taller or wider than the terminal.
struct Canvas {
    struct Cell {
        /// nil: the right half of a wide character drawn in the cell before.
        var character: Character?
        var paint: Paint
        /// `character` takes this cell and the next.
        var wide = false
    }

    let width: Int
    let height: Int
    private var cells: [[Cell]]

    init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        cells = Array(repeating: Array(repeating: Cell(character: " ", paint: .plain), count: self.width), count: self.height)
    }

    /// Draws `text` (already cleaned) at `row`, `column`, stopping before column `limit`
    /// (default: the right edge). Returns the column after the last character drawn.
    @discardableResult
    mutating func put(_ text: String, row: Int, column: Int, paint: Paint, limit: Int? = nil) -> Int {
        let end = min(limit ?? width, width)
        guard row >= 0, row < height else { return column }
        var x = column
        for c in text {
            let w = Text.width(of: c)
            if w == 0 { continue }
            if x + w > end { break }
            if x >= 0 {
                for cx in x..<(x + w) { vacate(row: row, column: cx) }
                cells[row][x] = Cell(character: c, paint: paint, wide: w == 2)
                if w == 2 { cells[row][x + 1] = Cell(character: nil, paint: paint) }
            }
            x += w
        }
        return x
    }

    /// Makes a cell free to draw on without leaving half of a wide character behind (which
    /// would make the row one column short or long).
    private mutating func vacate(row: Int, column: Int) {
        let blank = Cell(character: " ", paint: .plain)
        if cells[row][column].character == nil, column > 0 {
            cells[row][column - 1] = blank
        } else if cells[row][column].wide, column + 1 < width {
            cells[row][column + 1] = blank
        }
        cells[row][column] = blank
    }

    /// Draws spans one after the other, the last one cut with "..." when they do not fit before `limit`.
    @discardableResult
    mutating func put(_ spans: [Span], row: Int, column: Int, limit: Int? = nil) -> Int {
        let end = min(limit ?? width, width)
        var x = column
        for span in spans {
            let room = end - x
            if room <= 0 { break }
            let cut = Text.width(of: span.text) > room
            x = put(Text.fit(span.text, room), row: row, column: x, paint: span.paint, limit: end)
            if cut { break }
        }
        return x
    }

    /// The frame: cursor home, then every row (exactly `height`, each exactly `width` columns,
    /// separated by CR LF and with none after the last, so the terminal never scrolls).
    /// SGR colour sequences only when `color`.
    func frame(color: Bool, accent: Proximity?) -> String {
        var out = KioskScreen.home
        for (y, row) in cells.enumerated() {
            if y > 0 { out += "\r\n" }
            var current = Paint.plain
            for cell in row {
                guard let c = cell.character else { continue }
                if color, cell.paint != current {
                    out += "\u{1B}[" + cell.paint.sgr(accent: accent) + "m"
                    current = cell.paint
                }
                out.append(c)
            }
            if color, current != .plain { out += "\u{1B}[0m" }
        }
        return out
    }
}

/// A run of text with one paint.
struct Span {
    var text: String
    var paint: Paint
    init(_ text: String, _ paint: Paint = .plain) {
        self.text = text
        self.paint = paint
    }
}

extension Array where Element == Span {
    var columns: Int { reduce(0) { $0 + Text.width(of: $1.text) } }
}
