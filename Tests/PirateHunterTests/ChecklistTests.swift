import Audio
import Foundation
import Testing

@testable import PirateHunter

/// The checklist's decisions from made-up facts: a Pi 4 with the jack and a USB speaker, a
/// Pi 5 on HDMI, muted and quiet mixers, adapters blocked, down, without LE.
enum Cards {
    static let jack = SoundCard(index: 0, id: "Headphones", name: "bcm2835 Headphones", driver: "bcm2835_headpho", longName: "bcm2835 Headphones")
    static let hdmi0 = SoundCard(index: 1, id: "vc4hdmi0", name: "vc4-hdmi-0", driver: "vc4-hdmi", longName: "vc4-hdmi-0")
    static let usb = SoundCard(index: 3, id: "Device", name: "USB Audio Device", driver: "USB-Audio", longName: "GeneralPlus USB Audio Device at usb-0000:01:00.0-1.3, full speed")
}

/// Everything green: a Pi 4 with a USB speaker, `auto`, adapter up with LE, the service's caps.
func readyFacts() -> CheckFacts {
    var facts = CheckFacts()
    facts.bluetooth.adapters = [CheckFacts.Adapter(name: "hci0", isUp: true, lowEnergy: true, extendedAdvertising: false, extendedScanning: false)]
    facts.bluetooth.netRaw = true
    facts.bluetooth.netAdmin = true
    facts.bluetooth.bluetoothdRunning = true
    facts.audio.cards = [Cards.jack, Cards.hdmi0, Cards.usb]
    facts.audio.choice = SoundCards.choose("auto", cards: facts.audio.cards)
    facts.audio.defaultCard = 0
    facts.audio.mixer = .success([MixerControl(name: "PCM", percent: 80, decibels: -5.5, muted: false)])
    facts.audio.played = .some(nil)
    facts.voice.voicesDirectory = "/usr/share/pirate-hunter/voices"
    facts.voice.engineVersion = "1.51"
    facts.voice.voiceFile = ("/usr/share/pirate-hunter/voices/pirate", true)
    facts.voice.cacheDirectory = "/var/cache/pirate-hunter"
    facts.configuration.file = "/etc/pirate-hunter/hunter.json"
    // Paired (issue #25): an unpaired Pi is a warning.
    facts.configuration.game = "ABCD"
    facts.units = [CheckFacts.Unit(name: "pirate-hunter.service", path: "/usr/lib/systemd/system/pirate-hunter.service", enabled: true, runningAs: ["pirate-hunter"], user: "pirate-hunter")]
    // The running hunter's page and its code (issue #26).
    facts.page = CheckFacts.Page(enabled: true, address: "http://piratepi.local:8080/", hunterCode: "042917")
    return facts
}

extension Checklist {
    func line(_ section: CheckLine.Section, _ name: String) -> CheckLine? {
        lines.first { $0.section == section && $0.name == name }
    }
}

@Suite struct ChecklistTests {
    /// A clue recorded into the parent's home: `check` (the parent) reads it, the service
    /// (ProtectHome=yes) cannot. A warning with where to put it.
    @Test func aFileTheServiceCannotSeeIsAWarning() {
        var facts = readyFacts()
        facts.configuration.hiddenFromService = ["/home/pi/clue1.wav"]
        let list = Checklist(facts)
        #expect(list.line(.configuration, "files")?.status == .warn)
        #expect(list.line(.configuration, "files")?.detail.contains("/home/pi/clue1.wav") == true)
        #expect(list.line(.configuration, "files")?.fix?.contains("/etc/pirate-hunter/") == true)
        #expect(Checklist(readyFacts()).line(.configuration, "files") == nil)
    }

    /// The box's Pi: its `treasure.json` is checked beside `hunter.json` (only the hunter's
    /// was: "ready", while the box exited 78 with a reward too long and stayed down). Its
    /// pairing stands for the Pi's.
    @Test func theBoxsFileIsCheckedToo() {
        var facts = readyFacts()
        facts.configuration.game = nil
        facts.configuration.box = .init(path: "/etc/pirate-hunter/treasure.json", problems: [CLIError(.config, "/etc/pirate-hunter/treasure.json: treasure.reward: is 47 bytes long")])
        let broken = Checklist(facts)
        #expect(broken.line(.configuration, "box file")?.status == .fail)
        #expect(broken.line(.configuration, "box file")?.detail.contains("treasure.reward") == true)
        #expect(broken.line(.configuration, "game key")?.status == .warn)
        facts.configuration.box = .init(path: "/etc/pirate-hunter/treasure.json", problems: [], game: "ABCD")
        let box = Checklist(facts)
        #expect(box.line(.configuration, "box file")?.status == .ok)
        #expect(box.line(.configuration, "box file")?.detail == "/etc/pirate-hunter/treasure.json is valid (the treasure box's; paired: game ABCD)")
        #expect(box.line(.configuration, "game key")?.status == .ok, "the box's Pi is paired through its own file")
        // A hunter's Pi without the box's file: no such line.
        #expect(Checklist(readyFacts()).line(.configuration, "box file") == nil)
    }

    /// A hunter that crash-looped past its start limit (or exited with a code systemd does
    /// not restart) is enabled and not running: a warning naming where to look, not "ok"
    /// and "ready". A Pi where neither unit is enabled starts nothing at boot.
    @Test func aServiceThatStoppedOrNeverStartsIsAWarning() {
        var facts = readyFacts()
        let hunterPath = "/usr/lib/systemd/system/pirate-hunter.service", boxPath = "/usr/lib/systemd/system/pirate-treasure.service"
        facts.units = [CheckFacts.Unit(name: "pirate-hunter.service", path: hunterPath, enabled: true, runningAs: [], user: "pirate-hunter"),
                       CheckFacts.Unit(name: "pirate-treasure.service", path: boxPath, enabled: false, runningAs: [], user: "pirate-hunter")]
        let stopped = Checklist(facts)
        #expect(stopped.line(.service, "pirate-hunter.service")?.status == .warn)
        #expect(stopped.line(.service, "pirate-hunter.service")?.fix?.contains("journalctl -u pirate-hunter.service") == true)
        #expect(stopped.line(.service, "pirate-treasure.service")?.status == .ok, "the box's unit on a hunter's Pi")
        #expect(stopped.line(.service, "at boot") == nil)
        facts.units[0].enabled = false
        let never = Checklist(facts)
        #expect(never.line(.service, "pirate-hunter.service")?.status == .ok)
        #expect(never.line(.service, "at boot")?.status == .warn)
        // Run by hand (not enabled): something runs, nothing to warn of.
        facts.units[0].runningAs = ["pi"]
        #expect(Checklist(facts).line(.service, "at boot") == nil)
        // The ready Pi: enabled and running.
        #expect(Checklist(readyFacts()).line(.service, "pirate-hunter.service")?.status == .ok)
    }

    @Test func theRunningHuntersPageAndCodeArePrinted() {
        let list = Checklist(readyFacts())
        #expect(list.line(.service, "page")?.detail == "http://piratepi.local:8080/ on a phone on the same Wi-Fi; setup code 042917")
        var facts = readyFacts()
        facts.page.hunterCode = nil
        #expect(Checklist(facts).line(.service, "page")?.status == .skip)
        facts.page.enabled = false
        #expect(Checklist(facts).line(.service, "page")?.detail == "off (web.enabled false)")
    }

    @Test func aReadyPiIsAllGreenAndExitsZero() {
        let list = Checklist(readyFacts())
        #expect(list.exitCode == .ok)
        #expect(list.lines.allSatisfy { $0.status == .ok }, "\(list.lines.filter { $0.status != .ok })")
        #expect(list.line(.audio, "device")?.detail.contains("plughw:CARD=Device,DEV=0") == true)
        #expect(list.text.hasSuffix("ready\n"))
    }

    @Test func everyFailureCarriesAFixAndAnExitCode() {
        var facts = readyFacts()
        facts.bluetooth.adapters[0].softBlocked = true
        facts.audio.cards = []
        facts.audio.played = .some(AudioError("cannot open audio device 'default': No such file or directory", code: -2))
        facts.voice.linePack = "x: cannot read line pack"
        facts.configuration.error = "hunter.json: audio.volume_db: 99 is out of range"
        let list = Checklist(facts)
        let failures = list.lines.filter { $0.status == .fail }
        #expect(failures.count == 5)
        #expect(failures.allSatisfy { $0.fix?.isEmpty == false && $0.code != nil })
        #expect(list.lines.filter { $0.status == .warn }.allSatisfy { $0.fix?.isEmpty == false })
        #expect(list.line(.bluetooth, "hci0")?.fix == "sudo rfkill unblock bluetooth")
    }

    @Test func theExitCodeIsTheFirstFailuresClass() {
        var facts = readyFacts()
        facts.configuration.error = "bad"
        #expect(Checklist(facts).exitCode == .config)
        facts.voice.engine = "eSpeak NG did not start"
        #expect(Checklist(facts).exitCode == .noInput)
        facts.bluetooth.netRaw = false
        #expect(Checklist(facts).exitCode == .noPermission)
        facts.bluetooth.kernel = .missing
        #expect(Checklist(facts).exitCode == .unavailable)
    }

    @Test func thisMachineNoBluetoothNoCardSaysSoWithFixes() {
        var facts = CheckFacts()
        facts.bluetooth.kernel = .missing
        facts.audio.choice = SoundCards.choose("auto", cards: [])
        facts.audio.played = .some(AudioError("cannot open audio device 'default': No such file or directory", code: -2))
        let list = Checklist(facts)
        #expect(list.line(.bluetooth, "kernel")?.fix?.contains("modprobe bluetooth") == true)
        #expect(list.lines.filter { $0.section == .bluetooth }.count == 1, "nothing more to say without the kernel's support")
        #expect(list.line(.audio, "cards")?.status == .fail)
        #expect(list.line(.audio, "cards")?.fix?.contains("USB speaker") == true)
        #expect(list.exitCode == .unavailable)
    }

    @Test func theJackWhileAUSBSpeakerIsPluggedInIsAWarningWithTheFix() {
        var facts = readyFacts()
        facts.audio.configured = "default"
        facts.audio.choice = SoundCards.choose("default", cards: facts.audio.cards)
        let list = Checklist(facts)
        let speaker = list.line(.audio, "speaker")
        #expect(speaker?.status == .warn)
        #expect(speaker?.detail == "playing on the headphone jack (card 0 'bcm2835 Headphones' (bcm2835_headpho)) while the USB card card 3 'USB Audio Device' (USB-Audio) is plugged in")
        #expect(speaker?.fix?.contains(#""device": "auto""#) == true)
        #expect(speaker?.fix?.contains("plughw:CARD=Device,DEV=0") == true)
        #expect(list.exitCode == .ok, "a warning is not a failure")
    }

    @Test func aPi5OnHDMIWithAUSBCardWarnsAndHDMIAsPlughwFails() {
        var facts = readyFacts()
        facts.audio.cards = [SoundCard(index: 0, id: "vc4hdmi0", name: "vc4-hdmi-0", driver: "vc4-hdmi", longName: "vc4-hdmi-0"), Cards.usb]
        facts.audio.configured = "plughw:CARD=vc4hdmi0,DEV=0"
        facts.audio.choice = SoundCards.choose(facts.audio.configured, cards: facts.audio.cards)
        let list = Checklist(facts)
        #expect(list.line(.audio, "speaker")?.status == .warn)
        let hdmi = list.line(.audio, "hdmi")
        #expect(hdmi?.status == .fail)
        #expect(hdmi?.fix?.contains("sysdefault:CARD=vc4hdmi0") == true)
        // Named the right way, HDMI is fine (still a warning while the USB card is there).
        facts.audio.configured = "sysdefault:CARD=vc4hdmi0"
        facts.audio.choice = SoundCards.choose(facts.audio.configured, cards: facts.audio.cards)
        #expect(Checklist(facts).line(.audio, "hdmi") == nil)
    }

    @Test func aMutedOrQuietCardIsCaughtWithTheAmixerLine() {
        var facts = readyFacts()
        facts.audio.mixer = .success([MixerControl(name: "PCM", percent: 60, decibels: -12, muted: true)])
        var mixer = Checklist(facts).line(.audio, "mixer")
        #expect(mixer?.status == .fail)
        #expect(mixer?.detail == "muted: PCM 60% (-12.0 dB) muted")
        #expect(mixer?.fix == "amixer -c 3 sset 'PCM' 80% unmute; sudo alsactl store keeps it after a reboot")
        facts.audio.mixer = .success([MixerControl(name: "Speaker", percent: 10, muted: false)])
        mixer = Checklist(facts).line(.audio, "mixer")
        #expect(mixer?.status == .warn)
        #expect(mixer?.fix?.hasPrefix("amixer -c 3 sset 'Speaker' 80%") == true)
        // A muted microphone or line input level is not the speaker's path.
        facts.audio.mixer = .success([
            MixerControl(name: "Master", percent: 80, muted: false), MixerControl(name: "Mic", percent: 0, muted: true),
            MixerControl(name: "Line", percent: 10),
        ])
        #expect(Checklist(facts).line(.audio, "mixer")?.status == .ok)
        // A card without any of the usual names: every control counts.
        facts.audio.mixer = .success([MixerControl(name: "Lautsprecher", percent: 5)])
        #expect(Checklist(facts).line(.audio, "mixer")?.status == .warn)
    }

    @Test func cardsAreFoundBehindTheNamesALSATakes() {
        let cards = [Cards.jack, Cards.hdmi0, Cards.usb]
        #expect(Checklist.card(of: "plughw:CARD=Device,DEV=0", cards: cards, defaultCard: nil) == Cards.usb)
        #expect(Checklist.card(of: "hw:3,0", cards: cards, defaultCard: nil) == Cards.usb)
        #expect(Checklist.card(of: "sysdefault:CARD=vc4hdmi0", cards: cards, defaultCard: nil) == Cards.hdmi0)
        #expect(Checklist.card(of: "hdmi:vc4hdmi0", cards: cards, defaultCard: nil) == Cards.hdmi0)
        #expect(Checklist.card(of: "default", cards: cards, defaultCard: 0) == Cards.jack)
        #expect(Checklist.card(of: "default", cards: cards, defaultCard: nil) == nil)
        #expect(Checklist.card(of: "null", cards: cards, defaultCard: 0) == nil)
    }

    @Test func adaptersDownWithoutLEOrWithoutCapabilities() {
        var facts = readyFacts()
        facts.bluetooth.adapters = []
        #expect(Checklist(facts).line(.bluetooth, "adapter")?.status == .fail)
        facts.bluetooth.adapters = [CheckFacts.Adapter(name: "hci0", isUp: false, lowEnergy: false)]
        facts.bluetooth.netAdmin = false
        facts.bluetooth.netRaw = false
        var list = Checklist(facts)
        #expect(list.line(.bluetooth, "hci0")?.status == .fail)
        #expect(list.line(.bluetooth, "hci0 LE")?.status == .fail)
        #expect(list.line(.bluetooth, "hci0 commands")?.status == .skip)
        #expect(list.line(.bluetooth, "capabilities")?.status == .fail)
        #expect(list.exitCode == .noPermission)
        // The unit grants them: the shell's lack is a warning, the adapter is the unit's to bring up.
        facts.bluetooth.unitGrantsCapabilities = true
        facts.bluetooth.adapters[0].lowEnergy = true
        list = Checklist(facts)
        #expect(list.line(.bluetooth, "hci0")?.status == .ok)
        #expect(list.line(.bluetooth, "capabilities")?.status == .warn)
        #expect(list.exitCode == .ok)
    }

    @Test func jsonIsOneObjectPerLineThenASummary() throws {
        var facts = readyFacts()
        facts.audio.mixer = .success([MixerControl(name: "PCM", percent: 60, muted: true)])
        let lines = Checklist(facts).jsonLines
        #expect(lines.count == Checklist(facts).lines.count + 1)
        for line in lines {
            #expect(try JSONSerialization.jsonObject(with: Data(line.utf8)) is [String: Any])
        }
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(lines[lines.count - 1].utf8)) as? [String: Any])
        #expect(summary["summary"] as? String == "not ready")
        #expect(summary["exit"] as? Int == 69)
    }
}
