import FoundationEssentials

/// What the game key does for the pure core: MACs and a stream cipher under sub-keys of the
/// key, computed at the edge (libsodium, `GameKey`) and faked in pure tests. The core never
/// sees the key, only this.
public protocol SignalAuthenticator: Sendable {
    /// A MAC of `message` under the sub-key for `purpose`, at least `GameSignals.tagLength`
    /// bytes (the layouts keep the first ones).
    func tag(_ purpose: SignalPurpose, _ message: [UInt8]) -> [UInt8]
    /// Whether `tag` is the first `tag.count` bytes of `tag(purpose, message)`, compared in
    /// constant time.
    func verify(_ purpose: SignalPurpose, _ message: [UInt8], tag: [UInt8]) -> Bool
    /// `data` XORed with the key stream of the reward sub-key and `nonce` (24 bytes): the
    /// same call seals and opens.
    func xor(_ data: [UInt8], nonce: [UInt8]) -> [UInt8]
}

/// The sub-keys of the game key, one per use (libsodium's KDF sub-key ids).
public enum SignalPurpose: UInt64, Sendable, CaseIterable {
    /// A hunter's "I found it" announcement.
    case announcement = 1
    /// The box's sealed reward: its MAC.
    case rewardMAC = 2
    /// The box's sealed reward: its encryption.
    case rewardCipher = 3
}

/// Why a signal from the air was not believed (radio input is hostile: every length is
/// checked, nothing traps).
public enum SignalError: Error, Equatable, Sendable {
    /// Not the game's layout at all (another beacon, another company's data).
    case notOurs
    /// The layout's marker is there but the bytes are too few (or too many).
    case wrongLength(Int)
    /// The authenticator does not verify: another game's key, a tampered byte, an old
    /// challenge (a replay), or a forgery.
    case forged
    /// Nothing printable left once opened.
    case unprintable
}

/// The game's authenticated signals (docs/security.md has them byte by byte).
///
/// - The announcement: an iBeacon whose UUID is `announcementMarker` (6 bytes), the
///   hunter's challenge (4 bytes, big endian) and a 6-byte MAC over its kind (found or
///   probe: the MAC's first byte), the hunter id (major), the treasure's tag (minor) and the
///   challenge; major and minor as before.
/// - The sealed reward: the scan response's manufacturer data (company 0xFFFF) holding
///   `sealedMarker`, the reward XORed with XChaCha20's stream (1...20 bytes) and a 6-byte MAC
///   over the box's tag, the hunter id, its challenge and the reward itself. The MAC is also
///   the cipher's nonce (a synthetic nonce, as SIV): a box whose reward changed and is asked
///   again for an announcement it sealed before (a replay) uses another key stream, so two
///   responses never XOR to the two rewards. The box seals it for the last verified
///   announcement it heard, so it answers the challenge a hunter is sending now: a response
///   recorded earlier names an old challenge and does not verify.
public enum GameSignals {
    /// Bytes kept of each MAC (48 bits: a forger gets one guess per radio packet).
    public static let tagLength = 6
    /// "PHKEY1": the first 6 bytes of an authenticated announcement's UUID.
    public static let announcementMarker: [UInt8] = [0x50, 0x48, 0x4B, 0x45, 0x59, 0x31]
    /// The first payload byte of a sealed reward ('T', layout 2: the MAC over the reward is
    /// its nonce; 'S', layout 1, sealed the ciphertext under a nonce without it).
    public static let sealedMarker: UInt8 = 0x54
    /// 27 bytes of payload after the company id - the marker - the MAC.
    public static let maximumSealedRewardBytes = TreasureSignals.maximumRewardBytes - 1 - tagLength

    /// The measured power (dBm at 1 m) every hunter advertises in its announcement. The byte
    /// is not under the MAC: a box ranges announcements with this, never with the byte heard
    /// (a replay saying -100 would pass for a hunter standing at it).
    public static let announcementPower: Int8 = -59

    /// What an announcement says once verified.
    public struct Announcement: Sendable, Equatable {
        /// What the hunter states: the same bytes on the air, told apart by the MAC's domain
        /// (its first byte), so neither can be made into the other without the key.
        public enum Kind: UInt8, Sendable, Equatable {
            /// "I found it": other hunters and boxes count it (rival lines, standings).
            case found = 0x41
            /// "Box, prove you are here": a box step's beacon held at immediate is not a find
            /// until the box seals its reward for this challenge. A copy of a box's beacon
            /// sets every hunter near it asking, so nobody counts a question as a find.
            case probe = 0x50
        }

        public var hunterID: UInt16
        public var treasureTag: UInt16
        public var challenge: UInt32
        public var kind: Kind

        public init(hunterID: UInt16, treasureTag: UInt16, challenge: UInt32, kind: Kind = .found) {
            self.hunterID = hunterID
            self.treasureTag = treasureTag
            self.challenge = challenge
            self.kind = kind
        }
    }

    static func announcementMessage(_ a: Announcement) -> [UInt8] {
        var m: [UInt8] = [a.kind.rawValue]
        m.appendBE(a.hunterID)
        m.appendBE(a.treasureTag)
        m.appendBE(a.challenge)
        return m
    }

    /// The iBeacon a paired hunter advertises after finding the treasure tagged `treasureTag`
    /// (or, a probe, to ask that box step to prove it is there).
    public static func announcement(_ a: Announcement, by auth: any SignalAuthenticator, measuredPower: Int8 = announcementPower) -> IBeacon {
        var uuid = announcementMarker
        uuid.appendBE(a.challenge)
        uuid += padded(auth.tag(.announcement, announcementMessage(a)))
        return IBeacon(uuid: uuidFrom(uuid), major: a.hunterID, minor: a.treasureTag, measuredPower: measuredPower)
    }

    /// Whether `beacon` has an announcement's layout (its marker), verified or not.
    public static func looksLikeAnnouncement(_ beacon: IBeacon) -> Bool {
        uuidBytes(beacon.uuid).prefix(announcementMarker.count).elementsEqual(announcementMarker)
    }

    /// The announcement in `beacon`, when it verifies under `auth`.
    public static func verifiedAnnouncement(_ beacon: IBeacon, by auth: any SignalAuthenticator) throws(SignalError) -> Announcement {
        let bytes = uuidBytes(beacon.uuid)
        guard bytes.count == 16, looksLikeAnnouncement(beacon) else { throw .notOurs }
        let challenge = bytes[6..<10].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let mac = Array(bytes[10..<16])
        for kind in [Announcement.Kind.found, .probe] {
            let a = Announcement(hunterID: beacon.major, treasureTag: beacon.minor, challenge: challenge, kind: kind)
            if auth.verify(.announcement, announcementMessage(a), tag: mac) { return a }
        }
        throw .forged
    }

    /// What the reward's MAC covers: `53` ‖ box tag ‖ hunter id ‖ challenge ‖ the reward.
    static func rewardMessage(boxTag: UInt16, to a: Announcement, reward: [UInt8]) -> [UInt8] {
        var m: [UInt8] = [0x53]
        m.appendBE(boxTag)
        m.appendBE(a.hunterID)
        m.appendBE(a.challenge)
        return m + reward
    }

    /// The cipher's nonce: `53` ‖ box tag ‖ hunter id ‖ challenge ‖ the reward's MAC ‖ zeros
    /// to 24 bytes. A nonce is used again only for the same reward to the same announcement,
    /// which gives the same bytes again.
    static func rewardNonce(boxTag: UInt16, to a: Announcement, mac: [UInt8]) -> [UInt8] {
        var n: [UInt8] = [0x53]
        n.appendBE(boxTag)
        n.appendBE(a.hunterID)
        n.appendBE(a.challenge)
        n += padded(mac)
        return n + [UInt8](repeating: 0, count: 24 - n.count)
    }

    /// What a paired box with a reward answers before any hunter's announcement verified:
    /// the company id and 'W' (waiting), no reward. Not a sealed reward: ignored, not counted.
    public static let waitingScanResponse: [UInt8] = [4, ADStructure.manufacturerSpecificData, 0xFF, 0xFF, 0x57]

    /// The scan response of the box tagged `boxTag`, its `reward` sealed for the hunter whose
    /// verified announcement is `a` (the reward must be 1...20 UTF-8 bytes).
    public static func sealedScanResponse(
        reward: String, boxTag: UInt16, to a: Announcement, by auth: any SignalAuthenticator
    ) throws(PacketError) -> [UInt8] {
        let plain = Array(reward.utf8)
        guard !plain.isEmpty, plain.count <= maximumSealedRewardBytes else {
            throw .invalidValue(what: "sealed reward length in bytes", value: plain.count)
        }
        let mac = padded(auth.tag(.rewardMAC, rewardMessage(boxTag: boxTag, to: a, reward: plain)))
        let ciphertext = auth.xor(plain, nonce: rewardNonce(boxTag: boxTag, to: a, mac: mac))
        let company = TreasureSignals.rewardCompanyID
        var builder = AdvertisingDataBuilder()
        try builder.append(
            type: ADStructure.manufacturerSpecificData,
            data: [UInt8(company & 0xFF), UInt8(company >> 8), sealedMarker] + ciphertext + mac)
        return builder.bytes
    }

    /// The reward in a scan response from the box tagged `boxTag`, when it is sealed for
    /// this hunter's announcement `a` (its id and its current challenge), made printable.
    public static func openReward(
        inScanResponse bytes: ArraySlice<UInt8>, boxTag: UInt16, for a: Announcement, by auth: any SignalAuthenticator
    ) throws(SignalError) -> String {
        let data = AdvertisingData(parsing: bytes)
        let company = TreasureSignals.rewardCompanyID
        guard let s = data.structures.first(where: {
            $0.type == ADStructure.manufacturerSpecificData && $0.data.count >= 3
                && UInt16($0.data[$0.data.startIndex]) | UInt16($0.data[$0.data.startIndex + 1]) << 8 == company
                && $0.data[$0.data.startIndex + 2] == sealedMarker
        }) else { throw .notOurs }
        let payload = Array(s.data.dropFirst(3))
        guard payload.count > tagLength, payload.count - tagLength <= maximumSealedRewardBytes else {
            throw .wrongLength(payload.count)
        }
        let ciphertext = Array(payload.prefix(payload.count - tagLength))
        let mac = Array(payload.suffix(tagLength))
        // Opened first (the nonce is the MAC heard), believed only when the MAC covers what
        // came out: a wrong key, a tampered byte or another challenge opens to bytes no MAC
        // of this key covers.
        let plain = auth.xor(ciphertext, nonce: rewardNonce(boxTag: boxTag, to: a, mac: mac))
        guard auth.verify(.rewardMAC, rewardMessage(boxTag: boxTag, to: a, reward: plain), tag: mac) else { throw .forged }
        guard let text = TreasureSignals.printable(plain[...]) else {
            throw .unprintable
        }
        return text
    }

    /// The first `tagLength` bytes of `mac` (zeros after a short one: never a trap).
    static func padded(_ mac: [UInt8]) -> [UInt8] {
        Array(mac.prefix(tagLength)) + [UInt8](repeating: 0, count: max(0, tagLength - mac.count))
    }

    static func uuidFrom(_ b: [UInt8]) -> UUID {
        UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }
}
