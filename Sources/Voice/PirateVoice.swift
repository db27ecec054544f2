import Audio
import Hunt
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How the voice is set up (all from configuration).
public struct VoiceConfiguration: Sendable {
    /// The directory with the voice files, `lines/` and `arrr.wav`.
    public var voicesDirectory: String
    /// Line pack name: `en-family` (the default), `en-pirate` (saltier) or `ja`.
    public var language: String = VoiceConfiguration.defaultLanguage
    public var parameters = SpeechParameters()
    /// Where rendered lines are kept between runs (nil: render every start).
    public var cacheDirectory: String?
    /// Fewest lines an event may have.
    public var minimumLines = 1

    /// The pack a hunt speaks unless told otherwise: pirate-flavoured, kind, no rum.
    public static let defaultLanguage = "en-family"

    public init(voicesDirectory: String, language: String = VoiceConfiguration.defaultLanguage, cacheDirectory: String? = nil) {
        self.voicesDirectory = voicesDirectory
        self.language = language
        self.cacheDirectory = cacheDirectory
    }
}

/// How start-up went: how many lines were synthesized and how many came from the cache.
public struct RenderReport: Sendable, Equatable {
    public var lines = 0
    public var synthesized = 0
    public var fromCache = 0
    /// Cache files that could not be written (the lines are still in memory).
    public var cacheWriteFailures = 0
    /// What went wrong with the line cache, one line per cause, each with its reason
    /// ("/var/cache/pirate-hunter: cannot write to cache directory: Read-only file system;
    /// 57 lines kept in memory, synthesized at each start"): log each once.
    public var warnings: [String] = []

    public init(lines: Int = 0, synthesized: Int = 0, fromCache: Int = 0, cacheWriteFailures: Int = 0) {
        self.lines = lines
        self.synthesized = synthesized
        self.fromCache = fromCache
        self.cacheWriteFailures = cacheWriteFailures
    }
}

/// A line ready to play.
public struct SpokenLine: Sendable {
    public let event: LineEvent
    public let index: Int
    public let text: String
    public let audio: PCMBuffer

    public init(event: LineEvent, index: Int, text: String, audio: PCMBuffer) {
        self.event = event
        self.index = index
        self.text = text
        self.audio = audio
    }
}

/// The hunter's voice: a line pack with every line pre-rendered to PCM at start-up (from the
/// on-disk cache when it can), so speaking a line never waits for synthesis.
public final class PirateVoice: Sendable {
    public let pack: LinePack
    public let parameters: SpeechParameters
    public let synthesizer: EspeakSynthesizer
    public let report: RenderReport
    /// Every line, rendered: kept in the on-disk cache when there is one (read back when
    /// spoken, well under a millisecond from the page cache), in memory otherwise. A full
    /// English pack is about 9 MB of PCM: too much to hold on a Pi Zero.
    private let rendered: [LineEvent: [RenderedLine]]
    private let cache: LineCache?

    enum RenderedLine: Sendable {
        case inMemory(PCMBuffer)
        case cached(RenderKey, frames: Int)
    }
    private struct Choice {
        var picker = LinePicker()
        var random: any RandomNumberGenerator & Sendable
    }
    private let choice: Mutex<Choice>
    /// The script the pack's lines are written in (Latin when it cannot tell).
    public let script: Script
    /// Who speaks the trail's words, by the script they are written in: the pack's voice for
    /// its own script, `foreignVoices`' for the others (when eSpeak NG has them), each at the
    /// child's pace (`SpeechPace`).
    public let trailVoices: [Script: TrailVoice]

    /// A voice and its parameters at the child's pace.
    public struct TrailVoice: Sendable, Equatable {
        public let voice: VoiceChoice
        public let parameters: SpeechParameters
    }

    /// eSpeak NG's voices for words written in another script than the pack's.
    public static let foreignVoices: [Script: VoiceChoice] = [.latin: .name("en"), .japanese: .name("ja")]

    /// Calibrated rates, per voice, script and parameters: measured once per process.
    private static let calibrations = Mutex<[String: Int]>([:])

    /// Loads the pack and the voice and renders every line; throws naming the file, voice or
    /// event at fault. `random` picks lines (inject a seeded one in tests). `fresh`: every
    /// line rendered and the pace measured now, whatever the cache holds, and played from
    /// memory: eSpeak NG's output depends on what it rendered before in the process (its
    /// pitch flutter's phase, a static in wavegen.c, runs on across calls), so only the same
    /// start-up every run makes the later lines the same every run (virtual time).
    public static func load(
        _ configuration: VoiceConfiguration,
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
        fresh: Bool = false
    ) throws(VoiceError) -> PirateVoice {
        let pack = try LinePack.load(
            language: configuration.language, voicesDirectory: configuration.voicesDirectory,
            minimumLines: configuration.minimumLines)
        let synthesizer = try EspeakSynthesizer.shared()
        let parameters = try configuration.parameters.validated()
        // Fails here, at start-up, when the voice does not take.
        _ = try synthesizer.currentVoiceIdentifier(after: pack.voice)
        let identity = try voiceIdentity(pack.voice)
        let cache = configuration.cacheDirectory.map(LineCache.init(directory:))
        var cacheReadable = true
        var cacheUsable = true  // writable
        var cacheProblem: String?
        var storeProblem: String?
        if let cache {
            do {
                if case .readOnly(let why) = try cache.prepare() {
                    cacheUsable = false
                    cacheProblem = why
                }
            } catch {
                cacheReadable = false
                cacheUsable = false
                cacheProblem = error.message
            }
        }
        var report = RenderReport()
        var rendered: [LineEvent: [RenderedLine]] = [:]
        // Composed lines (a clue, a rival's number) are made when they are said.
        for event in LineEvent.allCases where !event.isComposed {
            var buffers: [RenderedLine] = []
            for text in pack.lines(for: event) {
                let key = RenderKey(
                    text: text, voice: identity, parameters: parameters, engineVersion: synthesizer.version)
                report.lines += 1
                if let cache, cacheReadable, !fresh, let hit = cache.load(key) {
                    buffers.append(.cached(key, frames: hit.frameCount))
                    report.fromCache += 1
                    continue
                }
                let audio = try synthesizer.synthesize(text, voice: pack.voice, parameters: parameters)
                if audio.samples.isEmpty {
                    throw VoiceError("\(pack.path): event '\(event.rawValue)' line \"\(text)\" gives no sound")
                }
                report.synthesized += 1
                var stored = false
                if let cache, cacheUsable {
                    do {
                        try cache.store(audio, for: key)
                        stored = true
                    } catch {
                        report.cacheWriteFailures += 1
                        if storeProblem == nil { storeProblem = error.message }
                    }
                } else if cache != nil {
                    report.cacheWriteFailures += 1
                }
                buffers.append(stored && !fresh ? .cached(key, frames: audio.frameCount) : .inMemory(audio))
            }
            rendered[event] = buffers
        }
        if let cacheProblem {
            report.warnings.append(
                "line cache \(cacheProblem); \(report.synthesized) of \(report.lines) lines synthesized and kept in memory, at each start")
        } else if let storeProblem {
            report.warnings.append(
                "line cache: \(report.cacheWriteFailures) of \(report.synthesized) new lines not stored (first: \(storeProblem)); they are kept in memory")
        }
        let script = Script.dominant(in: pack.allLines.map(\.text).joined(separator: " ")) ?? .latin
        var trailVoices: [Script: TrailVoice] = [:]
        trailVoices[script] = TrailVoice(
            voice: pack.voice,
            parameters: try paced(
                pack.voice, identity: identity, script: script, parameters: parameters, synthesizer: synthesizer,
                cache: cacheReadable ? cache : nil, writable: cacheUsable, fresh: fresh))
        for (other, voice) in foreignVoices where other != script {
            // A voice eSpeak NG lacks (no Japanese data installed): the pack's voice says it.
            if let paced = try? paced(
                voice, identity: "name:\(voice)", script: other, parameters: parameters, synthesizer: synthesizer,
                cache: cacheReadable ? cache : nil, writable: cacheUsable, fresh: fresh) {
                trailVoices[other] = TrailVoice(voice: voice, parameters: paced)
            }
        }
        return PirateVoice(
            pack: pack, parameters: parameters, synthesizer: synthesizer, report: report,
            rendered: rendered, cache: cacheReadable ? cache : nil, random: random,
            script: script, trailVoices: trailVoices)
    }

    /// `parameters` at the child's pace for `voice` speaking `script`: measured once per
    /// process, and kept in the line cache when there is one (measuring takes ~0.3 s a voice
    /// here, far longer than reading every line from the cache).
    private static func paced(
        _ voice: VoiceChoice, identity: String, script: Script, parameters: SpeechParameters, synthesizer: EspeakSynthesizer,
        cache: LineCache?, writable: Bool, fresh: Bool
    ) throws(VoiceError) -> SpeechParameters {
        // The key names what the measure depends on: target, reference sentences, voice,
        // parameters, engine.
        let what = "\u{2}pace \(script.rawValue) \(SpeechPace.target(for: script)) " + SpeechPace.reference(for: script).joined(separator: " ")
        let key = RenderKey(text: what, voice: identity, parameters: parameters, engineVersion: synthesizer.version)
        var paced = parameters
        let stored = fresh ? nil : cache?.loadRate(key)
        if !fresh, let known = stored ?? calibrations.withLock({ $0[key.canonical] }) {
            paced.rate = known
        } else {
            paced.rate = try SpeechPace.calibratedRate(voice, script: script, parameters: parameters, synthesizer: synthesizer)
        }
        // An unwritable cache costs the measure at each start, as it costs the lines.
        if let cache, writable, stored == nil { try? cache.storeRate(paced.rate, for: key) }
        let rate = paced.rate
        calibrations.withLock { $0[key.canonical] = rate }
        return paced
    }

    private init(
        pack: LinePack, parameters: SpeechParameters, synthesizer: EspeakSynthesizer, report: RenderReport,
        rendered: [LineEvent: [RenderedLine]], cache: LineCache?, random: any RandomNumberGenerator & Sendable,
        script: Script, trailVoices: [Script: TrailVoice]
    ) {
        self.script = script
        self.trailVoices = trailVoices
        self.cache = cache
        self.pack = pack
        self.parameters = parameters
        self.synthesizer = synthesizer
        self.report = report
        self.rendered = rendered
        choice = Mutex(Choice(random: random))
    }

    /// The voice as it goes into a cache key: a voice file by its contents.
    static func voiceIdentity(_ voice: VoiceChoice) throws(VoiceError) -> String {
        switch voice {
        case .name(let name):
            return "name:" + name
        case .file(let path):
            let bytes: [UInt8]
            do {
                bytes = try SafeFile.read(path, limit: 1 << 20)
            } catch {
                throw .unreadable("voice file", error)
            }
            return "file:" + String(decoding: bytes, as: UTF8.self)
        }
    }

    /// A pre-rendered line of `event`, never the same one twice in a row.
    public func line(_ event: LineEvent) -> SpokenLine {
        let texts = pack.lines(for: event)
        let index = choice.withLock { state in
            state.picker.pick(event, count: texts.count, using: &state.random)
        }
        return line(event, index: index)
    }

    /// Line `index` of `event` (clamped to the lines there are).
    public func line(_ event: LineEvent, index: Int) -> SpokenLine {
        let texts = pack.lines(for: event)
        let audios = rendered[event] ?? []
        let i = min(max(index, 0), max(texts.count - 1, 0))
        let text = texts.isEmpty ? "" : texts[i]
        let audio: PCMBuffer
        switch i < audios.count ? audios[i] : nil {
        case let .inMemory(buffer):
            audio = buffer
        case let .cached(key, _):
            // Gone from the cache since start-up (someone cleaned it): render it again.
            audio = cache?.load(key) ?? (try? synthesizer.synthesize(text, voice: pack.voice, parameters: parameters))
                ?? PCMBuffer(sampleRate: synthesizer.sampleRate)
        case nil:
            audio = PCMBuffer(sampleRate: synthesizer.sampleRate)
        }
        return SpokenLine(event: event, index: i, text: text, audio: audio)
    }

    /// Who says `text` of the trail: the voice for the script it is written in (the pack's
    /// own for its script, digits and anything without letters), at the child's pace.
    public func trailVoice(for text: String) -> TrailVoice {
        let own = trailVoices[script] ?? TrailVoice(voice: pack.voice, parameters: parameters)
        guard let written = Script.dominant(in: text), written != script else { return own }
        return trailVoices[written] ?? own
    }

    /// What a composed line is made of: each part sanitized and cut to `maxCharacters`, with
    /// its voice and parameters. The pack's part in the pack's voice at the child's pace; the
    /// parent's in the voice for its script, at the child's pace times `rateFactor`.
    func plan(_ line: ComposedLine, maxCharacters: Int, rateFactor: Double) -> [(text: String, voice: TrailVoice)] {
        var parts: [(text: String, voice: TrailVoice)] = []
        if let pack = line.pack.map({ SpeechText.sanitize($0, maxCharacters: maxCharacters) }), !pack.isEmpty {
            parts.append((pack, trailVoices[script] ?? TrailVoice(voice: self.pack.voice, parameters: parameters)))
        }
        if let parent = line.parent.map({ SpeechText.sanitize($0, maxCharacters: maxCharacters) }), !parent.isEmpty {
            let voice = trailVoice(for: parent)
            parts.append((parent, TrailVoice(voice: voice.voice, parameters: Self.slowed(voice.parameters, rateFactor))))
        }
        return parts
    }

    /// The pause between the pack's lead-in and the parent's words (s).
    public static let partPause = 0.35

    /// Speaks a trail line: the pack's part, a breath, the parent's part (`plan`).
    /// This synthesizes now (a few milliseconds a second of speech): call it off the event loop.
    public func speak(_ line: ComposedLine, maxCharacters: Int = SpeechText.defaultLimit, rateFactor: Double = 1) throws(VoiceError) -> PCMBuffer {
        var audio = PCMBuffer(sampleRate: synthesizer.sampleRate)
        for (i, part) in plan(line, maxCharacters: maxCharacters, rateFactor: rateFactor).enumerated() {
            let spoken = try synthesizer.synthesize(part.text, voice: part.voice.voice, parameters: part.voice.parameters)
            Self.append(spoken, to: &audio, pause: i > 0)
        }
        return audio
    }

    /// As `speak(_:)`, without blocking the caller: `completion` runs on the engine's thread
    /// (the event loop passes it on through a mailbox). A part that fails ends the line with
    /// that error.
    public func speak(
        _ line: ComposedLine, maxCharacters: Int = SpeechText.defaultLimit, rateFactor: Double = 1,
        stale: @escaping @Sendable () -> Bool = { false },
        completion: @escaping @Sendable (Result<PCMBuffer, VoiceError>) -> Void
    ) {
        let parts = plan(line, maxCharacters: maxCharacters, rateFactor: rateFactor)
        let synthesizer = self.synthesizer
        // Each part queues the next from the engine's thread (never waiting there for it).
        @Sendable func next(_ index: Int, _ audio: PCMBuffer) {
            guard index < parts.count else { return completion(.success(audio)) }
            let part = parts[index]
            synthesizer.synthesize(part.text, voice: part.voice.voice, parameters: part.voice.parameters, stale: stale) { result in
                switch result {
                case .failure(let error):
                    completion(.failure(error))
                case .success(let spoken):
                    var audio = audio
                    Self.append(spoken, to: &audio, pause: index > 0)
                    next(index + 1, audio)
                }
            }
        }
        next(0, PCMBuffer(sampleRate: synthesizer.sampleRate))
    }

    /// Speaks text that did not come from our files (a reward, a parent's words): sanitized,
    /// length-limited, plain text, with the voice for its script at the child's pace.
    /// `rateFactor` below 1 speaks slower still (a reward read out to a child), never below
    /// 80 words per minute.
    /// This synthesizes now (a few milliseconds a second of speech): call it off the event loop.
    public func speak(untrusted text: String, maxCharacters: Int = SpeechText.defaultLimit, rateFactor: Double = 1) throws(VoiceError) -> PCMBuffer {
        try speak(ComposedLine(parent: text), maxCharacters: maxCharacters, rateFactor: rateFactor)
    }

    /// As `speak(untrusted:)`, without blocking the caller: `completion` runs on the engine's
    /// thread (the event loop passes it on through a mailbox).
    public func speak(
        untrusted text: String, maxCharacters: Int = SpeechText.defaultLimit, rateFactor: Double = 1,
        completion: @escaping @Sendable (Result<PCMBuffer, VoiceError>) -> Void
    ) {
        speak(ComposedLine(parent: text), maxCharacters: maxCharacters, rateFactor: rateFactor, completion: completion)
    }

    /// `parameters` at `rateFactor` of their rate (never faster, never below 80 wpm).
    static func slowed(_ parameters: SpeechParameters, _ rateFactor: Double) -> SpeechParameters {
        var p = parameters
        p.rate = max(80, min(p.rate, Int((Double(p.rate) * rateFactor).rounded())))
        return p
    }

    /// `spoken` after `audio`, with a breath between them when `pause`.
    static func append(_ spoken: PCMBuffer, to audio: inout PCMBuffer, pause: Bool) {
        guard spoken.channels == audio.channels, !spoken.samples.isEmpty else { return }
        if pause, !audio.samples.isEmpty {
            audio.samples += [Int16](repeating: 0, count: Int(Double(audio.sampleRate) * partPause) * audio.channels)
        }
        audio.samples += spoken.samples
    }

    /// `arrr.wav` of a voices directory, as the mixer wants it.
    public static func loadArrr(voicesDirectory: String, sampleRate: Int = 22050) throws(VoiceError) -> PCMBuffer {
        do {
            return try WAVFile.readForMixer(path: "\(voicesDirectory)/arrr.wav", rate: sampleRate)
        } catch {
            throw VoiceError(error.message, kind: error.message.contains(": cannot read") ? .missingFile : .badData)
        }
    }
}

/// Where the voices live.
public enum VoiceLocations {
    /// Where a distribution package installs them.
    public static let installed = "/usr/share/pirate-hunter/voices"

    /// `explicit` when given; else next to the executable (`<prefix>/bin/pirate-hunter` ->
    /// `<prefix>/share/pirate-hunter/voices`, as `make install` lays it out); else the
    /// package's directory; else `./voices`; else the repository's `voices/` next to this
    /// source file (running from a checkout).
    public static func resolve(
        explicit: String? = nil, executablePath: String? = currentExecutablePath(), sourceFile: String = thisFile
    ) -> String {
        if let explicit { return explicit }
        let manager = FileManager.default
        if let executablePath {
            let prefix = LinePack.parentDirectory(of: LinePack.parentDirectory(of: executablePath))
            let beside = prefix + "/share/pirate-hunter/voices"
            if manager.fileExists(atPath: beside + "/lines") { return beside }
        }
        if manager.fileExists(atPath: installed + "/lines") { return installed }
        if manager.fileExists(atPath: "voices/lines") { return "voices" }
        // Sources/Voice/PirateVoice.swift -> repository root
        let root = LinePack.parentDirectory(of: LinePack.parentDirectory(of: LinePack.parentDirectory(of: sourceFile)))
        return root + "/voices"
    }

    /// This source file's path. Not `#filePath` as a default argument: that is the caller's
    /// file, and the repository root was then found from wherever the caller sits.
    public static let thisFile = #filePath

    /// This process's executable, from /proc/self/exe.
    public static func currentExecutablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
