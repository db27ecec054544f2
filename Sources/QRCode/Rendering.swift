// Renderers: terminal half blocks, plain ASCII, SVG. All deterministic and pure.
//
// Polarity. A QR code is read as dark modules on a light ground, with a light quiet zone
// around it. A terminal draws its characters ("ink") in the foreground colour on the
// background colour, so which modules must be inked depends on the terminal:
// - `inverted: false` inks the DARK modules and leaves light modules and the quiet zone as
//   spaces. Right for a light-background terminal, paper, or a log viewer with dark text
//   on white. On a dark-background terminal this shows a negative that many phones won't read.
// - `inverted: true` inks the LIGHT modules and the whole quiet zone, so the symbol's dark
//   modules are the terminal's dark background. Right for a dark-background terminal such as
//   the Linux console on the kiosk (white on black). This is what `qrencode -t UTF8` draws.

extension QRCode {
    /// Whether the module at padded position (`x`, `y`), in a symbol surrounded by `quietZone`
    /// light modules, is to be inked. Anything outside the symbol is light.
    private func ink(_ x: Int, _ y: Int, quietZone: Int, inverted: Bool) -> Bool {
        self[x - quietZone, y - quietZone] != inverted
    }

    /// The symbol as text lines of Unicode half blocks, two module rows per line, one
    /// character per module column: "█" both rows inked, "▀" only the upper, "▄" only the
    /// lower, " " neither. A light quiet zone of `quietZone` modules (clamped to 0 or more;
    /// the standard asks for 4, 2 is usually enough on a screen) surrounds the symbol; when
    /// the padded height is odd the last line's lower half is light as well.
    ///
    /// - Parameter inverted: `false` inks dark modules (light-background terminals, logs on
    ///   white); `true` inks light modules and the quiet zone (dark-background terminals such
    ///   as the kiosk's Linux console; the same as `qrencode -t UTF8`).
    /// - Returns: `(size + 2 * quietZone + 1) / 2` lines, each `size + 2 * quietZone` characters.
    public func terminalLines(quietZone: Int = 2, inverted: Bool = false) -> [String] {
        let zone = max(0, quietZone)
        let side = size + 2 * zone
        var lines: [String] = []
        lines.reserveCapacity((side + 1) / 2)
        for y in stride(from: 0, to: side, by: 2) {
            var line = ""
            line.unicodeScalars.reserveCapacity(side)
            for x in 0..<side {
                let upper = ink(x, y, quietZone: zone, inverted: inverted)
                let lower = y + 1 < side ? ink(x, y + 1, quietZone: zone, inverted: inverted) : inverted
                switch (upper, lower) {
                case (true, true): line.unicodeScalars.append("\u{2588}")  // █ full block
                case (true, false): line.unicodeScalars.append("\u{2580}")  // ▀ upper half block
                case (false, true): line.unicodeScalars.append("\u{2584}")  // ▄ lower half block
                case (false, false): line.unicodeScalars.append(" ")
                }
            }
            lines.append(line)
        }
        return lines
    }

    /// The symbol as plain ASCII, one line per module row and two characters per module
    /// ("##" inked, two spaces not), for logs and terminals without Unicode. Same quiet zone
    /// and polarity rules as ``terminalLines(quietZone:inverted:)``; `inverted: false` is what
    /// `qrencode -t ASCII` draws and `inverted: true` what `qrencode -t ASCIIi` draws.
    public func asciiLines(quietZone: Int = 2, inverted: Bool = false) -> [String] {
        let zone = max(0, quietZone)
        let side = size + 2 * zone
        return (0..<side).map { y in
            var line = ""
            line.reserveCapacity(2 * side)
            for x in 0..<side {
                line += ink(x, y, quietZone: zone, inverted: inverted) ? "##" : "  "
            }
            return line
        }
    }

    /// A standalone SVG document: a white square with black modules and a `quietZone`-module
    /// white margin (clamped to 0 or more; 4 is the standard's). The `viewBox` is in modules,
    /// `width` and `height` in pixels (`moduleSize`, at least 1, pixels per module). Dark
    /// modules are one `<path>` of horizontal runs, each `M<x> <y>h<n>v1h-<n>z`, so the same
    /// code always gives the same bytes.
    public func svg(moduleSize: Int = 8, quietZone: Int = 4) -> String {
        let zone = max(0, quietZone)
        let side = size + 2 * zone
        let pixels = side * max(1, moduleSize)
        var path = ""
        for y in 0..<size {
            var x = 0
            while x < size {
                guard self[x, y] else {
                    x += 1
                    continue
                }
                let start = x
                while x < size, self[x, y] { x += 1 }
                let run = x - start
                path += "M\(start + zone) \(y + zone)h\(run)v1h-\(run)z"
            }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="\(pixels)" height="\(pixels)" \
            viewBox="0 0 \(side) \(side)" shape-rendering="crispEdges">
            <rect x="0" y="0" width="\(side)" height="\(side)" fill="#ffffff"/>
            <path fill="#000000" d="\(path)"/>
            </svg>

            """
    }
}
