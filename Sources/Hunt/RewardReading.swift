/// How a reward is read to a child who must remember or write it down. A code ("ARRR-GOLD-2026",
/// "X7K2") is said, then spelled slowly one character at a time, then said again; words
/// ("Look under the bed") are said as a sentence, twice, never spelled (spelling a sentence
/// took 24 s and lost the child). Pure text for the synthesizer.
///
/// The rule (`isCode`): the reward is cut at spaces into tokens, each stripped of the
/// sentence punctuation around it (`. , ! ? ; : " ' ( )`). A token *looks like a code* when it
/// mixes letters and digits ("X7K2", "gold26"), has a symbol inside it ("ARRR-GOLD-2026",
/// "gold_26", "a.b"; a hyphen between small letters is a word's: "blue-green"), or is three
/// or more Latin letters without a vowel ("XKCD", "PZL"; `y` counts as a vowel). The reward is a code when any token looks like one; when it is one
/// token that is not a plain word of two letters or more (a number, a letter, a word in
/// capitals: "2026", "Q", "GOLD");
/// or when it is in capitals with a number in it ("ARRR GOLD 2026"). Everything else is
/// words: "Look under the bed", "LOOK UNDER THE BED", "Chocolate", "Look in drawer 3",
/// "たからもの", "Ice cream!".
public enum RewardReading {
    /// Names for the symbols codes use; other symbols are left out of the spelling.
    static let symbols: [Character: String] = ["-": "dash", "_": "underscore", ".": "dot", "/": "slash", "+": "plus", "#": "hash"]

    /// What surrounds a word in a sentence, not part of it.
    static let sentencePunctuation: Set<Character> = [".", ",", "!", "?", ";", ":", "\"", "'", "(", ")", "…", "。", "、", "！", "？"]

    public static func text(for reward: String) -> String {
        guard isCode(reward) else {
            // Words: said twice, each a sentence of its own.
            let words = reward.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            guard !words.isEmpty else { return reward }
            let sentence = words.last.map { sentencePunctuation.contains($0) } == true ? words : words + "."
            return sentence + " " + sentence
        }
        let spelled = spelling(reward)
        guard !spelled.isEmpty, spelled.count > 1 else { return reward }
        return reward + ". " + spelled.joined(separator: ", ") + ". " + reward + "."
    }

    /// Whether `reward` is a code to spell rather than words to say (the rule above).
    public static func isCode(_ reward: String) -> Bool {
        let tokens = reward.split(whereSeparator: \.isWhitespace).map(stripped).filter { !$0.isEmpty }
        guard !tokens.isEmpty else { return false }
        if tokens.contains(where: looksLikeCode) { return true }
        if tokens.count == 1 { return !isPlainWord(tokens[0]) }
        let letters = reward.filter(\.isLetter)
        let inCapitals = !letters.isEmpty && letters.allSatisfy { $0.isUppercase }
        return inCapitals && reward.contains(where: \.isNumber)
    }

    /// One word per character: letters upper-case (a letter alone is said by its name),
    /// digits as they are, a space as "space".
    public static func spelling(_ reward: String) -> [String] {
        reward.compactMap { c -> String? in
            if c.isLetter || c.isNumber { return String(c).uppercased() }
            if c == " " { return "space" }
            return symbols[c]
        }
    }

    static func stripped(_ token: Substring) -> Substring {
        var t = token
        while let first = t.first, sentencePunctuation.contains(first) { t = t.dropFirst() }
        while let last = t.last, sentencePunctuation.contains(last) { t = t.dropLast() }
        return t
    }

    static func looksLikeCode(_ token: Substring) -> Bool {
        let hasLetter = token.contains(where: \.isLetter)
        let hasDigit = token.contains(where: \.isNumber)
        if hasLetter && hasDigit { return true }
        // A symbol inside; an apostrophe is part of a word ("captain's"), and so is a hyphen
        // between letters of a word in small letters ("blue-green", not "ARRR-GOLD").
        let hyphenatedWord = token.contains(where: \.isLowercase) && !token.contains("--")
            && token.first != "-" && token.last != "-"
        if token.contains(where: { !$0.isLetter && !$0.isNumber && $0 != "'" && $0 != "’" && !($0 == "-" && hyphenatedWord) }) {
            return true
        }
        let latin = token.filter { $0.isASCII && $0.isLetter }
        return latin.count >= 3 && latin.count == token.count && !latin.lowercased().contains(where: { "aeiouy".contains($0) })
    }

    /// A word as a sentence would have it: letters (an apostrophe inside), not all capitals
    /// unless a single letter.
    static func isPlainWord(_ token: Substring) -> Bool {
        guard token.count(where: \.isLetter) >= 2, !token.contains(where: \.isNumber) else { return false }
        let cased = token.filter { $0.isUppercase || $0.isLowercase }
        return cased.isEmpty || cased.contains(where: \.isLowercase)
    }
}
