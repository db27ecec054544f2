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

    /// Loads the pack and the voice and renders every line; throws naming the file, voice or
    /// event at fault. `random` picks lines (inject a seeded one in tests).
    public static func load(
        _ configuration: VoiceConfiguration,
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()
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
                if let cache, cacheReadable, let hit = cache.load(key) {
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
                buffers.append(stored ? .cached(key, frames: audio.frameCount) : .inMemory(audio))
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
        return PirateVoice(
            pack: pack, parameters: parameters, synthesizer: synthesizer, report: report,
            rendered: rendered, cache: cacheReadable ? cache : nil, random: random)
    }

    private init(
        pack: LinePack, parameters: SpeechParameters, synthesizer: EspeakSynthesizer, report: RenderReport,
        rendered: [LineEvent: [RenderedLine]], cache: LineCache?, random: any RandomNumberGenerator & Sendable
    ) {
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
            guard let data = try? Data(contentsOf: URL(fileURLWithPath: path)) else {
                throw VoiceError("\(path): cannot read voice file", kind: .missingFile)
            }
            return "file:" + String(decoding: data, as: UTF8.self)
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

    /// Speaks text that did not come from our files: sanitized, length-limited, plain text.
    /// `rateFactor` below 1 speaks slower than the voice's lines (a reward code read out to
    /// a child), never below 80 words per minute.
    /// This synthesizes now (a few milliseconds a second of speech): call it off the event loop.
    public func speak(untrusted text: String, maxCharacters: Int = SpeechText.defaultLimit, rateFactor: Double = 1) throws(VoiceError) -> PCMBuffer {
        let clean = SpeechText.sanitize(text, maxCharacters: maxCharacters)
        guard !clean.isEmpty else { return PCMBuffer(sampleRate: synthesizer.sampleRate) }
        return try synthesizer.synthesize(clean, voice: pack.voice, parameters: slowed(rateFactor))
    }

    /// As `speak(untrusted:)`, without blocking the caller: `completion` runs on the engine's
    /// thread (the event loop passes it on through a mailbox).
    public func speak(
        untrusted text: String, maxCharacters: Int = SpeechText.defaultLimit, rateFactor: Double = 1,
        completion: @escaping @Sendable (Result<PCMBuffer, VoiceError>) -> Void
    ) {
        let clean = SpeechText.sanitize(text, maxCharacters: maxCharacters)
        guard !clean.isEmpty else {
            completion(.success(PCMBuffer(sampleRate: synthesizer.sampleRate)))
            return
        }
        synthesizer.synthesize(clean, voice: pack.voice, parameters: slowed(rateFactor), completion: completion)
    }

    /// The voice's parameters at `rateFactor` of its rate (never faster, never below 80 wpm).
    private func slowed(_ rateFactor: Double) -> SpeechParameters {
        var p = parameters
        p.rate = max(80, min(p.rate, Int((Double(p.rate) * rateFactor).rounded())))
        return p
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
