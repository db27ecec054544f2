import CALSA

#if canImport(Glibc)
import Glibc
#endif

/// An audio device problem, one line naming the device and ALSA's reason.
public struct AudioError: Error, CustomStringConvertible, Equatable {
    public let message: String
    /// The negative errno ALSA returned.
    public let code: Int32
    public init(_ message: String, code: Int32) {
        self.message = message
        self.code = code
    }
    public var description: String { message }
}

func alsaMessage(_ err: Int32) -> String {
    guard let text = snd_strerror(err) else { return "error \(err)" }
    return String(cString: text)
}

/// One ALSA playback PCM, opened blocking, S16_LE interleaved. Not thread-safe: exactly one
/// thread (the playback thread, or a one-shot command) owns it.
public final class PCMDevice {
    public let name: String
    public let sampleRate: Int
    public let channels: Int
    public let bufferFrames: Int
    public let periodFrames: Int
    private var handle: OpaquePointer?

    /// ALSA's `file:` plugin writes raw samples unless told `FORMAT=wav`, so `file:x.wav`
    /// would be raw PCM under a WAV's name: a `file:` device whose file ends in `.wav` and
    /// that names no format is given `FORMAT=wav`. Every other name is returned as it is.
    public static func normalizedName(_ name: String) -> String {
        guard name.hasPrefix("file:"), !name.contains("'"), !name.contains("\""), !name.contains("{") else { return name }
        let arguments = name.dropFirst("file:".count).split(separator: ",", omittingEmptySubsequences: false)
        guard let first = arguments.first, !first.isEmpty else { return name }
        let named = first.contains("=")
        // A second argument by position is the format; a named one may be anywhere.
        if arguments.contains(where: { $0.hasPrefix("FORMAT=") }) || (!named && arguments.count > 1) { return name }
        let file = named ? arguments.first { $0.hasPrefix("FILE=") }.map { $0.dropFirst("FILE=".count) } : first
        guard let file, file.lowercased().hasSuffix(".wav") else { return name }
        return named ? name + ",FORMAT=wav" : "file:FILE=\(file),FORMAT=wav" + arguments.dropFirst().map { "," + $0 }.joined()
    }

    /// Opens `name` (e.g. `default`, `plughw:1,0`, `null`, `file:FILE=/abs/out.wav,FORMAT=wav`)
    /// with about `latencyMicroseconds` of buffer; alsa-lib resamples if the card needs it.
    public init(
        name: String, sampleRate: Int = 22050, channels: Int = 1, latencyMicroseconds: Int = 40_000
    ) throws(AudioError) {
        pirate_hunter_alsa_silence_errors()
        let name = Self.normalizedName(name)
        var pcm: OpaquePointer?
        var err = snd_pcm_open(&pcm, name, SND_PCM_STREAM_PLAYBACK, 0)
        guard err >= 0, let pcm else {
            throw AudioError("cannot open audio device '\(name)': \(alsaMessage(err))", code: err)
        }
        err = snd_pcm_set_params(
            pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED,
            UInt32(channels), UInt32(sampleRate), 1, UInt32(latencyMicroseconds))
        if err < 0 {
            snd_pcm_close(pcm)
            throw AudioError(
                "audio device '\(name)' refuses \(sampleRate) Hz \(channels)-channel S16: \(alsaMessage(err))",
                code: err)
        }
        var buffer: snd_pcm_uframes_t = 0
        var period: snd_pcm_uframes_t = 0
        snd_pcm_get_params(pcm, &buffer, &period)
        self.name = name
        self.sampleRate = sampleRate
        self.channels = channels
        bufferFrames = Int(buffer)
        periodFrames = max(1, Int(period))
        handle = pcm
    }

    deinit { close() }

    /// Writes every frame of `samples` (interleaved), blocking as the device plays. A negative
    /// write goes to `snd_pcm_recover` (underrun, suspend, signal); a stream ALSA cannot
    /// recover by itself (stopped) is prepared again. Returns how many recoveries it took;
    /// throws when the device is gone (unplugged) so the owner can reopen it later.
    @discardableResult
    public func write(_ samples: UnsafeBufferPointer<Int16>) throws(AudioError) -> [Int32] {
        guard let pcm = handle, let base = samples.baseAddress else {
            if handle == nil { throw AudioError("audio device '\(name)' is closed", code: -EBADF) }
            return []
        }
        let frames = samples.count / channels
        var offset = 0
        var recovered: [Int32] = []
        var failuresInARow = 0
        while offset < frames {
            let n = snd_pcm_writei(pcm, base + offset * channels, snd_pcm_uframes_t(frames - offset))
            if n >= 0 {
                offset += Int(n)
                failuresInARow = 0
                continue
            }
            let err = Int32(n)
            failuresInARow += 1
            if failuresInARow > 3 {
                throw AudioError("audio device '\(name)' failed: \(alsaMessage(err))", code: err)
            }
            if snd_pcm_recover(pcm, err, 1) >= 0 || snd_pcm_prepare(pcm) >= 0 {
                recovered.append(err)
                continue
            }
            throw AudioError("audio device '\(name)' failed: \(alsaMessage(err))", code: err)
        }
        return recovered
    }

    /// `write(_:)` over an array's storage. The error stays typed with Swift 6.0 too, whose
    /// `withUnsafeBufferPointer` rethrows `any Error` (a typed closure does not help there).
    @discardableResult
    public func write(_ samples: [Int16]) throws(AudioError) -> [Int32] {
        let result = samples.withUnsafeBufferPointer { buffer in
            Result { () throws(AudioError) -> [Int32] in try write(buffer) }
        }
        return try result.get()
    }

    /// Stops the stream without waiting (what is queued is dropped: call it after a silent
    /// tail longer than the buffer) and leaves it ready for the next write.
    public func stopStream() {
        guard let pcm = handle else { return }
        snd_pcm_drop(pcm)
        snd_pcm_prepare(pcm)
    }

    /// Stops the stream at once, as an underrun or a suspend stops it on a card: the next
    /// write fails and goes through the recovery path. Devices without a clock (`null`,
    /// `file:`) never underrun by themselves; this is how that path is exercised on them.
    public func interruptStream() {
        guard let pcm = handle else { return }
        snd_pcm_drop(pcm)
    }

    /// Flushes and closes (a `file:` device writes its WAV header here).
    public func close() {
        guard let pcm = handle else { return }
        snd_pcm_drain(pcm)
        snd_pcm_close(pcm)
        handle = nil
    }
}
