import CALSA

/// One ALSA sound card as `snd_ctl_card_info` describes it.
public struct SoundCard: Sendable, Equatable, Codable {
    /// What a card is, for choosing a speaker and for the advice `check` gives.
    public enum Kind: String, Sendable, Codable {
        case usb
        case hdmi
        /// The Pi 4's 3.5 mm headphone jack (bcm2835).
        case jack
        case other
    }

    /// `N` in `hw:N`.
    public var index: Int
    /// `snd_ctl_card_info_get_id`: what `CARD=` takes (`Headphones`, `vc4hdmi0`, `Device`).
    public var id: String
    /// `bcm2835 Headphones`, `vc4-hdmi-0`, `USB Audio Device`.
    public var name: String
    /// The kernel driver: `bcm2835_headpho`, `vc4-hdmi`, `USB-Audio`, `Loopback`.
    public var driver: String
    /// `GeneralPlus USB Audio Device at usb-0000:01:00.0-1.2, full speed`.
    public var longName: String
    /// Whether the card has a device that plays (nil: not known, the card could not be
    /// asked). A USB webcam's or microphone's card only records.
    public var plays: Bool?

    public init(index: Int, id: String, name: String, driver: String, longName: String, plays: Bool? = nil) {
        self.index = index
        self.id = id
        self.name = name
        self.driver = driver
        self.longName = longName
        self.plays = plays
    }

    /// snd-usb-audio names its driver `USB-Audio` and puts the bus path in the long name.
    public var isUSB: Bool { driver == "USB-Audio" || longName.contains(" at usb-") }

    public var kind: Kind {
        if isUSB { return .usb }
        let text = (id + " " + name + " " + driver).lowercased()
        if text.contains("hdmi") { return .hdmi }
        if text.contains("headphone") || text.contains("bcm2835") { return .jack }
        return .other
    }

    /// The ALSA name that plays on this card: HDMI takes only IEC958 samples, which
    /// `sysdefault:` converts to (`hw:`/`plughw:` fail there); any other card through
    /// `plughw:` (resampling and format conversion, no dmix in between).
    public var playbackName: String {
        kind == .hdmi ? "sysdefault:CARD=\(id)" : "plughw:CARD=\(id),DEV=0"
    }

    /// `card 2 'USB Audio Device' (USB-Audio)`.
    public var label: String { "card \(index) '\(name)' (\(driver))" }
}

/// What `audio.device` resolved to, and why (the log line says both).
public struct DeviceChoice: Sendable, Equatable {
    public var device: String
    /// The card `auto` chose (nil: not `auto`, or no USB card).
    public var card: SoundCard?
    public var reason: String

    public init(device: String, card: SoundCard?, reason: String) {
        self.device = device
        self.card = card
        self.reason = reason
    }
}

public enum SoundCards {
    /// The device name that means "choose for me".
    public static let auto = "auto"

    /// `auto`: the first USB audio card when one is present (on a Pi the jack or HDMI is
    /// card 0, and a parent's speaker is USB), else ALSA's `default`. Any other name is
    /// taken as it is. Pure: the card list in, the choice out.
    public static func choose(_ requested: String, cards: [SoundCard]) -> DeviceChoice {
        guard requested == auto else {
            return DeviceChoice(device: requested, card: nil, reason: "as configured")
        }
        // A USB card that only records (a webcam's microphone, often plugged in before the
        // speaker and so numbered before it) was chosen, and every line was refused there
        // for good, the jack or the speaker beside it unused.
        if let usb = cards.sorted(by: { $0.index < $1.index }).first(where: { $0.isUSB && $0.plays != false }) {
            return DeviceChoice(
                device: usb.playbackName, card: usb,
                reason: "auto: the first USB audio card, \(usb.label)")
        }
        let others = cards.isEmpty
            ? "no sound card at all"
            : "no USB audio card that plays among " + cards.map { $0.label + ($0.plays == false ? " (records only)" : "") }.joined(separator: ", ")
        return DeviceChoice(device: "default", card: nil, reason: "auto: \(others), so ALSA's default")
    }

    /// Every card the kernel has, through ALSA's control interface (`snd_card_next`,
    /// `snd_ctl_card_info`). A card that cannot be opened (no permission) is listed with
    /// what `/proc/asound` would not tell either: its index only.
    public static func list() -> [SoundCard] {
        pirate_hunter_alsa_silence_errors()
        var cards: [SoundCard] = []
        var index: Int32 = -1
        while snd_card_next(&index) >= 0 && index >= 0 {
            cards.append(card(index))
        }
        return cards
    }

    /// Whether any PCM device of the card has a playback stream (`snd_ctl_pcm_next_device`,
    /// then `snd_ctl_pcm_info` for playback); nil when the card does not say.
    static func hasPlayback(_ ctl: OpaquePointer) -> Bool? {
        var info: OpaquePointer?
        guard snd_pcm_info_malloc(&info) >= 0, let info else { return nil }
        defer { snd_pcm_info_free(info) }
        var device: Int32 = -1
        for _ in 0..<32 {
            guard snd_ctl_pcm_next_device(ctl, &device) >= 0 else { return nil }
            // -1: no more devices; none of them plays (or there was none: a MIDI card).
            guard device >= 0 else { return false }
            snd_pcm_info_set_device(info, UInt32(device))
            snd_pcm_info_set_subdevice(info, 0)
            snd_pcm_info_set_stream(info, SND_PCM_STREAM_PLAYBACK)
            if snd_ctl_pcm_info(ctl, info) >= 0 { return true }
        }
        return nil
    }

    static func card(_ index: Int32) -> SoundCard {
        var unknown = SoundCard(index: Int(index), id: "\(index)", name: "?", driver: "?", longName: "?")
        var ctl: OpaquePointer?
        guard snd_ctl_open(&ctl, "hw:\(index)", 0) >= 0, let ctl else { return unknown }
        defer { snd_ctl_close(ctl) }
        var info: OpaquePointer?
        guard snd_ctl_card_info_malloc(&info) >= 0, let info else { return unknown }
        defer { snd_ctl_card_info_free(info) }
        guard snd_ctl_card_info(ctl, info) >= 0 else { return unknown }
        func text(_ value: UnsafePointer<CChar>?) -> String { value.map { String(cString: $0) } ?? "" }
        unknown.id = text(snd_ctl_card_info_get_id(info))
        unknown.name = text(snd_ctl_card_info_get_name(info))
        unknown.driver = text(snd_ctl_card_info_get_driver(info))
        unknown.longName = text(snd_ctl_card_info_get_longname(info))
        unknown.plays = hasPlayback(ctl)
        return unknown
    }

    /// `choose` over the cards the kernel has now.
    public static func resolve(_ requested: String) -> DeviceChoice {
        requested == auto ? choose(requested, cards: list()) : choose(requested, cards: [])
    }
}

extension PlaybackConfiguration {
    /// Opens `device`, `auto` resolved over the cards present now; says which card was
    /// opened and why when it was a choice.
    func openDevice() throws(AudioError) -> PCMDevice {
        try openChosenDevice().device
    }

    /// `openDevice`, and whether `auto` fell back to ALSA's default for want of a USB card.
    func openChosenDevice() throws(AudioError) -> (device: PCMDevice, fallback: Bool) {
        let choice = chooseDevice(device)
        let opened = try PCMDevice(name: choice.device, sampleRate: sampleRate, latencyMicroseconds: latencyMicroseconds)
        if device == SoundCards.auto { log("opened '\(choice.device)' (\(choice.reason))") }
        return (opened, device == SoundCards.auto && choice.card == nil)
    }
}
