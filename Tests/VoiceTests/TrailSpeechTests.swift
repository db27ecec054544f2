import TestSupport
import Audio
import FoundationEssentials
import Hunt
import Testing
import Voice

/// Clues a parent might write, none of them the calibration's reference sentences.
let parentClues = [
    "Look under the bed in the room where you sleep.",
    "Go to the front door and look inside the basket with the umbrellas.",
    "The treasure is hiding under a cushion on the sofa.",
    "Walk to the bathroom and check behind the green towel.",
]
let japaneseClues = [
    "ベッドの したを みてごらん。",
    "げんかんの かさたての なかを さがしてみよう。",
    "ソファの クッションの したに かくれているよ。",
]

/// Words (or morae) a minute of `texts` spoken by `speak`, from the rendered audio: speech
/// seconds from first to last sound of each line, leading and trailing silence excluded.
func measuredRate(_ texts: [String], script: Script, _ speak: (String) throws -> PCMBuffer) throws -> Double {
    var units = 0
    var seconds = 0.0
    for text in texts {
        units += SpeechPace.units(in: text, script: script)
        seconds += SpeechAnalysis.activeDuration(try speak(text))
    }
    return Double(units) / seconds * 60
}

@Suite struct TrailPaceTests {
    /// Issue #23: a parent's clue came out at 163-182 words a minute, faster than a child of
    /// 5-9 follows (120-135). Measured through the real eSpeak NG library.
    @Test func aParentsClueIsSpokenAtAboutOneHundredThirtyWordsAMinute() throws {
        let voice = try PirateVoice.load(VoiceConfiguration(voicesDirectory: Repository.voicesDirectory, language: "en-family"))
        let before = try measuredRate(parentClues, script: .latin) {
            try voice.synthesizer.synthesize($0, voice: voice.pack.voice, parameters: voice.parameters)
        }
        let after = try measuredRate(parentClues, script: .latin) { try voice.speak(ComposedLine(parent: $0)) }
        print("pack voice at rate \(voice.parameters.rate): \(before) wpm; trail pace (rate \(voice.trailVoice(for: "a").parameters.rate)): \(after) wpm")
        #expect(before > 160, "the old pace, for the record: \(before)")
        #expect((122...138).contains(after), "\(after) words a minute")
    }

    @Test func anEnglishClueInTheJapanesePackIsAtAChildsPaceToo() throws {
        let voice = try PirateVoice.load(VoiceConfiguration(voicesDirectory: Repository.voicesDirectory, language: "ja"))
        #expect(voice.trailVoice(for: parentClues[0]).voice == .name("en"))
        let after = try measuredRate(parentClues, script: .latin) { try voice.speak(untrusted: $0) }
        #expect((122...138).contains(after), "\(after) words a minute")
        let japanese = try measuredRate(japaneseClues, script: .japanese) { try voice.speak(untrusted: $0) }
        #expect(abs(japanese - SpeechPace.moraePerMinute) < 0.08 * SpeechPace.moraePerMinute, "\(japanese) morae a minute")
    }

    @Test func thePacksOwnLinesKeepTheirCharacter() throws {
        let voice = try PirateVoice.load(VoiceConfiguration(voicesDirectory: Repository.voicesDirectory, language: "en-family"))
        let trail = voice.trailVoice(for: "Look under the bed")
        #expect(trail.voice == voice.pack.voice, "English words in an English pack: the pirate says them")
        #expect(voice.parameters.rate == 175 && trail.parameters.rate < 175)
        #expect(trail.parameters.pitch == voice.parameters.pitch && trail.parameters.range == voice.parameters.range)
        // A pre-rendered line is rendered at the configured rate, not at the trail's pace
        // (eSpeak NG's length varies from call to call, up to 15 % in a busy test run).
        let line = voice.line(.startup, index: 0)
        let paced = try voice.synthesizer.synthesize(line.text, voice: voice.pack.voice, parameters: trail.parameters)
        #expect(line.audio.durationSeconds < paced.durationSeconds, "\(line.audio.durationSeconds) s vs \(paced.durationSeconds) s")
    }

    @Test func neverFasterThanTheConfiguredRate() throws {
        var configuration = VoiceConfiguration(voicesDirectory: Repository.voicesDirectory, language: "en-family")
        configuration.parameters.rate = 110
        let voice = try PirateVoice.load(configuration)
        #expect(voice.trailVoice(for: "Look under the bed").parameters.rate == 110)
    }

    /// Measuring takes longer than reading every line from the cache: the rate is kept there.
    @Test func theMeasuredRateIsKeptInTheLineCache() throws {
        let scratch = try Scratch("pace")
        let directory = scratch.path
        let voice = try PirateVoice.load(VoiceConfiguration(voicesDirectory: Repository.voicesDirectory, language: "en-family", cacheDirectory: directory))
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(files.count { $0.hasSuffix(".pace") } == voice.trailVoices.count, "\(files)")
        #expect(files.count { $0.hasSuffix(".pcm") } == voice.report.lines)
        let again = try PirateVoice.load(VoiceConfiguration(voicesDirectory: Repository.voicesDirectory, language: "en-family", cacheDirectory: directory))
        #expect(again.trailVoices == voice.trailVoices)

        let cache = LineCache(directory: directory)
        let key = RenderKey(text: "pace", voice: "v", parameters: SpeechParameters(), engineVersion: "1")
        #expect(cache.loadRate(key) == nil)
        try cache.storeRate(127, for: key)
        #expect(cache.loadRate(key) == 127)
        #expect(cache.load(key) == nil, "a rate is no line")
    }

    @Test func unitsAreWordsOrMorae() {
        #expect(SpeechPace.units(in: "Look under the bed, matey!", script: .latin) == 5)
        #expect(SpeechPace.units(in: "Go to room 3 - now", script: .latin) == 5)
        #expect(SpeechPace.units(in: "きゃく", script: .japanese) == 2)
        #expect(SpeechPace.units(in: "ゆっくり ー", script: .japanese) == 5)
        #expect(SpeechPace.units(in: "机の した", script: .japanese) == 5)
    }
}

@Suite struct VoicePerLanguageTests {
    @Test func aJapaneseClueInAnEnglishPackIsSpokenByTheJapaneseVoice() throws {
        let voice = try PirateVoice.load(VoiceConfiguration(voicesDirectory: Repository.voicesDirectory, language: "en-family"))
        #expect(voice.script == .latin)
        #expect(voice.trailVoice(for: japaneseClues[0]).voice == .name("ja"))
        #expect(voice.trailVoice(for: "Look under the bed").voice == voice.pack.voice)
        #expect(voice.trailVoice(for: "42!").voice == voice.pack.voice, "no letters: the pack's voice")
        // The lead-in stays in the pack's voice, the clue in its own.
        let line = ComposedLine(pack: "On to treasure number 2! Here is your clue.", parent: japaneseClues[1])
        let pcm = try voice.speak(line)
        let leadIn = try voice.speak(ComposedLine(pack: line.pack))
        let clue = try voice.speak(ComposedLine(parent: line.parent))
        let joined = leadIn.durationSeconds + PirateVoice.partPause + clue.durationSeconds
        #expect(abs(pcm.durationSeconds - joined) < 0.1 * joined, "\(pcm.durationSeconds) s vs \(joined) s")
    }

    @Test func anEnglishClueInTheJapanesePackIsNotReadLetterByLetter() throws {
        let voice = try PirateVoice.load(VoiceConfiguration(voicesDirectory: Repository.voicesDirectory, language: "ja"))
        #expect(voice.script == .japanese)
        #expect(voice.trailVoice(for: "Look under the bed").voice == .name("en"))
        #expect(voice.trailVoice(for: "ベッドの した").voice == .name("ja"))
        let english = try voice.speak(untrusted: "Look under the bed")
        let byJapanese = try voice.synthesizer.synthesize("Look under the bed", voice: .name("ja"), parameters: voice.trailVoice(for: "ベッド").parameters)
        // The Japanese voice spells the Latin letters; the English one says four words.
        #expect(english.durationSeconds * 2 < byJapanese.durationSeconds, "\(english.durationSeconds) s vs \(byJapanese.durationSeconds) s")
        #expect(english.durationSeconds < 2.5)
    }

    @Test func theScriptOfAText() {
        #expect(Script.dominant(in: "Look under the bed") == .latin)
        #expect(Script.dominant(in: "ベッドの したを みて") == .japanese)
        #expect(Script.dominant(in: "机の上") == .japanese, "kanji")
        #expect(Script.dominant(in: "Look under the こたつ") == .latin)
        #expect(Script.dominant(in: "ハンター 7 found it") == .japanese, "a kana counts two letters")
        #expect(Script.dominant(in: "Ｔｒｅａｓｕｒｅ") == .latin, "full-width Latin")
        #expect(Script.dominant(in: "Où est le trésor? Größer!") == .latin)
        #expect(Script.dominant(in: "Сокровище здесь") == .other)
        #expect(Script.dominant(in: "つぎは {treasure}ばんの おたからだ") == .japanese, "placeholders are no words")
        #expect(Script.dominant(in: "2026 - 42!") == nil)
        #expect(Script.dominant(in: "") == nil)
        #expect(Script.of("ー") == .japanese && Script.of("々") == .japanese && Script.of("7") == nil && Script.of("☠") == nil)
    }
}
