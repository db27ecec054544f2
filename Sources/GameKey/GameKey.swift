import Bluetooth
import CSodium

/// The secret one game's Pis share: 32 random bytes from the kernel (libsodium's
/// `randombytes_buf`), written as base32 text in the configuration (`game.key`) and typed or
/// pasted by a parent (`pirate-hunter pair CODE`). Every use has its own sub-key
/// (`crypto_kdf_derive_from_key`, context "PHgame01"): the announcements' and the reward's
/// MACs (`crypto_auth`, HMAC-SHA512-256) and the reward's encryption
/// (`crypto_stream_xchacha20_xor`). No cryptography is written here: libsodium does it all.
public struct GameKey: Sendable, Equatable {
    public static let byteCount = 32
    /// libsodium's KDF context: 8 bytes naming the game's sub-keys.
    static let context = "PHgame01"

    public let bytes: [UInt8]

    /// Why a key's text was refused.
    public enum TextError: Error, Equatable, Sendable {
        case badCharacter(Character)
        case wrongLength(Int)
    }

    public init(bytes: [UInt8]) throws(TextError) {
        guard bytes.count == Self.byteCount else { throw .wrongLength(bytes.count) }
        self.bytes = bytes
    }

    /// A new key from the kernel's random source.
    public static func random() -> GameKey {
        Sodium.ready()
        var b = [UInt8](repeating: 0, count: byteCount)
        randombytes_buf(&b, b.count)
        // 32 bytes exactly: cannot fail.
        return (try? GameKey(bytes: b)) ?? GameKey(unchecked: b)
    }

    private init(unchecked: [UInt8]) { bytes = unchecked }

    /// `count` bytes from the kernel's random source (the page's setup code and sessions).
    public static func randomBytes(_ count: Int) -> [UInt8] {
        Sodium.ready()
        var b = [UInt8](repeating: 0, count: max(0, count))
        randombytes_buf(&b, b.count)
        return b
    }

    /// Four random bytes (a hunter's first announcement challenge).
    public static func randomChallenge() -> UInt32 {
        Sodium.ready()
        return randombytes_random()
    }

    // MARK: Text

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")

    /// Base32 (RFC 4648, no padding) in groups of four: 52 letters and digits, 13 groups.
    public var text: String {
        let out = Self.base32(bytes)
        var grouped = ""
        for (i, c) in out.enumerated() {
            if i > 0, i % 4 == 0 { grouped.append("-") }
            grouped.append(c)
        }
        return grouped
    }

    static func base32(_ bytes: [UInt8]) -> [Character] {
        var out: [Character] = []
        var buffer = 0
        var bits = 0
        for b in bytes {
            buffer = buffer << 8 | Int(b)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(Self.alphabet[(buffer >> bits) & 31])
            }
            buffer &= (1 << bits) - 1
        }
        if bits > 0 { out.append(Self.alphabet[(buffer << (5 - bits)) & 31]) }
        return out
    }

    /// The key's text as a parent types it: any case, spaces and dashes ignored, 0/1/8 read
    /// as O/I/B (they are not in the alphabet).
    public init(text: String) throws(TextError) {
        var values: [Int] = []
        for c in text.uppercased() {
            if c == " " || c == "-" || c == "\t" { continue }
            let read: Character = c == "0" ? "O" : c == "1" ? "I" : c == "8" ? "B" : c
            guard let v = Self.alphabet.firstIndex(of: read) else { throw .badCharacter(c) }
            values.append(v)
        }
        guard values.count == 52 else { throw .wrongLength(values.count) }
        var out: [UInt8] = []
        var buffer = 0
        var bits = 0
        for v in values {
            buffer = buffer << 5 | v
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((buffer >> bits) & 0xFF))
            }
            buffer &= (1 << bits) - 1
        }
        // 52 x 5 = 260 bits: 32 bytes and 4 bits, which must be zero (one spelling per key).
        guard out.count == Self.byteCount, buffer == 0 else { throw .wrongLength(values.count) }
        self.bytes = out
    }

    /// A short public name of the key (4 characters) for logs and the kiosk: which game a
    /// Pi is paired with, without showing the key (keyed BLAKE2b of nothing).
    public var fingerprint: String {
        Sodium.ready()
        var out = [UInt8](repeating: 0, count: 16)
        let message = Array("pirate-hunter fingerprint".utf8)
        _ = crypto_generichash(&out, out.count, message, UInt64(message.count), bytes, bytes.count)
        return String(Self.base32(out).prefix(4))
    }

    /// The sub-key for `purpose`.
    func subkey(_ purpose: SignalPurpose, length: Int) -> [UInt8] {
        Sodium.ready()
        var out = [UInt8](repeating: 0, count: length)
        _ = crypto_kdf_derive_from_key(&out, out.count, purpose.rawValue, Self.context, bytes)
        return out
    }

    public var authenticator: SodiumAuthenticator { SodiumAuthenticator(key: self) }
}

/// `SignalAuthenticator` with libsodium: the edge's implementation of the core's protocol.
public struct SodiumAuthenticator: SignalAuthenticator {
    private let announcementKey: [UInt8]
    private let rewardMACKey: [UInt8]
    private let rewardCipherKey: [UInt8]

    public init(key: GameKey) {
        announcementKey = key.subkey(.announcement, length: Int(crypto_auth_KEYBYTES))
        rewardMACKey = key.subkey(.rewardMAC, length: Int(crypto_auth_KEYBYTES))
        rewardCipherKey = key.subkey(.rewardCipher, length: Int(crypto_stream_xchacha20_KEYBYTES))
    }

    public func tag(_ purpose: SignalPurpose, _ message: [UInt8]) -> [UInt8] {
        let key = purpose == .rewardMAC ? rewardMACKey : purpose == .announcement ? announcementKey : rewardCipherKey
        var out = [UInt8](repeating: 0, count: Int(crypto_auth_BYTES))
        _ = crypto_auth(&out, message, UInt64(message.count), key)
        return out
    }

    public func verify(_ purpose: SignalPurpose, _ message: [UInt8], tag: [UInt8]) -> Bool {
        guard !tag.isEmpty, tag.count <= Int(crypto_auth_BYTES) else { return false }
        let full = self.tag(purpose, message)
        return sodium_memcmp(full, tag, tag.count) == 0
    }

    public func xor(_ data: [UInt8], nonce: [UInt8]) -> [UInt8] {
        // The layouts always give 24 bytes; anything else gets no plaintext back.
        guard !data.isEmpty, nonce.count == Int(crypto_stream_xchacha20_NONCEBYTES) else {
            return [UInt8](repeating: 0, count: data.count)
        }
        var out = [UInt8](repeating: 0, count: data.count)
        _ = crypto_stream_xchacha20_xor(&out, data, UInt64(data.count), nonce, rewardCipherKey)
        return out
    }
}

enum Sodium {
    /// sodium_init, once (it is safe to call again; it returns 1 then).
    static func ready() {
        _ = initialized
    }
    private static let initialized: Int32 = sodium_init()
}
