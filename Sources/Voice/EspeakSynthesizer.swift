import Audio
import CEspeakNG
import FoundationEssentials
import POSIX
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A voice or line-pack problem: one line naming the file, voice or event at fault.
public struct VoiceError: Error, CustomStringConvertible, Equatable {
    public enum Kind: Sendable, Equatable {
        /// A file that should be there cannot be read.
        case missingFile
        /// A file that is there may not be read by this user.
        case noPermission
        /// A file, voice or value is wrong.
        case badData
        /// eSpeak NG itself is not usable.
        case engine
    }
    public let message: String
    public let kind: Kind
    public init(_ message: String, kind: Kind = .badData) {
        self.message = message
        self.kind = kind
    }
    public var description: String { message }

    /// `what` at `path` could not be read: the reason in the message, and whose fault it is
    /// in the kind (permissions are not a missing file).
    static func unreadable(_ what: String, _ error: FileError) -> VoiceError {
        VoiceError("\(error.path): cannot read \(what): \(error.reason)",
                   kind: error.errno == EACCES || error.errno == EPERM ? .noPermission : .missingFile)
    }
}

/// Which eSpeak NG voice speaks.
public enum VoiceChoice: Hashable, Sendable, CustomStringConvertible {
    /// A voice file in eSpeak NG's format (our `voices/pirate`).
    case file(String)
    /// A voice shipped with eSpeak NG, by name (`en`, `ja`, `en+m3`).
    case name(String)

    public var description: String {
        switch self {
        case .file(let path): "file \(path)"
        case .name(let name): name
        }
    }
}

/// eSpeak NG's run-time parameters. The defaults are eSpeak's own.
public struct SpeechParameters: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Words per minute (80...450).
    public var rate: Int = 175
    /// Base pitch, 0...100 (50 = the voice's own).
    public var pitch: Int = 50
    /// Pitch range, 0...100 (50 = the voice's own).
    public var range: Int = 50
    /// Amplitude, 0...200.
    public var volume: Int = 100

    public init(rate: Int = 175, pitch: Int = 50, range: Int = 50, volume: Int = 100) {
        self.rate = rate
        self.pitch = pitch
        self.range = range
        self.volume = volume
    }

    public var description: String { "rate=\(rate) pitch=\(pitch) range=\(range) volume=\(volume)" }

    /// Refuses values eSpeak NG would clamp silently.
    public func validated() throws(VoiceError) -> SpeechParameters {
        if !(80...450).contains(rate) { throw VoiceError("speech rate \(rate) is outside 80...450 words per minute") }
        if !(0...100).contains(pitch) { throw VoiceError("speech pitch \(pitch) is outside 0...100") }
        if !(0...100).contains(range) { throw VoiceError("speech pitch range \(range) is outside 0...100") }
        if !(0...200).contains(volume) { throw VoiceError("speech volume \(volume) is outside 0...200") }
        return self
    }
}

/// eSpeak NG through its C library: synchronous synthesis with a callback, 22050 Hz mono S16.
/// eSpeak NG is not re-entrant and keeps process-wide state, so there is one engine per
/// process, owned by one thread; `synthesize` hands it a job and waits for the PCM.
public final class EspeakSynthesizer: Sendable {
    /// Samples per second eSpeak NG produces.
    public let sampleRate: Int
    /// eSpeak NG's version string (part of every cache key).
    public let version: String

    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let wake = WakeSignal()

    private static let instance = Mutex<Result<EspeakSynthesizer, VoiceError>?>(nil)

    /// The process's engine, started on first use. `dataPath` is eSpeak NG's data directory
    /// (nil: the library's built-in location).
    public static func shared(dataPath: String? = nil) throws(VoiceError) -> EspeakSynthesizer {
        let result = instance.withLock { slot -> Result<EspeakSynthesizer, VoiceError> in
            if let existing = slot { return existing }
            let made = EspeakSynthesizer.start(dataPath: dataPath)
            slot = made
            return made
        }
        return try result.get()
    }

    private init(sampleRate: Int, version: String) {
        self.sampleRate = sampleRate
        self.version = version
    }

    private final class Started: Sendable {
        let result = Mutex<Result<(Int, String), VoiceError>?>(nil)
        let done = WakeSignal()
    }

    private static func start(dataPath: String?) -> Result<EspeakSynthesizer, VoiceError> {
        // The owner thread must exist before the engine object does; the object reaches it
        // through this box once made.
        final class Link: Sendable { let engine = Mutex<EspeakSynthesizer?>(nil); let ready = WakeSignal() }
        let started = Started()
        let link = Link()
        _ = OwnerThread(name: "ph-espeak") {
            let rate = espeak_Initialize(
                AUDIO_OUTPUT_SYNCHRONOUS, 0, dataPath, Int32(espeakINITIALIZE_DONT_EXIT))
            if rate <= 0 {
                started.result.withLock {
                    $0 = .failure(VoiceError("eSpeak NG did not start (data path \(dataPath ?? "built-in")): is espeak-ng-data installed?", kind: .engine))
                }
                started.done.post()
                return
            }
            espeak_SetSynthCallback(synthCallback)
            let info = espeak_Info(nil).map { String(cString: $0) } ?? "unknown"
            started.result.withLock { $0 = .success((Int(rate), info)) }
            started.done.post()
            link.ready.wait()
            guard let engine = link.engine.withLock({ $0 }) else { return }
            engine.serve()
        }
        started.done.wait()
        let outcome = started.result.withLock { $0 } ?? .failure(VoiceError("eSpeak NG thread gave no answer"))
        switch outcome {
        case .failure(let error):
            return .failure(error)
        case .success(let (rate, version)):
            let engine = EspeakSynthesizer(sampleRate: rate, version: version)
            link.engine.withLock { $0 = engine }
            link.ready.post()
            return .success(engine)
        }
    }

    /// The owner thread's loop: runs jobs in order, forever (the engine lives as long as the process).
    private func serve() {
        while true {
            wake.wait()
            let batch = jobs.withLock { queue -> [@Sendable () -> Void] in
                defer { queue.removeAll(keepingCapacity: true) }
                return queue
            }
            for job in batch { job() }
        }
    }

    private final class Box<T: Sendable>: Sendable {
        let value = Mutex<T?>(nil)
        let done = WakeSignal()
    }

    /// Runs `body` on the owner thread and waits for its result.
    private func perform<T: Sendable>(_ body: @escaping @Sendable () -> Result<T, VoiceError>) -> Result<T, VoiceError> {
        let box = Box<Result<T, VoiceError>>()
        jobs.withLock { $0.append { box.value.withLock { $0 = body() }; box.done.post() } }
        wake.post()
        box.done.wait()
        return box.value.withLock { $0 } ?? .failure(VoiceError("eSpeak NG thread gave no answer"))
    }

    /// Speaks `text` (plain text: no SSML, no phoneme input) with `voice` into PCM.
    /// Text that did not come from our own files must go through `SpeechText.sanitize` first.
    public func synthesize(
        _ text: String, voice: VoiceChoice, parameters: SpeechParameters = SpeechParameters()
    ) throws(VoiceError) -> PCMBuffer {
        try perform { Self.render(text, voice: voice, parameters: parameters, rate: self.sampleRate) }.get()
    }

    /// One synthesis, on the owner thread.
    private static func render(_ text: String, voice: VoiceChoice, parameters: SpeechParameters, rate: Int) -> Result<PCMBuffer, VoiceError> {
        do throws(VoiceError) {
            try EngineState.apply(voice: voice, parameters: try parameters.validated())
            return .success(PCMBuffer(sampleRate: rate, channels: 1, samples: EngineState.run(text)))
        } catch {
            return .failure(error)
        }
    }

    /// At most this many lines wait for the engine: a flood of lines (a radio that makes the
    /// hunt talk) is refused at the door, not queued for minutes of synthesis.
    public static let maximumQueuedJobs = 16

    /// As `synthesize`, without waiting: the job queues behind any other on the engine's own
    /// thread, and `completion` runs there when it is done (post it to your own thread).
    /// A line already `stale` when its turn comes is not rendered (an empty buffer comes
    /// back); one that finds `maximumQueuedJobs` waiting fails at once, on the caller's thread.
    public func synthesize(
        _ text: String, voice: VoiceChoice, parameters: SpeechParameters = SpeechParameters(),
        stale: @escaping @Sendable () -> Bool = { false },
        completion: @escaping @Sendable (Result<PCMBuffer, VoiceError>) -> Void
    ) {
        let rate = sampleRate
        let queued = jobs.withLock { queue -> Bool in
            guard queue.count < Self.maximumQueuedJobs else { return false }
            queue.append {
                if stale() { return completion(.success(PCMBuffer(sampleRate: rate))) }
                completion(Self.render(text, voice: voice, parameters: parameters, rate: rate))
            }
            return true
        }
        guard queued else {
            return completion(.failure(VoiceError("eSpeak NG has \(Self.maximumQueuedJobs) lines waiting: this one is dropped", kind: .engine)))
        }
        wake.post()
    }

    /// Lines waiting for the engine now (for tests and benchmarks).
    public var queuedJobs: Int { jobs.withLock { $0.count } }

    /// The voice eSpeak NG reports after `voice` is set (identifier, e.g. `gmw/en` or the file path).
    public func currentVoiceIdentifier(after voice: VoiceChoice) throws(VoiceError) -> String {
        try perform { () -> Result<String, VoiceError> in
            do throws(VoiceError) {
                return .success(try EngineState.apply(voice: voice, parameters: SpeechParameters()))
            } catch {
                return .failure(error)
            }
        }.get()
    }
}

/// Collects what the synth callback delivers during one espeak_Synth call.
private final class Collector {
    var samples: [Int16] = []
}

private let synthCallback: @convention(c) (
    UnsafeMutablePointer<Int16>?, Int32, UnsafeMutablePointer<espeak_EVENT>?
) -> Int32 = { wav, count, events in
    guard let events, let user = events.pointee.user_data else { return 0 }
    let collector = Unmanaged<Collector>.fromOpaque(user).takeUnretainedValue()
    if let wav, count > 0 {
        collector.samples.append(contentsOf: UnsafeBufferPointer(start: wav, count: Int(count)))
    }
    return 0
}

/// What runs on the owner thread (static: eSpeak's state is process-wide anyway).
private struct EngineState {
    /// Sets the voice and parameters, reads the voice back, and returns its identifier.
    @discardableResult
    static func apply(voice: VoiceChoice, parameters: SpeechParameters) throws(VoiceError) -> String {
        let identifier: String
        switch voice {
        case .name(let name):
            let rc = espeak_SetVoiceByName(name)
            let current = currentIdentifier()
            // A misspelled voice or variant is ignored silently: check what is in place.
            let wanted = name.lowercased()
            guard rc == EE_OK, let current,
                current.lowercased() == wanted || current.lowercased().hasSuffix("/" + wanted)
            else {
                throw VoiceError("eSpeak NG has no voice '\(name)' (current voice: \(current ?? "none"))")
            }
            identifier = current
        case .file(let path):
            // eSpeak NG reads the file here, in SetVoiceByFile: a staged copy may go after.
            try VoiceStaging.withUsablePath(for: path) { (usable: String) throws(VoiceError) -> Void in
                let rc = espeak_SetVoiceByFile(usable)
                let current = currentIdentifier()
                guard rc == EE_OK, current == usable else {
                    throw VoiceError("\(path): eSpeak NG did not take this voice file (current voice: \(current ?? "none"))")
                }
            }
            identifier = path
        }
        espeak_SetParameter(espeakRATE, Int32(parameters.rate), 0)
        espeak_SetParameter(espeakPITCH, Int32(parameters.pitch), 0)
        espeak_SetParameter(espeakRANGE, Int32(parameters.range), 0)
        espeak_SetParameter(espeakVOLUME, Int32(parameters.volume), 0)
        espeak_SetParameter(espeakPUNCTUATION, Int32(espeakPUNCT_NONE.rawValue), 0)
        return identifier
    }

    static func currentIdentifier() -> String? {
        guard let voice = espeak_GetCurrentVoice(), let id = voice.pointee.identifier else { return nil }
        return String(cString: id)
    }

    /// One synchronous espeak_Synth call: the callback fills the collector before it returns.
    static func run(_ text: String) -> [Int16] {
        let collector = Collector()
        let user = Unmanaged.passRetained(collector)
        defer { user.release() }
        var bytes = Array(text.utf8)
        bytes.append(0)
        let flags = UInt32(espeakCHARS_UTF8)  // no espeakSSML, no espeakPHONEMES: plain text only
        bytes.withUnsafeBufferPointer { buffer in
            _ = espeak_Synth(
                buffer.baseAddress, buffer.count, 0, POS_CHARACTER, 0, flags, nil,
                user.toOpaque())
        }
        return collector.samples
    }
}

/// Where a voice file goes when eSpeak NG cannot open it where it is: espeak_SetVoiceByFile
/// lowercases its argument and keeps 59 bytes of it. The copy goes to a directory of our
/// own, never a predictable one (the old `/tmp/ph-voice-<uid>` could be pre-created or
/// symlinked by another local user, and root then used their voice): `<parent>/ph-voice-`
/// and 12 random lowercase letters and digits (mkdtemp's template would put capitals in
/// the path, which eSpeak NG would lowercase away), made by mkdir with mode 0700, which
/// fails on anything already there, a symlink included; then checked with lstat (a real
/// directory, ours, mode 0700) before anything goes in; removed as soon as eSpeak NG has
/// read the file.
struct VoiceStaging {
    static let parent = "/tmp"
    let directory: String
    var file: String { directory + "/voice" }

    /// `path` itself when eSpeak NG can take it, else a staged copy; the copy and its
    /// directory are removed when `body` returns or throws.
    static func withUsablePath<T>(
        for path: String, parent: String = parent, _ body: (String) throws(VoiceError) -> T
    ) throws(VoiceError) -> T {
        if path.utf8.count <= 59, path == path.lowercased() { return try body(path) }
        let bytes: [UInt8]
        do {
            bytes = try SafeFile.read(path, limit: 1 << 20)
        } catch {
            throw .unreadable("voice file", error)
        }
        let staging = try create(in: parent)
        defer { staging.remove() }
        guard staging.file.utf8.count <= 59, staging.file == staging.file.lowercased() else {
            throw VoiceError("\(path): cannot stage voice file: \(parent) is too long or not lowercase for eSpeak NG")
        }
        try staging.stage(bytes, from: path)
        return try body(staging.file)
    }

    static func randomName() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        return "ph-voice-" + String((0..<12).map { _ in alphabet[Int.random(in: 0..<alphabet.count)] })
    }

    /// A new private directory in `parent`. A name already taken (by anyone, as anything) is
    /// never used: another is drawn, eight times at most.
    static func create(in parent: String = parent, name: () -> String = randomName) throws(VoiceError) -> VoiceStaging {
        var lastError: Int32 = EEXIST
        for _ in 0..<8 {
            let directory = parent + "/" + name()
            do {
                _ = try retryingOnInterrupt("mkdir") { mkdir(directory, 0o700) }
            } catch {
                lastError = error.errno
                if error.errno == EEXIST { continue }
                break
            }
            let staging = VoiceStaging(directory: directory)
            do {
                try checkPrivate(directory)
            } catch {
                staging.remove()
                throw error
            }
            return staging
        }
        throw VoiceError("cannot make a private directory in \(parent) for the voice file: \(SystemError.message(errno: lastError))")
    }

    /// Refuses `directory` unless it is a real directory (not a symlink), ours, mode 0700.
    static func checkPrivate(_ directory: String) throws(VoiceError) {
        var info = stat()
        do {
            _ = try retryingOnInterrupt("lstat") { lstat(directory, &info) }
        } catch {
            throw VoiceError("voice staging directory \(directory): \(error.reason)")
        }
        let kind = info.st_mode & mode_t(S_IFMT)
        guard kind == mode_t(S_IFDIR) else {
            let what = kind == mode_t(S_IFLNK) ? "a symbolic link" : "not a directory"
            throw VoiceError("voice staging directory \(directory) is \(what): refused")
        }
        guard info.st_uid == geteuid() else {
            throw VoiceError("voice staging directory \(directory) belongs to uid \(info.st_uid), not \(geteuid()): refused")
        }
        let permissions = info.st_mode & 0o7777
        guard permissions == 0o700 else {
            throw VoiceError("voice staging directory \(directory) has mode \(String(permissions, radix: 8)), not 700: refused")
        }
    }

    /// Writes the copy (O_EXCL | O_NOFOLLOW: a fresh file in our fresh directory). Not
    /// fsynced: it lives a few milliseconds and is never read after a crash.
    func stage(_ bytes: [UInt8], from path: String) throws(VoiceError) {
        do throws(SystemError) {
            let fd = try FileDescriptor.open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
            do {
                try fd.writeAll(bytes)
            } catch {
                fd.close()
                throw error
            }
            try fd.closeChecked()
        } catch {
            throw VoiceError("\(path): cannot stage voice file in \(directory): \(error.reason)")
        }
    }

    /// Removes the copy and the directory.
    func remove() {
        _ = try? retryingOnInterrupt("unlink") { unlink(file) }
        _ = try? retryingOnInterrupt("rmdir") { rmdir(directory) }
    }
}
