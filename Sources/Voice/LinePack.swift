import Audio
import FoundationEssentials
import Hunt

/// One language's lines: `voices/lines/<language>.json`.
///
///     { "language": "en-pirate", "voice": { "file": "pirate" },
///       "events": { "region-entered": ["...", "..."], ... } }
///
/// `voice.file` is a voice file next to the `lines` directory; `voice.name` is one of eSpeak NG's.
public struct LinePack: Sendable, Equatable {
    public let language: String
    public let voice: VoiceChoice
    public let lines: [LineEvent: [String]]
    /// Where it was read from (named in errors).
    public let path: String

    public func lines(for event: LineEvent) -> [String] { lines[event] ?? [] }

    /// Every line of the pack, in a fixed order.
    public var allLines: [(event: LineEvent, index: Int, text: String)] {
        LineEvent.allCases.flatMap { event in
            lines(for: event).enumerated().map { (event, $0.offset, $0.element) }
        }
    }

    private struct File: Decodable {
        struct Voice: Decodable {
            var file: String?
            var name: String?
        }
        var language: String
        var voice: Voice
        var events: [String: [String]]
    }

    /// The pack of `language` in `voicesDirectory/lines/`.
    public static func load(language: String, voicesDirectory: String, minimumLines: Int = 1) throws(VoiceError) -> LinePack {
        guard !language.isEmpty, language.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw VoiceError("language '\(language)' is not a line-pack name (letters, digits, '-')")
        }
        return try load(path: "\(voicesDirectory)/lines/\(language).json", minimumLines: minimumLines)
    }

    /// The largest line pack read (a pack is a few kB of text).
    public static let maximumPackBytes = 4 << 20

    /// Reads and checks a pack: malformed JSON, an unknown or missing event, an event without
    /// `minimumLines` non-empty lines, or a missing voice file are refused, naming the file and event.
    public static func load(path: String, minimumLines: Int = 1) throws(VoiceError) -> LinePack {
        let bytes: [UInt8]
        do {
            bytes = try SafeFile.read(path, limit: maximumPackBytes)
        } catch {
            throw .unreadable("line pack", error)
        }
        return try parse(Data(bytes), path: path, minimumLines: minimumLines)
    }

    public static func parse(_ data: Data, path: String, minimumLines: Int = 1) throws(VoiceError) -> LinePack {
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch let error as DecodingError {
            throw VoiceError("\(path): not a valid line pack (\(describe(error)))")
        } catch {
            throw VoiceError("\(path): not a valid line pack (\(error))")
        }
        var lines: [LineEvent: [String]] = [:]
        for (key, texts) in file.events {
            guard let event = LineEvent(rawValue: key) else {
                throw VoiceError("\(path): unknown event '\(key)'")
            }
            let kept = texts.map(trimmed)
            if let blank = kept.firstIndex(where: { $0.isEmpty }) {
                throw VoiceError("\(path): event '\(key)' line \(blank + 1) is empty")
            }
            lines[event] = kept
        }
        for event in LineEvent.allCases {
            guard let texts = lines[event] else {
                throw VoiceError("\(path): event '\(event.rawValue)' is missing")
            }
            // A grown-up's notice is one plain sentence; the child's lines vary.
            let needed = event.isNotice ? 1 : minimumLines
            if texts.count < needed {
                throw VoiceError("\(path): event '\(event.rawValue)' has \(texts.count) line(s), needs at least \(needed)")
            }
        }
        let voice: VoiceChoice
        switch (file.voice.file, file.voice.name) {
        case (let name?, nil):
            guard !name.contains("/"), !name.isEmpty else {
                throw VoiceError("\(path): voice file '\(name)' must be a plain name in the voices directory")
            }
            let directory = parentDirectory(of: parentDirectory(of: path))
            let voicePath = "\(directory)/\(name)"
            guard FileManager.default.fileExists(atPath: voicePath) else {
                throw VoiceError("\(path): voice file '\(voicePath)' does not exist", kind: .missingFile)
            }
            voice = .file(voicePath)
        case (nil, let name?):
            voice = .name(name)
        default:
            throw VoiceError("\(path): 'voice' needs exactly one of 'file' or 'name'")
        }
        return LinePack(language: file.language, voice: voice, lines: lines, path: path)
    }

    static func trimmed(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }

    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }

    private static func describe(_ error: DecodingError) -> String {
        func where_(_ path: [any CodingKey]) -> String {
            path.isEmpty ? "top level" : path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "malformed JSON" : "bad value at \(where_(context.codingPath))"
        case .keyNotFound(let key, let context):
            return "missing '\(key.stringValue)' at \(where_(context.codingPath))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "wrong type at \(where_(context.codingPath))"
        @unknown default:
            return "unreadable"
        }
    }
}

/// Chooses a line of an event, never the one chosen last time for that event (when there
/// are two or more), with an injectable random source.
public struct LinePicker: Sendable {
    private var last: [LineEvent: Int] = [:]

    public init() {}

    /// Index of the line to speak among `count` lines of `event`.
    public mutating func pick<R: RandomNumberGenerator>(_ event: LineEvent, count: Int, using random: inout R) -> Int {
        guard count > 1 else { return 0 }
        var index: Int
        if let previous = last[event], previous < count {
            index = Int.random(in: 0..<(count - 1), using: &random)
            if index >= previous { index += 1 }
        } else {
            index = Int.random(in: 0..<count, using: &random)
        }
        last[event] = index
        return index
    }
}
