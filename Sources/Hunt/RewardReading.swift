/// How a reward is read to a child who must write it down: the code, then the code spelled
/// slowly one character at a time, then the code again. Pure text for the synthesizer.
public enum RewardReading {
    /// Names for the symbols codes use; other symbols are left out of the spelling.
    static let symbols: [Character: String] = ["-": "dash", "_": "underscore", ".": "dot", "/": "slash", "+": "plus", "#": "hash"]

    public static func text(for reward: String) -> String {
        let spelled = spelling(reward)
        guard !spelled.isEmpty, spelled.count > 1 else { return reward }
        return reward + ". " + spelled.joined(separator: ", ") + ". " + reward + "."
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
}
