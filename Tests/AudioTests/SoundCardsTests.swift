import Audio
import FoundationEssentials
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The card lists real Pis report (`/proc/asound/cards` on Pi OS Lite Bookworm, as
/// `snd_ctl_card_info` gives them: id, name, driver, long name).
enum PiCards {
    static let jack = SoundCard(index: 0, id: "Headphones", name: "bcm2835 Headphones", driver: "bcm2835_headpho", longName: "bcm2835 Headphones")
    static func hdmi(_ index: Int, port: Int) -> SoundCard {
        SoundCard(index: index, id: "vc4hdmi\(port)", name: "vc4-hdmi-\(port)", driver: "vc4-hdmi", longName: "vc4-hdmi-\(port)")
    }
    static let pi4USB = SoundCard(
        index: 3, id: "Device", name: "USB Audio Device", driver: "USB-Audio",
        longName: "GeneralPlus USB Audio Device at usb-0000:01:00.0-1.3, full speed")
    static let pi5USB = SoundCard(
        index: 2, id: "UACDemoV10", name: "UACDemoV1.0", driver: "USB-Audio",
        longName: "Jieli Technology UACDemoV1.0 at usb-xhci-hcd.1-1, full speed")

    static let pi4 = [jack, hdmi(1, port: 0), hdmi(2, port: 1), pi4USB]
    static let pi4NoUSB = [jack, hdmi(1, port: 0), hdmi(2, port: 1)]
    static let pi5 = [hdmi(0, port: 0), hdmi(1, port: 1), pi5USB]
    static let pi5NoUSB = [hdmi(0, port: 0), hdmi(1, port: 1)]
}

@Suite struct SoundCardChoiceTests {
    @Test func aPi4WithAUSBSpeakerPlaysOnTheSpeakerNotTheJack() {
        let choice = SoundCards.choose("auto", cards: PiCards.pi4)
        #expect(choice.device == "plughw:CARD=Device,DEV=0")
        #expect(choice.card == PiCards.pi4USB)
        #expect(choice.reason == "auto: the first USB audio card, card 3 'USB Audio Device' (USB-Audio)")
    }

    @Test func aPi5WithAUSBSpeakerPlaysOnTheSpeakerNotHDMI() {
        let choice = SoundCards.choose("auto", cards: PiCards.pi5)
        #expect(choice.device == "plughw:CARD=UACDemoV10,DEV=0")
        #expect(choice.card?.index == 2)
    }

    @Test func withoutAUSBCardAutoIsALSAsDefaultAndSaysWhy() {
        let pi4 = SoundCards.choose("auto", cards: PiCards.pi4NoUSB)
        #expect(pi4.device == "default" && pi4.card == nil)
        #expect(pi4.reason.contains("no USB audio card that plays among card 0 'bcm2835 Headphones' (bcm2835_headpho)"))
        #expect(SoundCards.choose("auto", cards: PiCards.pi5NoUSB).device == "default")
        let none = SoundCards.choose("auto", cards: [])
        #expect(none.device == "default")
        #expect(none.reason == "auto: no sound card at all, so ALSA's default")
    }

    @Test func theFirstUSBCardByIndexWinsWhateverTheListOrder() {
        let second = SoundCard(index: 4, id: "Speaker", name: "USB Speaker", driver: "USB-Audio", longName: "x at usb-1, full speed")
        #expect(SoundCards.choose("auto", cards: [second, PiCards.pi4USB, PiCards.jack]).card == PiCards.pi4USB)
    }

    /// A USB webcam's microphone numbered before the speaker (plugged in first) records
    /// only: the speaker is chosen, and with no USB card that plays, ALSA's default (the
    /// microphone was chosen and every line refused there for good).
    @Test func aUSBCardThatOnlyRecordsIsPassedOver() {
        let webcam = SoundCard(index: 1, id: "C920", name: "HD Pro Webcam C920", driver: "USB-Audio",
                               longName: "HD Pro Webcam C920 at usb-0000:01:00.0-1.1, high speed", plays: false)
        var speaker = PiCards.pi4USB
        speaker.plays = true
        #expect(SoundCards.choose("auto", cards: [PiCards.jack, webcam, speaker]).card == speaker)
        let alone = SoundCards.choose("auto", cards: [PiCards.jack, webcam])
        #expect(alone.device == "default" && alone.card == nil)
        #expect(alone.reason.contains("card 1 'HD Pro Webcam C920' (USB-Audio) (records only)"), "\(alone.reason)")
    }

    @Test func anyOtherNameIsTakenAsItIs() {
        for name in ["default", "plughw:CARD=Device,DEV=0", "sysdefault:CARD=vc4hdmi0", "hdmi:CARD=vc4hdmi0,DEV=0", "null"] {
            let choice = SoundCards.choose(name, cards: PiCards.pi4)
            #expect(choice.device == name && choice.card == nil && choice.reason == "as configured")
        }
    }

    @Test func cardsAreToldApartAndHDMIIsNeverOpenedAsPlughw() {
        #expect(PiCards.pi4.map(\.kind) == [.jack, .hdmi, .hdmi, .usb])
        #expect(PiCards.pi5.map(\.kind) == [.hdmi, .hdmi, .usb])
        #expect(PiCards.hdmi(1, port: 0).playbackName == "sysdefault:CARD=vc4hdmi0")
        #expect(PiCards.jack.playbackName == "plughw:CARD=Headphones,DEV=0")
        #expect(PiCards.pi4USB.playbackName == "plughw:CARD=Device,DEV=0")
        // snd-aloop and snd-dummy (the VM's cards) are neither.
        #expect(SoundCard(index: 0, id: "Loopback", name: "Loopback", driver: "Loopback", longName: "Loopback 1").kind == .other)
    }
}

@Suite struct SoundCardEnumerationTests {
    /// The kernel's own list: ` 0 [Headphones     ]: bcm2835_headpho - bcm2835 Headphones`.
    static func procCards() -> [(index: Int, id: String)] {
        guard let file = fopen("/proc/asound/cards", "r") else { return [] }
        defer { fclose(file) }
        var result: [(Int, String)] = []
        var buffer = [CChar](repeating: 0, count: 512)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard let open = line.firstIndex(of: "["), let close = line.firstIndex(of: "]"),
                let index = Int(line[..<open].filter { $0 != " " })
            else { continue }
            result.append((index, String(line[line.index(after: open)..<close].filter { $0 != " " })))
        }
        return result
    }

    @Test func alsaListsTheCardsTheKernelHas() {
        // Here (no sound card) both are empty; in the VM, snd-aloop's Loopback and snd-dummy's Dummy.
        let cards = SoundCards.list()
        let kernel = Self.procCards()
        #expect(cards.map(\.index) == kernel.map(\.index))
        #expect(cards.map(\.id) == kernel.map(\.id))
        #expect(cards.allSatisfy { !$0.driver.isEmpty && $0.driver != "?" })
    }

    @Test func autoOverTheCardsPresentIsTheChoiceOverTheirList() {
        #expect(SoundCards.resolve("auto") == SoundCards.choose("auto", cards: SoundCards.list()))
        #expect(SoundCards.resolve("plughw:1,0").device == "plughw:1,0")
    }
}
