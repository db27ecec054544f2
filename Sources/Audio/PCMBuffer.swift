/// Interleaved signed 16-bit PCM in memory: what the mixer plays and eSpeak NG produces.
public struct PCMBuffer: Sendable, Equatable {
    public var sampleRate: Int
    public var channels: Int
    /// Interleaved samples (frame-major).
    public var samples: [Int16]

    public init(sampleRate: Int, channels: Int = 1, samples: [Int16] = []) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.samples = samples
    }

    public var frameCount: Int { channels > 0 ? samples.count / channels : 0 }
    public var durationSeconds: Double {
        sampleRate > 0 ? Double(frameCount) / Double(sampleRate) : 0
    }

    /// Down-mix to one channel (average of the channels).
    public func mono() -> PCMBuffer {
        if channels == 1 { return self }
        var out = [Int16]()
        out.reserveCapacity(frameCount)
        for frame in 0..<frameCount {
            var sum = 0
            for c in 0..<channels { sum += Int(samples[frame * channels + c]) }
            out.append(Int16(sum / channels))
        }
        return PCMBuffer(sampleRate: sampleRate, channels: 1, samples: out)
    }

    /// Linear-interpolation resampling of a mono buffer (speech and effects, not hi-fi).
    public func resampled(to rate: Int) -> PCMBuffer {
        let source = mono()
        if rate == source.sampleRate || source.samples.isEmpty || rate <= 0 {
            return PCMBuffer(sampleRate: rate > 0 ? rate : source.sampleRate, channels: 1, samples: source.samples)
        }
        let input = source.samples
        let count = Int((Double(input.count) * Double(rate) / Double(source.sampleRate)).rounded())
        let step = Double(source.sampleRate) / Double(rate)
        var out = [Int16](repeating: 0, count: count)
        for i in 0..<count {
            let position = Double(i) * step
            let index = Int(position)
            let fraction = position - Double(index)
            let a = Double(input[min(index, input.count - 1)])
            let b = Double(input[min(index + 1, input.count - 1)])
            out[i] = Int16((a + (b - a) * fraction).rounded())
        }
        return PCMBuffer(sampleRate: rate, channels: 1, samples: out)
    }

    /// The buffer as the mixer wants it: mono at `rate`.
    public func forMixer(rate: Int) -> PCMBuffer { resampled(to: rate) }
}
