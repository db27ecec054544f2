import TestSupport
import Hunt
import Testing
import Voice

/// What the shipped packs say to a child (issue #23).
@Suite struct FamilyPackTests {
    /// Issue #23: grog, rum and "ye dog" are not for the default pack.
    @Test func theDefaultPackIsTheFamilyOne() throws {
        #expect(VoiceConfiguration(voicesDirectory: Repository.voicesDirectory).language == "en-family")
        let pack = try LinePack.load(language: VoiceConfiguration.defaultLanguage, voicesDirectory: Repository.voicesDirectory)
        #expect(pack.voice == .file(Repository.voicesDirectory + "/pirate"), "still the pirate's voice")
        let unkind = ["rum", "grog", "ye dog", "sea dog", "bilge rat", "scallywag", "landlubber", "drunken", "blast",
                      "davy jones", "booze", "bottle", "stole", "blind"]
        for line in pack.allLines {
            // The line as words between single spaces: " dig ye dog dig ".
            let words = " " + line.text.lowercased().split { !$0.isLetter && $0 != "'" }.joined(separator: " ") + " "
            for phrase in unkind {
                #expect(!words.contains(" " + phrase + " "), "'\(phrase)' in \(line.event.rawValue): \(line.text)")
            }
        }
        let flavour = pack.allLines.filter { ["ahoy", "matey", "arrr", "yo ho", "me spyglass", "captain", "pirate"].contains(where: $0.text.lowercased().contains) }
        #expect(flavour.count >= 15, "pirate-flavoured")
    }

    /// Issue #23: "Me compass spins like a drunken parrot!" told a lost child nothing.
    @Test(arguments: ["en-family", "en-pirate", "ja"])
    func everyLostItLineSaysWhatToDo(language: String) throws {
        let pack = try LinePack.load(language: language, voicesDirectory: Repository.voicesDirectory)
        let english = ["turn around", "turn about", "walk back", "go back", "look ", "try ", "peek", "walk slowly"]
        let japanese = ["もどろう", "もどってみよう", "あるこう", "まわってみよう", "むいてみよう", "みてみよう", "みてごらん", "きいてみよう", "のぞいてみよう"]
        for event in [LineEvent.proximityUnknown, .regionLeft, .hint] {
            for text in pack.lines(for: event) {
                let lower = text.lowercased()
                let instructions = (language == "ja" ? japanese : english).filter { lower.contains($0) }
                #expect(!instructions.isEmpty, "\(language) \(event.rawValue): \(text)")
                // One instruction per line: no "look high, and look low".
                // ("Turn around and go back" is one movement.)
                let oneMovement = instructions.count == 2 && instructions.contains("go back")
                    && (instructions.contains("turn around") || instructions.contains("turn about"))
                #expect(instructions.count <= 1 || oneMovement, "\(language) \(event.rawValue): \(text)")
            }
        }
    }
}
