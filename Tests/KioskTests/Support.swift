import Kiosk
import Ranging

let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

func boxState(
    advertising: KioskState.Advertising = .advertising(adapter: "hci1", family: "legacy"),
    reward: String? = "Gold coins under the big oak!",
    hunters: [KioskState.Hunter] = [],
    greeting: KioskState.Greeting? = nil,
    trail: KioskState.Trail = .init(),
    standings: [KioskState.Finisher] = []
) -> KioskState {
    KioskState(
        advertising: advertising, uuid: uuid, major: 1, minor: 7, power: -59, intervalMilliseconds: 100,
        reward: reward, hunters: hunters, greeting: greeting, trail: trail, standings: standings)
}

func hunter(
    _ id: UInt16, _ p: Proximity, _ metres: Double? = nil, trend: Trend? = nil, found: Bool = false, seen: Double = 100
) -> KioskState.Hunter {
    KioskState.Hunter(id: id, proximity: p, distance: metres, trend: trend, found: found, lastSeen: seen)
}

/// A QR-like drawing `size` modules square (plus a 2-module quiet zone), drawn two module rows
/// per line with half blocks the way a QR code is shown in a terminal; the pattern is a
/// deterministic mix of finder squares and noise so every line is different.
func qrDrawing(modules size: Int) -> [String] {
    let n = size + 4
    func dark(_ x: Int, _ y: Int) -> Bool {
        let mx = x - 2, my = y - 2
        guard mx >= 0, my >= 0, mx < size, my < size else { return false }
        for (fx, fy) in [(0, 0), (size - 7, 0), (0, size - 7)] {
            let dx = mx - fx, dy = my - fy
            if (0..<7).contains(dx), (0..<7).contains(dy) {
                return dx == 0 || dx == 6 || dy == 0 || dy == 6 || ((2...4).contains(dx) && (2...4).contains(dy))
            }
        }
        return (mx * 7 + my * 13 + mx * my) % 5 < 2
    }
    // Light modules are drawn (a full block is two light modules), as `qrencode -t UTF8` does.
    var lines: [String] = []
    for y in stride(from: 0, to: n, by: 2) {
        var line = ""
        for x in 0..<n {
            let top = !dark(x, y), bottom = y + 1 < n ? !dark(x, y + 1) : true
            line.append(top ? (bottom ? "█" : "▀") : (bottom ? "▄" : " "))
        }
        lines.append(line)
    }
    return lines
}

/// `s` without SGR sequences (ESC [ params m).
func stripSGR(_ s: String) -> String {
    var out = String.UnicodeScalarView()
    var scalars = Array(s.unicodeScalars)[...]
    while let c = scalars.first {
        if c == "\u{1B}", scalars.dropFirst().first == "[" {
            var rest = scalars.dropFirst(2)
            while let p = rest.first, ("0"..."9").contains(p) || p == ";" { rest = rest.dropFirst() }
            if rest.first == "m" {
                scalars = rest.dropFirst()
                continue
            }
        }
        out.append(c)
        scalars = scalars.dropFirst()
    }
    return String(out)
}

/// Every escape sequence in `s`, as the text from ESC up to its final byte.
func escapes(in s: String) -> [String] {
    var found: [String] = []
    let scalars = Array(s.unicodeScalars)
    var i = 0
    while i < scalars.count {
        if scalars[i] == "\u{1B}" {
            var j = i + 1
            if j < scalars.count, scalars[j] == "[" { j += 1 }
            while j < scalars.count, ("0"..."9").contains(scalars[j]) || scalars[j] == ";" || scalars[j] == "?" { j += 1 }
            let end = min(j, scalars.count - 1)
            found.append(String(String.UnicodeScalarView(scalars[i...end])))
            i = end + 1
        } else {
            i += 1
        }
    }
    return found
}

/// The rows of a frame: the text after the leading cursor-home, split at CR LF.
func rows(_ frame: String, color: Bool) -> [String] {
    var text = color ? stripSGR(frame) : frame
    if text.hasPrefix(KioskScreen.home) { text.removeFirst(KioskScreen.home.count) }
    return text.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
}

/// Terminal columns of `s`, counted independently of the module: CJK ideographs and emoji 2,
/// combining marks 0, everything else (box drawing and blocks included) 1.
func columns(_ s: String) -> Int {
    s.unicodeScalars.reduce(0) { sum, u in
        switch u.value {
        case 0x0300...0x036F: return sum
        case 0x4E00...0x9FFF, 0x1F300...0x1F64F: return sum + 2
        default: return sum + 1
        }
    }
}
