#if canImport(Glibc)
import Glibc
#endif
import GameKey
import POSIX
import QRCode

/// `pirate-hunter pair CODE [--config FILE]`: the game key written into this Pi's file
/// (`game.key`), the rest of the file kept as it is, byte for byte; and `check --new-game`:
/// a new key, printed as text and as a QR code to copy to every Pi of the game.
enum PairCommand {
    static func run(_ arguments: ParsedArguments) throws(CLIError) -> ExitCode {
        let code = arguments.operand ?? ""
        let key: GameKey
        do throws(GameKey.TextError) {
            key = try GameKey(text: code)
        } catch {
            switch error {
            case let .badCharacter(c):
                throw CLIError(.dataError, "'\(CLIError.printable(String(c)))' is not in a pairing code (letters A-Z and digits 2-7, as check --new-game shows it)")
            case let .wrongLength(n):
                throw CLIError(.dataError, "the code has \(n) of its 52 letters and digits (dashes and spaces do not count): copy it again (pirate-hunter check --new-game)")
            }
        }
        let path = arguments.flags.configPath ?? HunterConfiguration.defaultPath
        // Only the default file may be made here: a `--config` that is not there is a typo
        // (the package installs both files), and the box it meant stayed unpaired.
        let original = try ConfigurationFile.read(path, explicit: arguments.flags.configPath != nil)
        let text = original.map { String(decoding: ConfigurationText.withoutByteOrderMark($0), as: UTF8.self) }
        if let bytes = original {
            // Only a file the hunt would read is changed (its own errors, exit 78).
            _ = try HunterConfiguration.decode(bytes, file: path)
        }
        let updated = try withKey(key, in: text ?? "", file: path)
        // What is written must read back as the same file with this key.
        guard (try? HunterConfiguration.decode(Array(updated.utf8), file: path))?.game.key == key else {
            throw CLIError(.software, "\(path): the key could not be put in the file; add \"game\": {\"key\": \"\(key.text)\"} by hand")
        }
        do {
            // The file keeps its mode, and (run with sudo) its owner: the service's own.
            try AtomicFile.replace(Array(updated.utf8), at: path)
        } catch {
            throw CLIError(error.errno == EACCES || error.errno == EPERM || error.errno == EROFS ? .noPermission : .cantCreate, "\(error)")
        }
        print("paired: \(path) now holds game \(key.fingerprint)'s key; restart the service (or send it SIGHUP) to use it")
        return .ok
    }

    /// `text` (a JSON object) with `"game": {"key": …}` set: the key's value replaced where
    /// there is one, else the key added to `game`, else `game` added; nothing else changes.
    static func withKey(_ key: GameKey, in text: String, file: String) throws(CLIError) -> String {
        let quoted = "\"\(key.text)\""
        let trimmed = text.drop { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
        if trimmed.isEmpty { return "{\"game\": {\"key\": \(quoted)}}\n" }
        let scalars = Array(text.unicodeScalars)
        guard let top = JSONMembers(scalars, objectAt: scalars.firstIndex(of: "{")) else {
            throw CLIError(.config, "\(file): not a JSON object")
        }
        if let game = top.value(of: "game") {
            guard let members = JSONMembers(scalars, objectAt: game.lowerBound) else {
                throw CLIError(.config, "\(file): game: must be an object")
            }
            if let value = members.value(of: "key") {
                return String(String.UnicodeScalarView(scalars[..<value.lowerBound])) + quoted
                    + String(String.UnicodeScalarView(scalars[value.upperBound...]))
            }
            return members.inserting("\"key\": \(quoted)", into: scalars)
        }
        return top.inserting("\"game\": {\"key\": \(quoted)}", into: scalars)
    }
}

/// The members of one JSON object in already-valid text: each name and where its value
/// lies (scalar offsets), found by a scanner that knows strings and nesting only.
struct JSONMembers {
    /// The object's `{`.
    let open: Int
    let members: [(name: String, value: Range<Int>)]

    init?(_ s: [Unicode.Scalar], objectAt start: Int?) {
        guard let start, start < s.count, s[start] == "{" else { return nil }
        open = start
        var found: [(String, Range<Int>)] = []
        var i = start + 1
        func skipSpace() { while i < s.count, [" ", "\n", "\t", "\r"].contains(s[i]) { i += 1 } }
        /// The end of the string starting at `i` (past its closing quote).
        func stringEnd(_ from: Int) -> Int {
            var j = from + 1
            while j < s.count, s[j] != "\"" { j += s[j] == "\\" ? 2 : 1 }
            return min(j + 1, s.count)
        }
        /// The end of the value starting at `i`.
        func valueEnd(_ from: Int) -> Int {
            if s[from] == "\"" { return stringEnd(from) }
            var depth = 0
            var j = from
            while j < s.count {
                let c = s[j]
                if c == "\"" { j = stringEnd(j); continue }
                if c == "{" || c == "[" { depth += 1 }
                if c == "}" || c == "]" {
                    if depth == 0 { return j }
                    depth -= 1
                    if depth == 0 { return j + 1 }
                }
                if depth == 0, c == "," { return j }
                j += 1
            }
            return j
        }
        while true {
            skipSpace()
            guard i < s.count else { return nil }
            if s[i] == "}" { break }
            if s[i] == "," { i += 1; continue }
            guard s[i] == "\"" else { return nil }
            let nameEnd = stringEnd(i)
            let name = String(String.UnicodeScalarView(s[(i + 1)..<max(i + 1, nameEnd - 1)]))
            i = nameEnd
            skipSpace()
            guard i < s.count, s[i] == ":" else { return nil }
            i += 1
            skipSpace()
            guard i < s.count else { return nil }
            let end = valueEnd(i)
            found.append((name, i..<end))
            i = end
        }
        members = found
    }

    func value(of name: String) -> Range<Int>? { members.last { $0.name == name }?.value }

    /// `member` added as the object's first, with a comma when others follow.
    func inserting(_ member: String, into s: [Unicode.Scalar]) -> String {
        let before = String(String.UnicodeScalarView(s[...open]))
        let after = String(String.UnicodeScalarView(s[(open + 1)...]))
        return before + member + (members.isEmpty ? "" : ", ") + after
    }
}

extension PairCommand {
    /// `check --new-game`: a new key from the kernel, as text and as a QR code.
    static func newGame() throws(CLIError) -> ExitCode {
        let key = GameKey.random()
        let out = StandardOutput()
        out.line("a new game key (game \(key.fingerprint)); keep it secret, like a Wi-Fi password:")
        out.line("")
        out.line("    \(key.text)")
        out.line("")
        if isatty(1) == 1, let code = try? QRCode(encoding: key.text) {
            for row in code.terminalLines(inverted: true) { out.line(row) }
            out.line("")
        }
        out.line("on the treasure box:  sudo pirate-hunter pair \(key.text) --config /etc/pirate-hunter/treasure.json")
        out.line("on every hunter:      sudo pirate-hunter pair \(key.text)")
        out.line("then restart them (sudo systemctl restart pirate-hunter, or pirate-treasure on the box) or send SIGHUP")
        // The key exists only in what was printed: not printed whole, the new game is lost.
        try out.finish(lost: "the new game's key was not shown whole; run check --new-game again")
        return .ok
    }
}
