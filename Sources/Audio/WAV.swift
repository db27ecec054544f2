#if canImport(Glibc)
import Glibc
#endif

/// A WAV file that cannot be used, with one line saying why.
public struct WAVError: Error, CustomStringConvertible, Equatable {
    public let message: String
    /// errno when a system call failed (writing: ENOENT, EACCES, ENOSPC, EISDIR, EEXIST for a
    /// target that is not a regular file), nil for a file whose contents are wrong.
    public let errno: Int32?
    public init(_ message: String, errno: Int32? = nil) {
        self.message = message
        self.errno = errno
    }
    public var description: String { message }
}

/// RIFF/WAVE reading (8-bit unsigned and 16-bit signed PCM, mono or stereo) and writing.
public enum WAVFile {
    /// Reads a WAV file; `name` in errors is the path. With `maximumSeconds`, a longer one
    /// is refused from its header, before its samples are decoded, and the file may hold at
    /// most that long at 48 kHz stereo (a 4-hour clue never reaches memory).
    public static func read(path: String, maximumSeconds: Double? = nil) throws(WAVError) -> PCMBuffer {
        let bytes: [UInt8]
        do {
            if let maximumSeconds {
                bytes = try SafeFile.read(path, limit: Int(maximumSeconds * 48_000 * 4) + 65_536)
            } else {
                bytes = try SafeFile.read(path)
            }
        } catch {
            if error.errno == EFBIG, let maximumSeconds {
                throw WAVError("\(path): the file is too large for \(Int(maximumSeconds)) s of sound", errno: error.errno)
            }
            throw WAVError(error.description, errno: error.errno)
        }
        return try decode(bytes, name: path, maximumSeconds: maximumSeconds)
    }

    /// Reads a WAV file and converts it to mono at `rate` for the mixer.
    public static func readForMixer(path: String, rate: Int, maximumSeconds: Double? = nil) throws(WAVError) -> PCMBuffer {
        try read(path: path, maximumSeconds: maximumSeconds).forMixer(rate: rate)
    }

    public static func decode(_ bytes: [UInt8], name: String, maximumSeconds: Double? = nil) throws(WAVError) -> PCMBuffer {
        func u16(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 }
        func u32(_ o: Int) -> Int { u16(o) | u16(o + 2) << 16 }
        func tag(_ o: Int) -> String { String(decoding: bytes[o..<o + 4], as: UTF8.self) }

        guard bytes.count >= 12, tag(0) == "RIFF", tag(8) == "WAVE" else {
            throw WAVError("\(name): not a RIFF/WAVE file")
        }
        var offset = 12
        var format: (code: Int, channels: Int, rate: Int, bits: Int)?
        while offset + 8 <= bytes.count {
            let id = tag(offset)
            let size = u32(offset + 4)
            let body = offset + 8
            if id == "fmt " {
                guard size >= 16, body + 16 <= bytes.count else {
                    throw WAVError("\(name): fmt chunk too short")
                }
                var code = u16(body)
                if code == 0xFFFE, size >= 40, body + 26 <= bytes.count {
                    code = u16(body + 24)  // WAVE_FORMAT_EXTENSIBLE: sub-format GUID starts with the code
                }
                format = (code, u16(body + 2), u32(body + 4), u16(body + 14))
            } else if id == "data" {
                guard let f = format else { throw WAVError("\(name): data chunk before fmt chunk") }
                guard f.code == 1 else {
                    throw WAVError("\(name): format code \(f.code) is not PCM (only 8/16-bit PCM is supported)")
                }
                guard f.channels == 1 || f.channels == 2 else {
                    throw WAVError("\(name): \(f.channels) channels (only mono or stereo is supported)")
                }
                guard f.bits == 8 || f.bits == 16 else {
                    throw WAVError("\(name): \(f.bits)-bit samples (only 8 or 16-bit PCM is supported)")
                }
                guard f.rate >= 4000, f.rate <= 192_000 else {
                    throw WAVError("\(name): sample rate \(f.rate) Hz is out of range")
                }
                // A writer killed before closing leaves the size unset: take what is there.
                let end = min(bytes.count, size == 0 || size == 0xFFFF_FFFF ? bytes.count : body + size)
                let seconds = Double(max(0, end - body)) / Double(f.channels * (f.bits / 8) * f.rate)
                if let maximumSeconds, seconds > maximumSeconds {
                    throw WAVError("\(name): \(Int(seconds.rounded())) s long; allowed: at most \(Int(maximumSeconds)) s")
                }
                var samples = [Int16]()
                if f.bits == 16 {
                    let count = (end - body) / 2
                    samples.reserveCapacity(count)
                    for i in 0..<count {
                        samples.append(Int16(bitPattern: UInt16(u16(body + 2 * i))))
                    }
                } else {
                    samples.reserveCapacity(end - body)
                    for i in body..<end { samples.append(Int16((Int(bytes[i]) - 128) << 8)) }
                }
                let whole = samples.count - samples.count % f.channels
                samples.removeLast(samples.count - whole)
                return PCMBuffer(sampleRate: f.rate, channels: f.channels, samples: samples)
            }
            offset = body + size + (size & 1)
        }
        throw WAVError(format == nil ? "\(name): no fmt chunk" : "\(name): no data chunk")
    }

    /// 16-bit PCM WAV bytes.
    public static func encode(_ buffer: PCMBuffer) -> [UInt8] {
        var out = [UInt8]()
        let dataBytes = buffer.samples.count * 2
        out.reserveCapacity(44 + dataBytes)
        func put32(_ v: Int) { for s in stride(from: 0, to: 32, by: 8) { out.append(UInt8((v >> s) & 0xFF)) } }
        func put16(_ v: Int) { out.append(UInt8(v & 0xFF)); out.append(UInt8((v >> 8) & 0xFF)) }
        out.append(contentsOf: Array("RIFF".utf8)); put32(36 + dataBytes)
        out.append(contentsOf: Array("WAVE".utf8))
        out.append(contentsOf: Array("fmt ".utf8)); put32(16)
        put16(1); put16(buffer.channels); put32(buffer.sampleRate)
        put32(buffer.sampleRate * buffer.channels * 2); put16(buffer.channels * 2); put16(16)
        out.append(contentsOf: Array("data".utf8)); put32(dataBytes)
        for s in buffer.samples { put16(Int(UInt16(bitPattern: s))) }
        return out
    }

    /// Writes a 16-bit PCM WAV file whole or not at all (see `SafeFile`): never through a
    /// symlink, never over a directory, device or FIFO. The error says errno's text
    /// ("q.wav: cannot write: No such file or directory") and carries errno.
    public static func write(_ buffer: PCMBuffer, to path: String) throws(WAVError) {
        do {
            try SafeFile.write(encode(buffer), to: path)
        } catch {
            throw WAVError(error.description, errno: error.errno)
        }
    }
}
