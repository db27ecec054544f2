import Audio

/// Simple measurements of speech: enough to check a voice is lower and slower.
public enum SpeechAnalysis {
    /// Median fundamental frequency (Hz) over the voiced frames, by normalised
    /// autocorrelation on 40 ms frames every 10 ms; nil when nothing is voiced.
    public static func medianF0(_ buffer: PCMBuffer, minHz: Double = 50, maxHz: Double = 400) -> Double? {
        let values = f0Track(buffer, minHz: minHz, maxHz: maxHz)
        guard !values.isEmpty else { return nil }
        return median(values)
    }

    /// F0 of each voiced frame.
    public static func f0Track(_ buffer: PCMBuffer, minHz: Double = 50, maxHz: Double = 400) -> [Double] {
        // Halve the rate (average pairs): speech F0 lives far below 5 kHz, and it is 4x cheaper.
        let mono = buffer.mono()
        var x: [Float] = []
        x.reserveCapacity(mono.samples.count / 2)
        var i = 0
        while i + 1 < mono.samples.count {
            x.append((Float(mono.samples[i]) + Float(mono.samples[i + 1])) / 65536)
            i += 2
        }
        let rate = Double(mono.sampleRate) / 2
        let frame = Int(rate * 0.04)
        let hop = Int(rate * 0.01)
        let minLag = max(2, Int(rate / maxHz))
        let maxLag = min(frame - 1, Int(rate / minHz))
        guard x.count >= frame + maxLag, minLag < maxLag else { return [] }

        var energies: [Float] = []
        var start = 0
        while start + frame + maxLag <= x.count {
            var e: Float = 0
            for k in start..<start + frame { e += x[k] * x[k] }
            energies.append(e)
            start += hop
        }
        let loudest = energies.max() ?? 0
        guard loudest > 0 else { return [] }

        var track: [Double] = []
        for (n, energy) in energies.enumerated() where energy > loudest * 0.02 {
            let s = n * hop
            var best: Float = 0
            var scores = [Float](repeating: 0, count: maxLag + 1)
            for lag in minLag...maxLag {
                var r: Float = 0
                var e2: Float = 0
                for k in s..<s + frame {
                    r += x[k] * x[k + lag]
                    e2 += x[k + lag] * x[k + lag]
                }
                let denominator = (energy * e2).squareRoot()
                let score = denominator > 0 ? r / denominator : 0
                scores[lag] = score
                if score > best { best = score }
            }
            guard best > 0.6 else { continue }  // unvoiced or silence
            // The shortest lag close to the best peak avoids octave-low errors.
            var chosen = minLag
            for lag in (minLag + 1)..<maxLag
            where scores[lag] >= best * 0.9 && scores[lag] >= scores[lag - 1] && scores[lag] >= scores[lag + 1] {
                chosen = lag
                break
            }
            track.append(rate / Double(chosen))
        }
        return track
    }

    /// Seconds from the first to the last 10 ms frame louder than -35 dB below the loudest one.
    public static func activeDuration(_ buffer: PCMBuffer) -> Double {
        let mono = buffer.mono()
        let hop = max(1, mono.sampleRate / 100)
        var levels: [Double] = []
        var start = 0
        while start < mono.samples.count {
            let end = min(start + hop, mono.samples.count)
            var e = 0.0
            for k in start..<end { e += Double(mono.samples[k]) * Double(mono.samples[k]) }
            levels.append(e / Double(end - start))
            start = end
        }
        guard let loudest = levels.max(), loudest > 0 else { return 0 }
        let threshold = loudest * 0.000316  // -35 dB
        guard let first = levels.firstIndex(where: { $0 > threshold }),
            let last = levels.lastIndex(where: { $0 > threshold })
        else { return 0 }
        return Double(last - first + 1) * Double(hop) / Double(mono.sampleRate)
    }

    public static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }

    /// The value below which `fraction` of `values` lie (nearest rank).
    public static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }
}
