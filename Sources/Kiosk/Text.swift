/// Text helpers for the screen and the log: cleaning, display width, number formatting.
enum Text {
    /// `text` with every control character removed (C0, DEL, C1: so no ESC or CSI ever reaches
    /// the terminal) and the invisible direction overrides that could reorder what follows.
    /// Tabs and line breaks become a space: everything is shown on one line.
    static func clean(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for s in text.unicodeScalars {
            switch s.value {
            case 0x09, 0x0A, 0x0D: out.append(" ")
            case 0x00...0x1F, 0x7F...0x9F: continue
            case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: continue
            default: out.append(s)
            }
        }
        return String(out)
    }

    /// Columns a character takes in a terminal: 0, 1 or 2. Box-drawing and block characters
    /// count as 1; East Asian wide characters and emoji as 2.
    static func width(of c: Character) -> Int {
        guard let first = c.unicodeScalars.first else { return 0 }
        switch first.properties.generalCategory {
        case .control, .format, .nonspacingMark, .enclosingMark, .lineSeparator, .paragraphSeparator:
            return 0
        default: break
        }
        if isWide(first) || first.properties.isEmojiPresentation { return 2 }
        if c.unicodeScalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        return 1
    }

    static func width(of s: String) -> Int { s.reduce(0) { $0 + width(of: $1) } }

    /// East Asian Wide and Fullwidth blocks (an approximation of UAX #11 good enough here).
    private static func isWide(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return true
        default:
            return false
        }
    }

    /// `s` cut to at most `columns` columns; when cut, it ends with "..." (if there is room).
    static func fit(_ s: String, _ columns: Int) -> String {
        guard columns > 0 else { return "" }
        if width(of: s) <= columns { return s }
        let keep = columns >= 4 ? columns - 3 : columns
        var out = ""
        var used = 0
        for c in s {
            let w = width(of: c)
            if used + w > keep { break }
            out.append(c)
            used += w
        }
        return columns >= 4 ? out + "..." : out
    }

    /// "~1.2 m" (tenths below 10 m, whole metres above); nil for a missing or meaningless distance.
    static func distance(_ metres: Double?) -> String? {
        guard let m = metres, m.isFinite, m >= 0, m < 100_000 else { return nil }
        if m < 9.95 {
            let tenths = Int((m * 10).rounded())
            return "~\(tenths / 10).\(tenths % 10) m"
        }
        return "~\(Int(m.rounded())) m"
    }

    /// `s` broken at spaces into lines of at most `columns` columns (a word longer than that
    /// gets a line of its own, cut when drawn).
    static func wrap(_ s: String, _ columns: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in s.split(separator: " ") {
            let candidate = line.isEmpty ? String(word) : line + " " + word
            if width(of: candidate) <= columns || line.isEmpty {
                line = candidate
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
