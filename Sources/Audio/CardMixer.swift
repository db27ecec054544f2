import CALSA

/// One playback control of a card's hardware mixer (`alsamixer`'s columns), as ALSA's simple
/// mixer API reports it.
public struct MixerControl: Sendable, Equatable, Codable {
    /// `PCM`, `Speaker`, `Headphone`, `Master`.
    public var name: String
    /// 0 to 100: where the first channel's volume sits in its range.
    public var percent: Int
    /// The first channel's level in dB, when the card says.
    public var decibels: Double?
    /// The playback switch is off (nil: the control has no switch).
    public var muted: Bool?

    public init(name: String, percent: Int, decibels: Double? = nil, muted: Bool? = nil) {
        self.name = name
        self.percent = percent
        self.decibels = decibels
        self.muted = muted
    }
}

public enum CardMixer {
    /// The playback controls of card `index` (`hw:N`): those with a volume, and switch-only
    /// ones (a USB speaker's `PCM Playback Switch`). Throws when the card's mixer cannot be opened.
    public static func controls(card index: Int) throws(AudioError) -> [MixerControl] {
        pirate_hunter_alsa_silence_errors()
        var handle: OpaquePointer?
        var err = snd_mixer_open(&handle, 0)
        guard err >= 0, let mixer = handle else { throw AudioError("cannot open a mixer: \(alsaMessage(err))", code: err) }
        defer { snd_mixer_close(mixer) }
        let device = "hw:\(index)"
        err = snd_mixer_attach(mixer, device)
        if err >= 0 { err = snd_mixer_selem_register(mixer, nil, nil) }
        if err >= 0 { err = snd_mixer_load(mixer) }
        guard err >= 0 else { throw AudioError("cannot read the mixer of '\(device)': \(alsaMessage(err))", code: err) }

        var controls: [MixerControl] = []
        var element = snd_mixer_first_elem(mixer)
        while let elem = element {
            defer { element = snd_mixer_elem_next(elem) }
            guard snd_mixer_selem_is_active(elem) != 0 else { continue }
            let hasVolume = snd_mixer_selem_has_playback_volume(elem) != 0
            let hasSwitch = snd_mixer_selem_has_playback_switch(elem) != 0
            guard hasVolume || hasSwitch else { continue }
            let name = snd_mixer_selem_get_name(elem).map { String(cString: $0) } ?? "?"
            var percent = 100
            var decibels: Double?
            if hasVolume {
                var low = 0, high = 0, value = 0
                snd_mixer_selem_get_playback_volume_range(elem, &low, &high)
                snd_mixer_selem_get_playback_volume(elem, SND_MIXER_SCHN_FRONT_LEFT, &value)
                percent = high > low ? Int((Double(value - low) * 100 / Double(high - low)).rounded()) : 100
                var centibels = 0
                if snd_mixer_selem_get_playback_dB(elem, SND_MIXER_SCHN_FRONT_LEFT, &centibels) >= 0 {
                    decibels = Double(centibels) / 100
                }
            }
            var muted: Bool?
            if hasSwitch {
                var on: Int32 = 1
                snd_mixer_selem_get_playback_switch(elem, SND_MIXER_SCHN_FRONT_LEFT, &on)
                muted = on == 0
            }
            controls.append(MixerControl(name: name, percent: percent, decibels: decibels, muted: muted))
        }
        return controls
    }

    /// The card ALSA's PCM `name` plays on (`default` included), opened without blocking and
    /// closed at once; nil when it cannot be opened (no card, busy) or is not a card (`null`).
    public static func card(ofPCM name: String) -> Int? {
        pirate_hunter_alsa_silence_errors()
        var handle: OpaquePointer?
        guard snd_pcm_open(&handle, name, SND_PCM_STREAM_PLAYBACK, Int32(SND_PCM_NONBLOCK)) >= 0, let pcm = handle else {
            return nil
        }
        defer { snd_pcm_close(pcm) }
        var info: OpaquePointer?
        guard snd_pcm_info_malloc(&info) >= 0, let info else { return nil }
        defer { snd_pcm_info_free(info) }
        guard snd_pcm_info(pcm, info) >= 0 else { return nil }
        let card = snd_pcm_info_get_card(info)
        return card >= 0 ? Int(card) : nil
    }
}
