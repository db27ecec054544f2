import Audio
import POSIX

#if canImport(Glibc)
import Glibc
#endif

/// What identifies a rendered line: the text, the voice (a voice file by its contents, so an
/// edit re-renders), the parameters and eSpeak NG's version.
public struct RenderKey: Hashable, Sendable {
    public let text: String
    public let voice: String
    public let parameters: SpeechParameters
    public let engineVersion: String

    public init(text: String, voice: String, parameters: SpeechParameters, engineVersion: String) {
        self.text = text
        self.voice = voice
        self.parameters = parameters
        self.engineVersion = engineVersion
    }

    /// The full key as stored in a cache file (checked on load, so a hash collision is a miss).
    var canonical: String {
        "espeak-ng \(engineVersion)\u{1}\(voice)\u{1}\(parameters)\u{1}\(text)"
    }

    /// File name in the cache directory: two independent 64-bit FNV-1a hashes.
    var fileName: String { baseName + ".pcm" }

    /// The two hashes, without an extension.
    var baseName: String {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325
        var b: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in canonical.utf8 {
            a = (a ^ UInt64(byte)) &* 0x100_0000_01b3
            b = (b &* 0x100_0000_01b3) ^ UInt64(byte)
        }
        func hex(_ v: UInt64) -> String {
            let s = String(v, radix: 16)
            return String(repeating: "0", count: 16 - s.count) + s
        }
        return hex(a) + hex(b)
    }
}

/// Rendered lines on disk, one file per line, in a directory given by configuration.
/// A file that does not match its key (or is damaged) is a miss and is rewritten. Files are
/// written with `SafeFile` (hidden random temporary, O_EXCL | O_NOFOLLOW, fsync, rename).
public struct LineCache: Sendable {
    public let directory: String
    private static let magic = Array("PHPCM1\n".utf8)
    /// The sample rates a cached line may have (eSpeak NG renders at 22050 Hz).
    static let plausibleRates = 8000 ... 192_000

    public init(directory: String) { self.directory = directory }

    /// Creates the directory (and its parents) if needed, and checks it: throws when it cannot
    /// be used at all, saying why ("Not a directory"; a directory another user owns, other
    /// than root, or anyone may write to, is refused); `.readOnly` with the reason when it
    /// can be read but not written ("Read-only file system").
    /// What `prepare` found in a directory it can use.
    public enum Readiness: Sendable, Equatable {
        case ready
        /// Lines can be read from it but not stored there: why.
        case readOnly(String)
    }

    @discardableResult
    public func prepare() throws(VoiceError) -> Readiness {
        var prefix = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            prefix += "/" + component
            do {
                _ = try retryingOnInterrupt("mkdir") { mkdir(prefix, 0o755) }
            } catch {
                if error.errno != EEXIST { throw failure("cannot create cache directory", error.errno) }
            }
        }
        var info = stat()
        do {
            _ = try retryingOnInterrupt("stat") { stat(directory, &info) }
        } catch {
            throw failure("cannot use cache directory", error.errno)
        }
        guard info.st_mode & mode_t(S_IFMT) == mode_t(S_IFDIR) else { throw failure("cannot use cache directory", ENOTDIR) }
        // Cache file names are predictable (hashes of the lines): anyone else who can write
        // here could plant a poisoned line under one. Such a directory is not used.
        if info.st_uid != geteuid(), info.st_uid != 0 {
            throw VoiceError("\(directory): cache directory belongs to uid \(info.st_uid), not \(geteuid()): not used")
        }
        if info.st_mode & 0o002 != 0 {
            throw VoiceError(
                "\(directory): cache directory is writable by everyone (mode \(String(info.st_mode & 0o7777, radix: 8))): not used")
        }
        do {
            _ = try retryingOnInterrupt("access") { access(directory, W_OK) }
        } catch {
            return .readOnly(failure("cannot write to cache directory", error.errno).message)
        }
        return .ready
    }

    private func failure(_ what: String, _ code: Int32) -> VoiceError {
        VoiceError("\(directory): \(what): \(SystemError.message(errno: code))")
    }

    /// A cached line; nil: a miss. A rate no engine gives (a damaged or foreign file that
    /// still names the key) is a miss too: a line at rate 0 trapped when it was played (its
    /// duration divides by the rate).
    public func load(_ key: RenderKey) -> PCMBuffer? {
        guard let line = load(key, file: key.fileName), Self.plausibleRates.contains(line.sampleRate) else { return nil }
        return line
    }

    /// A voice's rate at the child's pace (`SpeechPace`), kept as `<hashes>.pace` beside the
    /// lines: measuring it takes longer than reading every line from the cache. nil: a miss.
    public func loadRate(_ key: RenderKey) -> Int? {
        guard let stored = load(key, file: key.baseName + ".pace"), stored.samples.count == 1,
            let rate = stored.samples.first, (80...450).contains(rate)
        else { return nil }
        return Int(rate)
    }

    public func storeRate(_ rate: Int, for key: RenderKey) throws(VoiceError) {
        try store(PCMBuffer(sampleRate: 1, samples: [Int16(clamping: rate)]), for: key, file: key.baseName + ".pace")
    }

    private func load(_ key: RenderKey, file: String) -> PCMBuffer? {
        // Never through a planted symlink, never blocked on a planted FIFO.
        guard let bytes = try? SafeFile.read("\(directory)/\(file)", followSymlinks: false) else {
            return nil
        }
        let keyBytes = Array(key.canonical.utf8)
        var offset = Self.magic.count
        func u32() -> Int? {
            guard offset + 4 <= bytes.count else { return nil }
            defer { offset += 4 }
            return Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
        }
        guard bytes.count >= offset, Array(bytes[0..<offset]) == Self.magic,
            let keyLength = u32(), keyLength == keyBytes.count, offset + keyLength <= bytes.count,
            Array(bytes[offset..<offset + keyLength]) == keyBytes
        else { return nil }
        offset += keyLength
        guard let rate = u32(), let count = u32(), offset + count * 2 == bytes.count else { return nil }
        var samples = [Int16](repeating: 0, count: count)
        samples.withUnsafeMutableBytes { raw in
            bytes.withUnsafeBytes { source in
                raw.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<offset + count * 2]))
            }
        }
        // Files are little-endian, as is every machine this runs on; swap if not.
        if 1.littleEndian != 1 { samples = samples.map { Int16(littleEndian: $0) } }
        return PCMBuffer(sampleRate: rate, channels: 1, samples: samples)
    }

    public func store(_ buffer: PCMBuffer, for key: RenderKey) throws(VoiceError) {
        try store(buffer, for: key, file: key.fileName)
    }

    private func store(_ buffer: PCMBuffer, for key: RenderKey, file: String) throws(VoiceError) {
        var bytes = Self.magic
        func put32(_ v: Int) { for s in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8((v >> s) & 0xFF)) } }
        let keyBytes = Array(key.canonical.utf8)
        put32(keyBytes.count)
        bytes.append(contentsOf: keyBytes)
        put32(buffer.sampleRate)
        put32(buffer.samples.count)
        buffer.samples.withUnsafeBytes { bytes.append(contentsOf: $0) }
        // Whole or not at all, never through a planted symlink or over what is not a file.
        do {
            try SafeFile.write(bytes, to: "\(directory)/\(file)")
        } catch {
            throw VoiceError("\(error.path): cannot write cache file: \(error.reason)")
        }
    }
}
