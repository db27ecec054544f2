import FoundationEssentials

/// The game's own conventions on the air, between a treasure box and the hunters.
///
/// - The treasure advertises an iBeacon (its UUID, major, minor, measured power) and, when it
///   has a reward, answers scan requests with a scan response holding one manufacturer-specific
///   AD structure: company 0xFFFF (the identifier the Bluetooth SIG keeps for tests and
///   internal use, so no real company's data is impersonated) then the reward's UTF-8 bytes.
///   A hunter takes the reward only from the address its treasure advertises from.
/// - A hunter that found a treasure announces itself with its own iBeacon: the hunters' UUID,
///   major = the hunter id, minor = the found treasure's tag (16 bits of its UUID, major and
///   minor), so a box greets only the hunters that found it.
public enum TreasureSignals {
    public static let rewardCompanyID: UInt16 = 0xFFFF
    /// 31 bytes of scan response - length byte, AD type, 16-bit company id.
    public static let maximumRewardBytes = HCICommand.maximumLegacyAdvertisingDataLength - 4
    /// "PirateHunterCrew" in ASCII: the UUID every hunter announces itself with.
    public static let hunterUUID = UUID(uuid: (0x50, 0x69, 0x72, 0x61, 0x74, 0x65, 0x48, 0x75, 0x6E, 0x74, 0x65, 0x72, 0x43, 0x72, 0x65, 0x77))

    /// The scan response carrying `reward` (which must be 1...27 UTF-8 bytes).
    public static func scanResponse(reward: String) throws(PacketError) -> [UInt8] {
        let bytes = Array(reward.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumRewardBytes else {
            throw .invalidValue(what: "reward length in bytes", value: bytes.count)
        }
        var builder = AdvertisingDataBuilder()
        try builder.append(type: ADStructure.manufacturerSpecificData, data: [UInt8(rewardCompanyID & 0xFF), UInt8(rewardCompanyID >> 8)] + bytes)
        return builder.bytes
    }

    /// The reward in a scan response, made safe: hostile radio input, so at most 27 bytes
    /// are read, invalid UTF-8 is dropped, and only printable characters are kept (letters,
    /// marks, numbers, punctuation, symbols; any space becomes one plain space). Nil when
    /// there is no reward structure or nothing printable is left.
    public static func reward(inScanResponse bytes: ArraySlice<UInt8>) -> String? {
        let data = AdvertisingData(parsing: bytes)
        for s in data.structures where s.type == ADStructure.manufacturerSpecificData && s.data.count > 2 {
            let i = s.data.startIndex
            guard UInt16(s.data[i]) | UInt16(s.data[i + 1]) << 8 == rewardCompanyID else { continue }
            return printable(s.data.dropFirst(2).prefix(maximumRewardBytes))
        }
        return nil
    }

    /// Only printable characters of `bytes` (UTF-8), spaces collapsed and trimmed; nil if none.
    public static func printable(_ bytes: ArraySlice<UInt8>) -> String? {
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        loop: while true {
            switch decoder.decode(&iterator) {
            case let .scalarValue(scalar):
                switch scalar.properties.generalCategory {
                case .spaceSeparator:
                    pendingSpace = !out.isEmpty
                case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                    .nonspacingMark, .spacingMark, .enclosingMark,
                    .decimalNumber, .letterNumber, .otherNumber,
                    .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
                    .initialPunctuation, .finalPunctuation, .otherPunctuation,
                    .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol:
                    if pendingSpace { out.append(" ") }
                    pendingSpace = false
                    out.append(scalar)
                default:
                    // Control, format (bidi overrides), private use, unassigned: dropped; a
                    // control such as a tab or newline still separates words.
                    if scalar.properties.generalCategory == .control { pendingSpace = !out.isEmpty }
                }
            case .error:
                continue
            case .emptyInput:
                break loop
            }
        }
        return out.isEmpty ? nil : String(out)
    }

    /// The iBeacon a hunter advertises after finding `treasure`.
    public static func announcement(hunterID: UInt16, treasure: IBeacon, measuredPower: Int8 = -59) -> IBeacon {
        IBeacon(uuid: hunterUUID, major: hunterID, minor: tag(of: treasure), measuredPower: measuredPower)
    }

    /// The hunter id and found treasure's tag, when `beacon` is a hunter's announcement.
    public static func hunter(in beacon: IBeacon) -> (id: UInt16, treasureTag: UInt16)? {
        beacon.uuid == hunterUUID ? (beacon.major, beacon.minor) : nil
    }

    /// 16 bits naming a treasure: FNV-1a over its UUID, major and minor, folded.
    public static func tag(of treasure: IBeacon) -> UInt16 {
        var hash: UInt32 = 2_166_136_261
        var bytes = uuidBytes(treasure.uuid)
        bytes.appendBE(treasure.major)
        bytes.appendBE(treasure.minor)
        for b in bytes {
            hash ^= UInt32(b)
            hash = hash &* 16_777_619
        }
        return UInt16(truncatingIfNeeded: hash >> 16) ^ UInt16(truncatingIfNeeded: hash)
    }
}
