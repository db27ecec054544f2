import Synchronization
import Audio
import Hunt
import FoundationEssentials
import Simulation  // SplitMix64: seeded, so line choices are reproducible
import Testing
import TestSupport
import Voice

#if canImport(Glibc)
import Glibc
#endif

let pirateVoice = VoiceChoice.file(Repository.voicesDirectory + "/pirate")
let sampleLines = [
    "Ahoy! Captain's on deck and ready to hunt for treasure.",
    "Ye be gettin' hotter than a cannon in battle!",
    "The treasure be far off yet. Keep sailin'.",
]

@Suite struct SynthesisTests {
    @Test func speaksThroughTheRealLibrary() throws {
        let engine = try EspeakSynthesizer.shared()
        #expect(engine.sampleRate == 22050)
        #expect(engine.version.hasPrefix("1."))
        let pcm = try engine.synthesize("Hello there, matey.", voice: .name("en"))
        #expect(pcm.sampleRate == 22050 && pcm.channels == 1)
        #expect(pcm.durationSeconds > 0.5 && pcm.durationSeconds < 5)
        #expect(pcm.samples.contains { abs(Int($0)) > 1000 })
    }

    @Test func thePirateIsLowerAndSlowerThanTheDefaultVoice() throws {
        let engine = try EspeakSynthesizer.shared()
        var pirateF0: [Double] = []
        var defaultF0: [Double] = []
        var pirateSeconds = 0.0
        var defaultSeconds = 0.0
        for line in sampleLines {
            let pirate = try engine.synthesize(line, voice: pirateVoice)
            let plain = try engine.synthesize(line, voice: .name("en"))
            pirateF0 += SpeechAnalysis.f0Track(pirate)
            defaultF0 += SpeechAnalysis.f0Track(plain)
            pirateSeconds += SpeechAnalysis.activeDuration(pirate)
            defaultSeconds += SpeechAnalysis.activeDuration(plain)
        }
        let pirate = SpeechAnalysis.median(pirateF0)
        let plain = SpeechAnalysis.median(defaultF0)
        #expect(plain > 80 && plain < 140)  // the estimate is sane for a male voice
        #expect(pirate <= plain * 0.8)
        #expect(defaultSeconds / pirateSeconds <= 0.8)  // speaking rate at least 20 % slower
    }

    @Test func thePitchEstimateFindsAKnownTone() {
        let samples = (0..<22050).map { Int16(8000 * sin(2 * Double.pi * 110 * Double($0) / 22050)) }
        let f0 = SpeechAnalysis.medianF0(PCMBuffer(sampleRate: 22050, samples: samples))
        #expect(abs((f0 ?? 0) - 110) < 3)
    }

    @Test func aVoiceThatDoesNotTakeIsAnError() throws {
        let engine = try EspeakSynthesizer.shared()
        #expect(throws: VoiceError.self) { try engine.synthesize("hello", voice: .name("en+nosuchvariant")) }
        #expect(throws: VoiceError.self) { try engine.synthesize("hello", voice: .name("klingon")) }
        #expect(throws: VoiceError.self) { try engine.synthesize("hello", voice: .file("/nonexistent/voice")) }
        #expect(try engine.currentVoiceIdentifier(after: .name("en")) == "gmw/en")
        #expect(try engine.currentVoiceIdentifier(after: pirateVoice) == Repository.voicesDirectory + "/pirate")
    }

    @Test func aVoiceFileOnALongMixedCasePathStillTakes() throws {
        let engine = try EspeakSynthesizer.shared()
        let scratch = try Scratch("voice")
        let directory = scratch.path + "/A-Rather-Long-Directory-Name-With-Capitals-For-eSpeak"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let copy = directory + "/Pirate"
        try FileManager.default.copyItem(atPath: Repository.voicesDirectory + "/pirate", toPath: copy)
        #expect(copy.utf8.count > 59)
        let text = sampleLines[0]
        let viaCopy = try engine.synthesize(text, voice: .file(copy))
        let direct = try engine.synthesize(text, voice: pirateVoice)
        let plain = try engine.synthesize(text, voice: .name("en"))
        // eSpeak NG does not repeat itself to the sample (its state carries over between
        // calls: 24833, 25877, 25809 frames for the same text here), so compare loosely:
        // the copy speaks as long as the pirate and as low, well below the default voice.
        #expect(abs(viaCopy.frameCount - direct.frameCount) < direct.frameCount / 20)
        #expect(viaCopy.frameCount > plain.frameCount * 5 / 4)
        let copyF0 = try #require(SpeechAnalysis.medianF0(viaCopy))
        let plainF0 = try #require(SpeechAnalysis.medianF0(plain))
        #expect(copyF0 < plainF0 * 0.85)
        #expect(try engine.currentVoiceIdentifier(after: .file(copy)) == copy)
    }

    @Test func parametersAreChecked() throws {
        let engine = try EspeakSynthesizer.shared()
        #expect(throws: VoiceError("speech rate 20 is outside 80...450 words per minute")) {
            try engine.synthesize("hello", voice: .name("en"), parameters: SpeechParameters(rate: 20))
        }
        let slow = try engine.synthesize("one two three four", voice: .name("en"), parameters: SpeechParameters(rate: 100))
        let fast = try engine.synthesize("one two three four", voice: .name("en"), parameters: SpeechParameters(rate: 300))
        #expect(slow.durationSeconds > fast.durationSeconds * 1.5)
    }
}

@Suite struct UntrustedTextTests {
    @Test func controlCharactersAndMarkupDoNotPass() {
        #expect(SpeechText.sanitize("Gold\u{1}50S at\t\tthe\nmast\u{7F}!") == "Gold 50S at the mast !")
        #expect(SpeechText.sanitize("<speak><break time=\"9s\"/>hi</speak>") == "speakbreak time=\"9s\"/hi/speak")
        #expect(SpeechText.sanitize("[[h@'loU]] {x} a\\b") == "h@'loU x ab")
        #expect(SpeechText.sanitize("   ") == "")
    }

    @Test func lengthIsLimitedAtAWord() {
        let long = String(repeating: "treasure ", count: 100)
        let cut = SpeechText.sanitize(long, maxCharacters: 40)
        #expect(cut.count <= 40)
        #expect(cut.hasSuffix("treasure"))
        #expect(SpeechText.sanitize(String(repeating: "x", count: 500), maxCharacters: 30).count == 30)
    }

    @Test func ssmlIsSpokenAsWordsNotObeyed() throws {
        let engine = try EspeakSynthesizer.shared()
        let hostile = "ahoy <break time=\"20s\"/> matey <prosody rate=\"x-slow\">slow</prosody>"
        let pcm = try engine.synthesize(SpeechText.sanitize(hostile), voice: .name("en"))
        #expect(pcm.durationSeconds < 8)  // no 20 s break was taken
        #expect(pcm.durationSeconds > 1)  // the words were spoken
    }
}

@Suite struct LinePackTests {
    /// Where `write(_:named:)` puts the packs, one directory for each test.
    let scratch: Scratch
    init() throws { scratch = try Scratch("voice-packs") }

    @Test(arguments: ["en-family", "en-pirate", "ja"])
    func shippedPacksHaveEveryEvent(language: String) throws {
        let pack = try LinePack.load(language: language, voicesDirectory: Repository.voicesDirectory)
        #expect(pack.language == language)
        for event in LineEvent.allCases {
            // A child's lines vary; a grown-up's notice is one plain sentence.
            #expect(pack.lines(for: event).count >= (event.isNotice ? 1 : 4), "\(language) \(event.rawValue)")
            #expect(Set(pack.lines(for: event)).count == pack.lines(for: event).count)
        }
    }

    @Test func japaneseIsInKana() throws {
        let pack = try LinePack.load(language: "ja", voicesDirectory: Repository.voicesDirectory)
        #expect(pack.voice == .name("ja"))
        for line in pack.allLines {
            for scalar in line.text.unicodeScalars {
                let v = scalar.value
                let kana = (0x3040...0x30FF).contains(v)
                let punctuation = (0x3000...0x303F).contains(v) || v < 0x80 || (0xFF01...0xFF0F).contains(v)
                #expect(kana || punctuation, "\(line.event.rawValue): \(line.text)")
            }
        }
    }

    @Test func everyShippedLineSpeaks() throws {
        let engine = try EspeakSynthesizer.shared()
        for language in ["en-family", "en-pirate", "ja"] {
            let pack = try LinePack.load(language: language, voicesDirectory: Repository.voicesDirectory)
            for line in pack.allLines where line.index == 0 {
                let pcm = try engine.synthesize(line.text, voice: pack.voice)
                #expect(pcm.durationSeconds > 0.4, "\(language) \(line.event.rawValue)")
            }
        }
    }

    func write(_ json: String, named name: String) -> String {
        let directory = scratch.path + "/packs-\(name)"
        try? FileManager.default.createDirectory(atPath: directory + "/lines", withIntermediateDirectories: true)
        let path = directory + "/lines/\(name).json"
        _ = FileManager.default.createFile(atPath: path, contents: Data(json.utf8))
        return path
    }

    func allEvents(except skipped: LineEvent? = nil, extra: String = "", voice: String = "{\"name\": \"en\"}") -> String {
        let body = LineEvent.allCases.filter { $0 != skipped }.map { "\"\($0.rawValue)\": [\"a\", \"b\"]" }
        return "{\"language\": \"xx\", \"voice\": \(voice), \"events\": {\(body.joined(separator: ", "))\(extra)}}"
    }

    @Test func aMalformedPackIsRefusedNamingTheFile() {
        let path = write("{\"language\": \"xx\", \"events\": {", named: "broken")
        #expect(throws: VoiceError("\(path): not a valid line pack (malformed JSON)")) {
            try LinePack.load(path: path)
        }
        let noVoice = write("{\"language\": \"xx\", \"events\": {}}", named: "novoice")
        #expect(throws: VoiceError("\(noVoice): not a valid line pack (missing 'voice' at top level)")) {
            try LinePack.load(path: noVoice)
        }
        let wrongType = write("{\"language\": \"xx\", \"voice\": {\"name\": \"en\"}, \"events\": {\"warmer\": \"hot\"}}", named: "type")
        #expect(throws: VoiceError("\(wrongType): not a valid line pack (wrong type at events.warmer)")) {
            try LinePack.load(path: wrongType)
        }
    }

    @Test func aMissingOrUnknownEventIsRefusedNamingIt() {
        let missing = write(allEvents(except: .treasureFound), named: "missing")
        #expect(throws: VoiceError("\(missing): event 'treasure-found' is missing")) {
            try LinePack.load(path: missing)
        }
        let unknown = write(allEvents(extra: ", \"kraken\": [\"a\"]"), named: "unknown")
        #expect(throws: VoiceError("\(unknown): unknown event 'kraken'")) { try LinePack.load(path: unknown) }
        let few = write(allEvents(), named: "few")
        #expect(throws: VoiceError("\(few): event 'region-entered' has 2 line(s), needs at least 4")) {
            try LinePack.load(path: few, minimumLines: 4)
        }
        #expect(throws: Never.self) { try LinePack.load(path: few) }
    }

    @Test func aPackWithAMissingVoiceFileIsRefused() {
        let path = write(
            allEvents(voice: "{\"file\": \"parrot\"}"), named: "voice")
        let voices = String(path.split(separator: "/").dropLast(2).joined(separator: "/")).withRoot
        #expect(throws: VoiceError("\(path): voice file '\(voices)/parrot' does not exist", kind: .missingFile)) {
            try LinePack.load(path: path)
        }
    }

    @Test func noLineIsPickedTwiceInARow() {
        var picker = LinePicker()
        var random = SplitMix64(seed: 42)
        var previous = -1
        var seen = Set<Int>()
        for _ in 0..<2000 {
            let index = picker.pick(.warmer, count: 5, using: &random)
            #expect(index != previous)
            #expect((0..<5).contains(index))
            seen.insert(index)
            previous = index
        }
        #expect(seen.count == 5)
        #expect(picker.pick(.colder, count: 1, using: &random) == 0)
        // Events are independent: the last warmer line does not bar a colder one.
        var a = LinePicker()
        var r1 = SplitMix64(seed: 7)
        var r2 = SplitMix64(seed: 7)
        var b = LinePicker()
        #expect(a.pick(.colder, count: 4, using: &r1) == b.pick(.colder, count: 4, using: &r2))
    }
}

@Suite struct PrerenderTests {
    /// Virtual time's start-up: every line rendered now although the cache holds it (what
    /// eSpeak NG renders next depends on what it rendered before), played from memory, and
    /// still stored for the next run on real time.
    /// The pirate pack, 4 lines an event, cached in `scratch`.
    static func cachedConfiguration(_ scratch: Scratch) -> VoiceConfiguration {
        var configuration = VoiceConfiguration(voicesDirectory: Repository.voicesDirectory, language: "en-pirate")
        configuration.cacheDirectory = scratch.path
        configuration.minimumLines = 4
        return configuration
    }

    @Test func aFreshLoadRendersEveryLineWhateverTheCacheHolds() throws {
        let scratch = try Scratch("voice-fresh")
        let configuration = Self.cachedConfiguration(scratch)
        let cold = try PirateVoice.load(configuration, random: SplitMix64(seed: 1))
        let lines = cold.report.lines
        let fresh = try PirateVoice.load(configuration, random: SplitMix64(seed: 1), fresh: true)
        #expect(fresh.report == RenderReport(lines: lines, synthesized: lines, fromCache: 0, cacheWriteFailures: 0))
        for event in LineEvent.allCases where !event.isComposed {
            #expect(!fresh.line(event, index: 0).audio.samples.isEmpty)
        }
        let warm = try PirateVoice.load(configuration, random: SplitMix64(seed: 1))
        #expect(warm.report == RenderReport(lines: lines, synthesized: 0, fromCache: lines, cacheWriteFailures: 0))
    }

    @Test func cacheMissesThenHitsWithTheSameAudio() throws {
        let scratch = try Scratch("voice-cache")
        var configuration = Self.cachedConfiguration(scratch)
        let cold = try PirateVoice.load(configuration, random: SplitMix64(seed: 1))
        // Composed lines (clues, rivals, the finale) are made when said, not at start-up.
        let lines = cold.pack.allLines.count { !$0.event.isComposed }
        #expect(lines < cold.pack.allLines.count)
        #expect(cold.report == RenderReport(lines: lines, synthesized: lines, fromCache: 0, cacheWriteFailures: 0))
        let warm = try PirateVoice.load(configuration, random: SplitMix64(seed: 1))
        #expect(warm.report == RenderReport(lines: lines, synthesized: 0, fromCache: lines, cacheWriteFailures: 0))
        for event in LineEvent.allCases where !event.isComposed {
            #expect(cold.line(event, index: 2).audio == warm.line(event, index: 2).audio)
            #expect(!warm.line(event, index: 0).audio.samples.isEmpty)
        }
        // Same seed, same choices; never the same line twice in a row.
        var last = -1
        for _ in 0..<20 {
            let a = cold.line(.treasureFound)
            let b = warm.line(.treasureFound)
            #expect(a.index == b.index && a.text == b.text)
            #expect(a.index != last)
            last = a.index
        }

        // Other parameters are other keys.
        configuration.parameters.rate = 150
        let slower = try PirateVoice.load(configuration)
        #expect(slower.report.synthesized == lines)
    }

    /// A cache of the Japanese pack's lines in `scratch`: the configuration and its line files.
    static func cachedLines(in scratch: Scratch) throws -> (VoiceConfiguration, files: [String]) {
        let configuration = VoiceConfiguration(voicesDirectory: Repository.voicesDirectory, language: "ja", cacheDirectory: scratch.path)
        _ = try PirateVoice.load(configuration)
        return (configuration, try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasSuffix(".pcm") }.sorted())
    }

    @Test func aDamagedCacheFileIsAMissAndIsRewritten() throws {
        let scratch = try Scratch("voice-damaged")
        let (configuration, files) = try Self.cachedLines(in: scratch)
        let victim = try #require(files.first)
        _ = FileManager.default.createFile(atPath: "\(scratch.path)/\(victim)", contents: Data("PHPCM1\ngarbage".utf8))
        let again = try PirateVoice.load(configuration)
        #expect(again.report.synthesized == 1)
        #expect(again.report.fromCache == files.count - 1)
        let third = try PirateVoice.load(configuration)
        #expect(third.report.fromCache == files.count)
    }

    /// A file that names its key but gives a rate no engine renders at (rate 0 trapped when
    /// the line was played: its duration divides by the rate) is a miss.
    @Test func aCacheFileWithAnImpossibleRateIsAMiss() throws {
        let scratch = try Scratch("voice-rate")
        let (configuration, files) = try Self.cachedLines(in: scratch)
        let victim = "\(scratch.path)/\(try #require(files.first))"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: victim)))
        // The layout: "PHPCM1\n", the key's length and the key, then the rate (u32, little-endian).
        let keyLength = Int(bytes[7]) | Int(bytes[8]) << 8 | Int(bytes[9]) << 16 | Int(bytes[10]) << 24
        let rateAt = 11 + keyLength
        #expect(Int(bytes[rateAt]) | Int(bytes[rateAt + 1]) << 8 == 22050)
        for rate in [0, 7, 1_000_000] {
            for i in 0..<4 { bytes[rateAt + i] = UInt8((rate >> (8 * i)) & 0xFF) }
            try Data(bytes).write(to: URL(fileURLWithPath: victim))
            let again = try PirateVoice.load(configuration)
            #expect(again.report.synthesized == 1, "rate \(rate)")
            #expect(again.report.fromCache == files.count - 1)
        }
    }

    @Test func anUnwritableCacheStillRendersInMemory() throws {
        var configuration = VoiceConfiguration(voicesDirectory: Repository.voicesDirectory, language: "ja")
        configuration.cacheDirectory = "/proc/pirate-hunter-cannot-be-here"
        let voice = try PirateVoice.load(configuration)
        #expect(voice.report.synthesized == voice.report.lines)
        #expect(voice.report.cacheWriteFailures == voice.report.lines)
        #expect(!voice.line(.startup).audio.samples.isEmpty)
    }

    @Test func untrustedTextIsSpokenSanitized() throws {
        let voice = try PirateVoice.load(VoiceConfiguration(voicesDirectory: Repository.voicesDirectory, language: "ja"))
        let pcm = try voice.speak(untrusted: "\u{1}\u{1}<<<>>>\u{7}")
        #expect(pcm.samples.isEmpty)
        let reward = try voice.speak(untrusted: "たからもの", maxCharacters: 10)
        #expect(reward.durationSeconds > 0.3)
    }

    /// The reward read out: slower than a child's pace, as long whether the caller waits or
    /// gets it back on the engine's thread. (The pirate voice speaks at 76 % of the rate and
    /// eSpeak NG goes no slower than 80, so 0.7 of the child's pace is only ~12 % slower.)
    @Test func aRewardIsReadSlowlyAndTheSameWithoutWaiting() throws {
        let voice = try PirateVoice.load(VoiceConfiguration(voicesDirectory: Repository.voicesDirectory))
        let normal = try voice.speak(untrusted: "ARRR GOLD twenty twenty six")
        let slow = try voice.speak(untrusted: "ARRR GOLD twenty twenty six", rateFactor: 0.7)
        #expect(slow.durationSeconds > normal.durationSeconds * 1.08, "\(slow.durationSeconds) s vs \(normal.durationSeconds) s")
        let got = Mutex<Result<PCMBuffer, VoiceError>?>(nil)
        let done = WakeSignal()
        voice.speak(untrusted: "ARRR GOLD twenty twenty six", rateFactor: 0.7) { result in
            got.withLock { $0 = result }
            done.post()
        }
        #expect(done.wait(timeout: .seconds(30)))
        let asynchronous = try #require(got.withLock { $0 })
        // eSpeak NG keeps some state between calls (two synchronous calls differ in their
        // first samples too), so the same speech is judged by its length.
        let asyncPCM = try asynchronous.get()
        #expect(asyncPCM.sampleRate == slow.sampleRate)
        #expect(abs(asyncPCM.durationSeconds - slow.durationSeconds) < 0.05 * slow.durationSeconds,
                "\(asyncPCM.durationSeconds) s vs \(slow.durationSeconds) s")
    }

    @Test func theArrrLoadsForTheMixer() throws {
        let arrr = try PirateVoice.loadArrr(voicesDirectory: Repository.voicesDirectory)
        #expect(arrr.sampleRate == 22050 && arrr.channels == 1)
        #expect(arrr.durationSeconds > 0.2 && arrr.durationSeconds < 2)
        #expect(throws: VoiceError.self) { try PirateVoice.loadArrr(voicesDirectory: "/nonexistent") }
    }
}

extension String {
    fileprivate var withRoot: String { "/" + self }
}
