import Bluetooth
import FoundationEssentials
import GameKey
import Testing

/// The game key's text, libsodium's sub-keys and MACs (fixed vectors computed independently
/// with Python's hmac and hashlib.blake2b, docs/security.md), and the sealed layouts under
/// hostile input: wrong key, tampered byte, replayed response, truncated bytes.
@Suite struct GameKeyTests {
    static let key = (try? GameKey(bytes: Array(0..<32))) ?? GameKey.random()
    static let other = (try? GameKey(bytes: Array(repeating: 7, count: 32))) ?? GameKey.random()
    static let a = GameSignals.Announcement(hunterID: 0x0102, treasureTag: 0xBEEF, challenge: 0x0A0B_0C0D)

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }

    @Test func textRoundTrips() throws {
        #expect(Self.key.text == "AAAQ-EAYE-AUDA-OCAJ-BIFQ-YDIO-B4IB-CEQT-CQKR-MFYY-DENB-WHA5-DYPQ")
        #expect(try GameKey(text: "aaaq eaye auda ocaj bifq ydio b4ib ceqt cqkr mfyy denb wha5 dypq") == Self.key)
        let random = GameKey.random()
        #expect(random != GameKey.random())
        #expect(try GameKey(text: random.text) == random)
        #expect(Self.key.fingerprint.count == 4)
        #expect(Self.key.fingerprint != Self.other.fingerprint)
    }

    @Test func badTextIsATypedError() {
        #expect(throws: GameKey.TextError.wrongLength(51)) { try GameKey(text: String(Self.key.text.dropLast())) }
        #expect(throws: GameKey.TextError.badCharacter("!")) { try GameKey(text: "!" + Self.key.text) }
        // The last character's four spare bits must be zero: one spelling per key.
        #expect(throws: GameKey.TextError.wrongLength(52)) { try GameKey(text: String(Self.key.text.dropLast()) + "R") }
        #expect(throws: GameKey.TextError.wrongLength(31)) { try GameKey(bytes: Array(repeating: 1, count: 31)) }
    }

    @Test func announcementVector() throws {
        let beacon = GameSignals.announcement(Self.a, by: Self.key.authenticator)
        // "PHKEY1", the challenge, then HMAC-SHA512-256 under sub-key 1 ("PHgame01") of
        // [0x41, hunter, tag, challenge], its first 6 bytes.
        #expect(Self.hex(uuidBytes(beacon.uuid)) == "50484b455931" + "0a0b0c0d" + "ccffe5d4921d")
        #expect(beacon.major == 0x0102 && beacon.minor == 0xBEEF)
        #expect(try GameSignals.verifiedAnnouncement(beacon, by: Self.key.authenticator) == Self.a)
    }

    /// A probe (a hunter asking a box step to prove it is there) differs from a find only in
    /// its MAC's domain: `50` for `41` (vector from Python's hmac and hashlib.blake2b, as
    /// above). Neither verifies as the other, so a probe cannot be passed off as a find.
    @Test func probeVectorAndNoFindInIt() throws {
        var probe = Self.a
        probe.kind = .probe
        let beacon = GameSignals.announcement(probe, by: Self.key.authenticator)
        #expect(Self.hex(uuidBytes(beacon.uuid)) == "50484b455931" + "0a0b0c0d" + "4aa6fd5a1b1f")
        #expect(try GameSignals.verifiedAnnouncement(beacon, by: Self.key.authenticator) == probe)
        #expect(try GameSignals.verifiedAnnouncement(GameSignals.announcement(Self.a, by: Self.key.authenticator), by: Self.key.authenticator).kind == .found)
        #expect(throws: SignalError.forged) { try GameSignals.verifiedAnnouncement(beacon, by: Self.other.authenticator) }
        // The seal does not depend on the kind: the box answers a probe with the reward the
        // hunter opens as for a find.
        let sealed = try GameSignals.sealedScanResponse(reward: "ARRR", boxTag: 0xBEEF, to: probe, by: Self.key.authenticator)
        #expect(try GameSignals.openReward(inScanResponse: sealed[...], boxTag: 0xBEEF, for: Self.a, by: Self.key.authenticator) == "ARRR")
    }

    @Test func announcementRefusedWithWrongKeyOrTamperedByte() throws {
        let beacon = GameSignals.announcement(Self.a, by: Self.key.authenticator)
        #expect(throws: SignalError.forged) { try GameSignals.verifiedAnnouncement(beacon, by: Self.other.authenticator) }
        var changed = beacon
        changed.major ^= 1
        #expect(throws: SignalError.forged) { try GameSignals.verifiedAnnouncement(changed, by: Self.key.authenticator) }
        changed = beacon
        changed.minor ^= 0x8000
        #expect(throws: SignalError.forged) { try GameSignals.verifiedAnnouncement(changed, by: Self.key.authenticator) }
        for i in 6..<16 {
            var bytes = uuidBytes(beacon.uuid)
            bytes[i] ^= 0x01
            changed.uuid = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
            changed.major = beacon.major
            changed.minor = beacon.minor
            #expect(throws: SignalError.forged) { try GameSignals.verifiedAnnouncement(changed, by: Self.key.authenticator) }
        }
        // A plain hunter's announcement (the old layout) is not even looked at.
        let plain = TreasureSignals.announcement(hunterID: 1, treasure: IBeacon(uuid: UUID(), major: 1, minor: 1, measuredPower: -59))
        #expect(throws: SignalError.notOurs) { try GameSignals.verifiedAnnouncement(plain, by: Self.key.authenticator) }
    }

    @Test func sealedRewardVector() throws {
        let response = try GameSignals.sealedScanResponse(reward: "ARRR-GOLD", boxTag: 0xBEEF, to: Self.a, by: Self.key.authenticator)
        // len, 0xFF, company 0xFFFF, 'T', the text XORed with XChaCha20 (sub-key 3, nonce
        // [0x53, box tag, hunter, challenge, MAC] and zeros), then the 6-byte MAC
        // (HMAC-SHA512-256 under sub-key 2 of [0x53, box tag, hunter, challenge] + the text).
        // Checked with Python's hmac, hashlib.blake2b and pycryptodome's XChaCha20, which
        // also give layout 1's pinned bytes before it (58d09696133caa9f77, 82ae729c9fd0).
        #expect(response.count == 4 + 1 + 9 + 6)
        #expect(Self.hex(response) == "13ffffff54" + "eca790afc0990a6e31" + "2e751dc59b97")
        #expect(try GameSignals.openReward(inScanResponse: response[...], boxTag: 0xBEEF, for: Self.a, by: Self.key.authenticator) == "ARRR-GOLD")
        let longest = String(repeating: "X", count: GameSignals.maximumSealedRewardBytes)
        let full = try GameSignals.sealedScanResponse(reward: longest, boxTag: 1, to: Self.a, by: Self.key.authenticator)
        #expect(full.count == 31)
        #expect(throws: PacketError.invalidValue(what: "sealed reward length in bytes", value: 21)) {
            try GameSignals.sealedScanResponse(reward: longest + "X", boxTag: 1, to: Self.a, by: Self.key.authenticator)
        }
    }

    /// A box asked again for an announcement it sealed before (a replay of it, after the
    /// parent changed the reward) seals the new reward under another key stream: the two
    /// responses do not XOR to the two rewards, so knowing the old one tells nothing of the new.
    @Test func aChangedRewardForTheSameAnnouncementGetsAnotherKeyStream() throws {
        let auth = Self.key.authenticator
        let old = Array(try GameSignals.sealedScanResponse(reward: "OLD-GOLD-42", boxTag: 0xBEEF, to: Self.a, by: auth)[5..<16])
        let new = Array(try GameSignals.sealedScanResponse(reward: "NEW-CHEST-7", boxTag: 0xBEEF, to: Self.a, by: auth)[5..<16])
        let rewards = zip(Array("OLD-GOLD-42".utf8), Array("NEW-CHEST-7".utf8)).map { $0 ^ $1 }
        #expect(zip(old, new).map { $0 ^ $1 } != rewards)
        // The same reward to the same announcement is the same response (nothing new told).
        #expect(try GameSignals.sealedScanResponse(reward: "NEW-CHEST-7", boxTag: 0xBEEF, to: Self.a, by: auth)
            == GameSignals.sealedScanResponse(reward: "NEW-CHEST-7", boxTag: 0xBEEF, to: Self.a, by: auth))
        // A layout-1 response (marker 'S') is not this layout.
        var layout1 = try GameSignals.sealedScanResponse(reward: "ARRR", boxTag: 0xBEEF, to: Self.a, by: auth)
        layout1[4] = 0x53
        #expect(throws: SignalError.notOurs) { try GameSignals.openReward(inScanResponse: layout1[...], boxTag: 0xBEEF, for: Self.a, by: auth) }
    }

    @Test func sealedRewardRefused() throws {
        let auth = Self.key.authenticator
        let response = try GameSignals.sealedScanResponse(reward: "ARRR-GOLD", boxTag: 0xBEEF, to: Self.a, by: auth)
        // Wrong key.
        #expect(throws: SignalError.forged) { try GameSignals.openReward(inScanResponse: response[...], boxTag: 0xBEEF, for: Self.a, by: Self.other.authenticator) }
        // Replayed: sealed for an earlier challenge, or another hunter, or another box.
        var older = Self.a
        older.challenge -= 1
        #expect(throws: SignalError.forged) { try GameSignals.openReward(inScanResponse: response[...], boxTag: 0xBEEF, for: older, by: auth) }
        var another = Self.a
        another.hunterID = 9
        #expect(throws: SignalError.forged) { try GameSignals.openReward(inScanResponse: response[...], boxTag: 0xBEEF, for: another, by: auth) }
        #expect(throws: SignalError.forged) { try GameSignals.openReward(inScanResponse: response[...], boxTag: 0xBEEE, for: Self.a, by: auth) }
        // Every byte after the company id tampered with.
        for i in 5..<response.count {
            var t = response
            t[i] ^= 0x20
            #expect(throws: SignalError.forged) { try GameSignals.openReward(inScanResponse: t[...], boxTag: 0xBEEF, for: Self.a, by: auth) }
        }
        // Every truncation: a typed error, never a trap.
        for n in 0..<response.count {
            var t = Array(response.prefix(n))
            if n > 0 { t[0] = UInt8(n - 1) }
            #expect(throws: SignalError.self) { try GameSignals.openReward(inScanResponse: t[...], boxTag: 0xBEEF, for: Self.a, by: auth) }
        }
        // The box's waiting response and a plain (unsealed) reward are not sealed rewards.
        #expect(throws: SignalError.notOurs) { try GameSignals.openReward(inScanResponse: GameSignals.waitingScanResponse[...], boxTag: 0xBEEF, for: Self.a, by: auth) }
        let plain = try TreasureSignals.scanResponse(reward: "FAKE-CODE-666")
        #expect(throws: SignalError.notOurs) { try GameSignals.openReward(inScanResponse: plain[...], boxTag: 0xBEEF, for: Self.a, by: auth) }
    }
}
