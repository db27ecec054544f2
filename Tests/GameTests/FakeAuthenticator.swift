import Bluetooth

/// A stand-in for the game key in pure tests (no C, no libsodium): a keyed FNV-1a mix. Not
/// cryptography, only distinct per key, purpose and message, which is what the core's rules
/// need; the real one (`SodiumAuthenticator`) has its vectors in GameKeyTests.
struct FakeAuthenticator: SignalAuthenticator {
    var key: UInt64

    static let game = FakeAuthenticator(key: 0x5EC2E7)
    static let otherGame = FakeAuthenticator(key: 0xBAD)

    private func mix(_ seed: UInt64, _ bytes: [UInt8]) -> UInt64 {
        var h = 14_695_981_039_346_656_037 ^ seed
        for b in bytes {
            h ^= UInt64(b)
            h = h &* 1_099_511_628_211
        }
        return h
    }

    func tag(_ purpose: SignalPurpose, _ message: [UInt8]) -> [UInt8] {
        (0..<2).flatMap { i in
            withUnsafeBytes(of: mix(key &+ purpose.rawValue &* 31 &+ UInt64(i), message).bigEndian) { Array($0) }
        }
    }

    func verify(_ purpose: SignalPurpose, _ message: [UInt8], tag: [UInt8]) -> Bool {
        !tag.isEmpty && self.tag(purpose, message).prefix(tag.count).elementsEqual(tag)
    }

    func xor(_ data: [UInt8], nonce: [UInt8]) -> [UInt8] {
        data.enumerated().map { i, b in b ^ UInt8(truncatingIfNeeded: mix(key, nonce + [UInt8(i)])) }
    }
}
