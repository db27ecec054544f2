/// Builds one JSON object on one line with keys in the order they are added: the
/// line-oriented contract other tools parse (`replay --json`, `hunt --json`, `scan --json`),
/// written by `OutputEvent` (and `check`'s list).
package struct JSONLine {
    private var text: String
    private var first = true

    /// Only `OutputEvent` builds lines: every `--json` line is one of its cases.
    init() {
        // One allocation for a whole line (appending to a string that must grow copies it).
        text = String()
        text.reserveCapacity(320)
        text += "{"
    }

    private mutating func key(_ name: String) {
        if !first { text += ", " }
        first = false
        text += "\""
        text += name
        text += "\": "
    }

    package mutating func add(_ name: String, _ value: String) {
        key(name)
        Self.appendQuoted(value, to: &text)
    }

    package mutating func add(_ name: String, _ value: Int) {
        key(name)
        text += String(value)
    }

    package mutating func add(_ name: String, _ value: Int?) {
        key(name)
        text += value.map(String.init) ?? "null"
    }

    /// Finite numbers with at most `decimals` places; NaN and infinities are written as null.
    package mutating func add(_ name: String, _ value: Double?, decimals: Int = 6) {
        key(name)
        guard let value, value.isFinite else {
            text += "null"
            return
        }
        text += Self.format(value, decimals: decimals)
    }

    /// An array of objects, each already built.
    package mutating func add(_ name: String, objects: [JSONLine]) {
        key(name)
        text += "["
        text += objects.map(\.line).joined(separator: ", ")
        text += "]"
    }

    package var line: String { text + "}" }

    package static func format(_ value: Double, decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        if rounded == rounded.rounded(.towardZero), abs(rounded) < 1e15 {
            return String(Int64(rounded)) + ".0"
        }
        return String(rounded)
    }

    package static func appendQuoted(_ value: String, to text: inout String) {
        text += "\""
        // Most values (ids, names of events) need no escape: appended whole.
        if value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }) {
            text += value
            text += "\""
            return
        }
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            default:
                // C0, DEL, C1 and the bidi overrides: escaped, so no text from the air
                // reaches a terminal as a control.
                let v = scalar.value
                if v < 0x20 || (0x7F...0x9F).contains(v) || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v) {
                    let hex = String(scalar.value, radix: 16)
                    text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        text += "\""
    }
}

/// A number with exactly `decimals` places (0-6), for tables ("2.660", "-0.500"); past
/// ±1e12 (a range from a low path-loss exponent and a beacon that advertises an odd power)
/// ">1e12" or "<-1e12", never an Int that traps (1e12 at 6 places is 1e18, under Int.max).
package func fixed(_ value: Double, decimals: Int) -> String {
    guard value.isFinite else { return "-" }
    guard abs(value) < 1e12 else { return value < 0 ? "<-1e12" : ">1e12" }
    let decimals = min(max(decimals, 0), 6)
    var scale = 1
    for _ in 0..<decimals { scale *= 10 }
    let scaled = Int((abs(value) * Double(scale)).rounded())
    let whole = scaled / scale
    let fraction = String(scaled % scale)
    let sign = value < 0 && scaled != 0 ? "-" : ""
    guard decimals > 0 else { return sign + String(whole) }
    return sign + String(whole) + "." + String(repeating: "0", count: decimals - fraction.count) + fraction
}
