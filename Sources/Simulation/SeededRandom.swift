#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast, seedable generator. The same seed
/// gives the same sequence on every machine, so simulations are reproducible.
public struct SplitMix64: RandomNumberGenerator, Sendable, Equatable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 random bits.
    public mutating func nextUniform() -> Double {
        Double(next() >> 11) * (1.0 / 9_007_199_254_740_992.0)
    }
}

/// Standard normal deviates by the Box-Muller transform (the spare value is kept).
public struct GaussianSource: Sendable, Equatable {
    public private(set) var generator: SplitMix64
    private var spare: Double?

    public init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    public mutating func nextUniform() -> Double { generator.nextUniform() }

    public mutating func nextGaussian() -> Double {
        if let value = spare {
            spare = nil
            return value
        }
        var u1 = generator.nextUniform()
        while u1 <= .leastNormalMagnitude { u1 = generator.nextUniform() }
        let u2 = generator.nextUniform()
        let radius = (-2 * log(u1)).squareRoot()
        spare = radius * sin(2 * Double.pi * u2)
        return radius * cos(2 * Double.pi * u2)
    }
}
