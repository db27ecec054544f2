/// The writing system a text is written in, as far as choosing an eSpeak NG voice goes: a
/// parent's English clue in the Japanese pack is spoken by an English voice (the Japanese
/// voice reads Latin letters one by one), a Japanese clue in an English pack by `ja`.
public enum Script: String, Sendable, CaseIterable {
    /// Latin letters (English and the other languages written with them).
    case latin
    /// Hiragana, katakana and kanji.
    case japanese
    /// Letters of any other script (Cyrillic, Greek, Hangul, Arabic...): no voice of ours.
    case other

    /// The script of most of the text's letters, or nil when it has none (digits, punctuation
    /// and spaces count for nothing; a pack's `{placeholders}` are words of no language
    /// and are skipped). A kana or kanji counts as two letters: one says about as much as two
    /// Latin letters do, so "Look under the こたつ" is Latin and "ハンター 7 found it" Japanese.
    public static func dominant(in text: String) -> Script? {
        var latin = 0
        var japanese = 0
        var other = 0
        var inPlaceholder = false
        for scalar in text.unicodeScalars {
            if scalar == "{" { inPlaceholder = true; continue }
            if scalar == "}" { inPlaceholder = false; continue }
            if inPlaceholder { continue }
            switch of(scalar) {
            case .latin?: latin += 1
            case .japanese?: japanese += 2
            case .other?: other += 1
            case nil: break
            }
        }
        let best = max(latin, japanese, other)
        guard best > 0 else { return nil }
        // Ties go to Latin, then Japanese: the scripts we have voices for.
        if latin == best { return .latin }
        if japanese == best { return .japanese }
        return .other
    }

    /// The script of one character; nil for what is not a letter (digits, punctuation,
    /// spaces, symbols, emoji). The Japanese iteration mark and the long-vowel mark count
    /// as Japanese; full-width Latin letters as Latin.
    public static func of(_ scalar: Unicode.Scalar) -> Script? {
        let v = scalar.value
        switch v {
        case 0x41...0x5A, 0x61...0x7A: return .latin
        case 0xFF21...0xFF3A, 0xFF41...0xFF5A: return .latin  // full-width A-Z, a-z
        case 0x3041...0x3096, 0x309D...0x309F: return .japanese  // hiragana
        case 0x30A1...0x30FA, 0x30FC...0x30FF: return .japanese  // katakana, ー
        case 0x31F0...0x31FF, 0xFF66...0xFF9D: return .japanese  // katakana extensions, half-width
        case 0x3005, 0x3006: return .japanese  // 々 〆
        case 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x2FA1F: return .japanese  // kanji
        default: break
        }
        guard scalar.properties.isAlphabetic else { return nil }
        // Latin-1 letters, Latin Extended-A/B, IPA, Latin Extended Additional (é, ß, ø, ẞ, ơ).
        if (0xC0...0x24F).contains(v) && v != 0xD7 && v != 0xF7 { return .latin }
        if (0x1E00...0x1EFF).contains(v) { return .latin }
        // Combining marks belong to the letter before them.
        if (0x300...0x36F).contains(v) || (0x3099...0x309A).contains(v) { return nil }
        return .other
    }
}
