/// Text that did not come from our own files (a reward text heard over the air) made safe
/// to speak: plain words only, length-limited.
public enum SpeechText {
    /// The most characters of untrusted text ever spoken.
    public static let defaultLimit = 160

    /// Control characters (eSpeak NG's embedded-command introducer is one) become spaces;
    /// markup and phoneme brackets (`<`, `>`, `[[`, `]]`, `{`, `}`, `\`, `&`) are dropped so nothing
    /// can be read as SSML or an eSpeak command even if a flag were wrong; whitespace is
    /// collapsed; the result is cut at a word boundary to `maxCharacters`.
    public static func sanitize(_ text: String, maxCharacters: Int = defaultLimit) -> String {
        var cleaned = ""
        cleaned.reserveCapacity(min(text.utf8.count, maxCharacters * 4))
        var lastWasSpace = true
        for scalar in text.unicodeScalars {
            let v = scalar.value
            let isControl = v < 0x20 || (0x7F...0x9F).contains(v) || v == 0x2028 || v == 0x2029
            let isMarkup = "<>[]{}\\&`|".unicodeScalars.contains(scalar)
            let isSpace = isControl || scalar.properties.isWhitespace
            if isSpace {
                if !lastWasSpace { cleaned.append(" ") }
                lastWasSpace = true
            } else if isMarkup {
                continue
            } else if (0xFE00...0xFE0F).contains(v) || (0xE000...0xF8FF).contains(v) || v == 0xFEFF {
                continue  // variation selectors, private use, byte-order marks: nothing to say
            } else {
                cleaned.unicodeScalars.append(scalar)
                lastWasSpace = false
            }
        }
        while cleaned.last == " " { cleaned.removeLast() }
        guard cleaned.count > maxCharacters else { return cleaned }
        var cut = String(cleaned.prefix(maxCharacters))
        if let space = cut.lastIndex(of: " "), cut.distance(from: cut.startIndex, to: space) > maxCharacters / 2 {
            cut = String(cut[..<space])
        }
        return cut
    }
}
