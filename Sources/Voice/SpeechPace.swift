import Audio

/// How fast the trail's lines (a parent's clue, hint and found line, the pack's composed
/// lead-ins and trail lines) are spoken: at a child's pace, measured from the rendered
/// audio, whatever the voice. Children of 5-9 follow ~120-135 words a minute (adults
/// 160-180); eSpeak NG's rate parameter is not what comes out: at rate 175 our pirate voice
/// says a parent's plain sentences at ~179 words a minute and eSpeak's `en` at ~231. So the
/// rate is found by measuring (`calibratedRate`), once per voice, when the voice loads.
/// The pack's pre-rendered pirate lines keep the configured rate, and their character.
public enum SpeechPace {
    /// Words a minute of speech (leading and trailing silence excluded) for Latin script.
    public static let wordsPerMinute = 130.0
    /// Morae a minute for Japanese: 5.5 a second. eSpeak NG's `ja` says ~8.1 a second at rate
    /// 175; this slows it by about as much as 130 words a minute slows English from an
    /// adult's ~175 (our choice; the field guide gives English figures only).
    public static let moraePerMinute = 330.0

    /// Speech units a minute wanted for text in `script`.
    public static func target(for script: Script) -> Double {
        script == .japanese ? moraePerMinute : wordsPerMinute
    }

    /// What is counted in `text`: words (runs of letters or digits between spaces) for
    /// Latin and other scripts; for Japanese, morae (each kana but the small ゃゅょぁぃぅぇぉ
    /// and their katakana, which join the one before; ー and っ count; a kanji counts two).
    public static func units(in text: String, script: Script) -> Int {
        guard script == .japanese else {
            return text.split(whereSeparator: \.isWhitespace).count { $0.contains { $0.isLetter || $0.isNumber } }
        }
        let small: Set<Unicode.Scalar> = ["ゃ", "ゅ", "ょ", "ぁ", "ぃ", "ぅ", "ぇ", "ぉ", "ゎ", "ャ", "ュ", "ョ", "ァ", "ィ", "ゥ", "ェ", "ォ", "ヮ"]
        var count = 0
        for scalar in text.unicodeScalars where Script.of(scalar) == .japanese && !small.contains(scalar) {
            let v = scalar.value
            let isKanji = (0x3400...0x9FFF).contains(v) || (0xF900...0xFAFF).contains(v) || v >= 0x20000
            count += isKanji ? 2 : 1
        }
        return count
    }

    /// Units a minute of speech in `audio` of `text` (from first to last sound, as
    /// `SpeechAnalysis.activeDuration`); 0 for silence.
    public static func measuredRate(of audio: PCMBuffer, text: String, script: Script) -> Double {
        let seconds = SpeechAnalysis.activeDuration(audio)
        guard seconds > 0 else { return 0 }
        return Double(units(in: text, script: script)) / seconds * 60
    }

    /// Plain sentences a parent might write, to measure a voice by: the calibration text.
    public static func reference(for script: Script) -> [String] {
        switch script {
        case .japanese:
            [
                "だいどころの ひきだしを あけてごらん。",
                "おふろの ちかくを さがしてみよう。",
                "いちばん おおきな きの うしろを みてみよう。",
                "くつが ねむる ところを さがそう。",
            ]
        case .latin, .other:
            [
                "Look under the big blue chair in the living room, where the cat likes to sleep.",
                "Go to the kitchen and open the drawer next to the sink.",
                "Find the place where your shoes sleep at night.",
                "The next treasure hides behind the tallest plant in the garden.",
            ]
        }
    }

    /// The rate parameter at which `voice` says `script`'s reference at the child's pace, found
    /// by measuring the rendered audio (three tries at most, each scaled by what the last one
    /// measured); never faster than `parameters.rate`, never below eSpeak NG's 80.
    public static func calibratedRate(
        _ voice: VoiceChoice, script: Script, parameters: SpeechParameters, synthesizer: EspeakSynthesizer
    ) throws(VoiceError) -> Int {
        let sentences = reference(for: script)
        let wanted = target(for: script)
        var rate = parameters.rate
        for _ in 0..<3 {
            var p = parameters
            p.rate = rate
            var seconds = 0.0
            for sentence in sentences {
                seconds += SpeechAnalysis.activeDuration(try synthesizer.synthesize(sentence, voice: voice, parameters: p))
            }
            guard seconds > 0 else { break }
            let measured = Double(sentences.reduce(0) { $0 + units(in: $1, script: script) }) / seconds * 60
            let next = min(450, max(80, Int((Double(rate) * wanted / measured).rounded())))
            if abs(next - rate) <= 1 { break }
            rate = next
        }
        return min(rate, parameters.rate)
    }
}
