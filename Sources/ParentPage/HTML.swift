import Game

/// Text made safe for HTML: everything a page shows that came from the air, the file or a
/// form goes through `escape` (a tag's name is radio input).
public enum HTML {
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    /// A JSON string literal (`JSONLine`'s quoting, the one the `--json` lines use); for a
    /// page, `<` escaped too, so that it is safe inside HTML.
    public static func jsonString(_ text: String, forHTML: Bool = true) -> String {
        var quoted = ""
        JSONLine.appendQuoted(text, to: &quoted)
        guard forHTML, quoted.contains("<") else { return quoted }
        var out = ""
        for c in quoted { if c == "<" { out += "\\u003c" } else { out.append(c) } }
        return out
    }

    /// A number for a page or JSON: `decimals` places, no exponent.
    public static func number(_ value: Double, decimals: Int = 1) -> String {
        guard value.isFinite else { return "null" }
        // Far past anything a page shows (an implausible distance): never an Int that traps.
        guard abs(value) < 1e12 else { return value < 0 ? "-1e12" : "1e12" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        let fraction = Int(scaled) - whole * Int(scale)
        let sign = value < 0 && scaled > 0 ? "-" : ""
        guard decimals > 0 else { return sign + String(whole) }
        let digits = String(fraction)
        return sign + String(whole) + "." + String(repeating: "0", count: decimals - digits.count) + digits
    }
}
