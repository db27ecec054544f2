import Audio
import FoundationEssentials
import Synchronization
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

func fileDevice(_ path: String) -> String { "file:FILE=\(path),FORMAT=wav" }

func constant(_ value: Int16, frames: Int, rate: Int = 22050) -> PCMBuffer {
    PCMBuffer(sampleRate: rate, channels: 1, samples: [Int16](repeating: value, count: frames))
}

/// Collects playback events from the playback thread.
final class EventLog: Sendable {
    let events = Mutex<[PlaybackEvent]>([])
    let lines = Mutex<[String]>([])
    func configure(_ configuration: inout PlaybackConfiguration) {
        configuration.observer = { event in self.events.withLock { $0.append(event) } }
        configuration.log = { line in self.lines.withLock { $0.append(line) } }
    }
    var recovered: [Int32] {
        events.withLock { list in
            list.compactMap { if case .recovered(let error) = $0 { return error } else { return nil } }
        }
    }
    var unavailable: Int {
        events.withLock { list in list.filter { if case .deviceUnavailable = $0 { true } else { false } }.count }
    }
}

/// Waits (for at most a minute) until `condition` holds; false if it never did.
func eventually(_ condition: () -> Bool) -> Bool {
    for _ in 0..<30_000 {
        if condition() { return true }
        usleep(2_000)
    }
    return false
}

func index(of needle: [Int16], in haystack: [Int16]) -> Int? {
    guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
    for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
        if Array(haystack[start..<start + needle.count]) == needle { return start }
    }
    return nil
}

@Suite struct WAVTests {
    /// `--device file:x.wav` is what a user types; ALSA alone would write raw samples there.
    @Test func aFileDeviceNamedWAVWritesAWAV() throws {
        #expect(PCMDevice.normalizedName("file:x.wav") == "file:FILE=x.wav,FORMAT=wav")
        #expect(PCMDevice.normalizedName("file:FILE=/tmp/a.WAV") == "file:FILE=/tmp/a.WAV,FORMAT=wav")
        #expect(PCMDevice.normalizedName("file:FILE=/tmp/a.wav,FORMAT=raw") == "file:FILE=/tmp/a.wav,FORMAT=raw")
        #expect(PCMDevice.normalizedName("file:/tmp/a.wav,raw") == "file:/tmp/a.wav,raw")
        #expect(PCMDevice.normalizedName("file:/tmp/a.pcm") == "file:/tmp/a.pcm")
        #expect(PCMDevice.normalizedName("plughw:1,0") == "plughw:1,0")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("typed-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let device = try PCMDevice(name: "file:" + path)
        let samples = constant(1000, frames: 2205).samples
        _ = try samples.withUnsafeBufferPointer { (buffer) throws(AudioError) in try device.write(buffer) }
        device.close()
        let written = try WAVFile.read(path: path)
        #expect(written.sampleRate == 22050 && written.frameCount >= 2205)
    }

    @Test func roundTrip16BitMono() throws {
        let buffer = PCMBuffer(sampleRate: 22050, channels: 1, samples: [0, 1, -1, 32767, -32768, 1234])
        let decoded = try WAVFile.decode(WAVFile.encode(buffer), name: "x.wav")
        #expect(decoded == buffer)
    }

    @Test func reads8BitStereoAndMixesToMono() throws {
        var bytes = WAVFile.encode(PCMBuffer(sampleRate: 8000, channels: 2, samples: [0, 0]))
        // Rewrite the header as 8-bit stereo with four frames.
        bytes[34] = 8
        bytes[32] = 2
        bytes[28] = 0x80; bytes[29] = 0x3E  // byte rate 16000
        bytes.removeLast(4)
        bytes[40] = 8; bytes[41] = 0; bytes[42] = 0; bytes[43] = 0
        bytes += [128, 128, 255, 255, 0, 0, 192, 64]
        let decoded = try WAVFile.decode(bytes, name: "eight.wav")
        #expect(decoded.channels == 2 && decoded.sampleRate == 8000)
        #expect(decoded.samples == [0, 0, 127 << 8, 127 << 8, -32768, -32768, 64 << 8, -64 << 8])
        #expect(decoded.mono().samples == [0, 127 << 8, -32768, 0])
    }

    @Test func refusesWhatItCannotPlayNamingTheFile() {
        var bytes = WAVFile.encode(PCMBuffer(sampleRate: 22050, channels: 1, samples: [1, 2, 3]))
        bytes[34] = 24
        #expect(throws: WAVError("deep.wav: 24-bit samples (only 8 or 16-bit PCM is supported)")) {
            try WAVFile.decode(bytes, name: "deep.wav")
        }
        bytes = WAVFile.encode(PCMBuffer(sampleRate: 22050, channels: 1, samples: [1, 2, 3]))
        bytes[22] = 6
        #expect(throws: WAVError("six.wav: 6 channels (only mono or stereo is supported)")) {
            try WAVFile.decode(bytes, name: "six.wav")
        }
        #expect(throws: WAVError("text.wav: not a RIFF/WAVE file")) {
            try WAVFile.decode(Array("hello, not a wav".utf8), name: "text.wav")
        }
        bytes = WAVFile.encode(PCMBuffer(sampleRate: 22050, channels: 1, samples: [1, 2, 3]))
        bytes[20] = 3  // IEEE float
        #expect(throws: WAVError("float.wav: format code 3 is not PCM (only 8/16-bit PCM is supported)")) {
            try WAVFile.decode(bytes, name: "float.wav")
        }
    }

    @Test func resamplingKeepsPitchAndDuration() {
        let rate = 44100
        let samples = (0..<rate).map { Int16(10000 * sin(2 * Double.pi * 441 * Double($0) / Double(rate))) }
        let resampled = PCMBuffer(sampleRate: rate, channels: 1, samples: samples).resampled(to: 22050)
        #expect(resampled.sampleRate == 22050)
        #expect(resampled.frameCount == 22050)
        var crossings = 0
        for i in 1..<resampled.samples.count where (resampled.samples[i - 1] < 0) != (resampled.samples[i] < 0) {
            crossings += 1
        }
        #expect(abs(crossings - 882) <= 2)  // 441 Hz: two crossings per cycle
    }
}

@Suite struct MixerTests {
    @Test func volumeInDecibels() {
        var mixer = Mixer(sampleRate: 22050)
        mixer.setVolume(dB: -6.0206)
        mixer.play(constant(8000, frames: 100), slot: .speech)
        var out = [Int16](repeating: 0, count: 100)
        mixer.render(into: &out)
        #expect(out.allSatisfy { $0 == 4000 })
        mixer.setVolume(dB: -200)
        mixer.play(constant(8000, frames: 100), slot: .speech)
        mixer.render(into: &out)
        #expect(out.allSatisfy { abs(Int($0)) < 8000 })
    }

    @Test func replacingCrossFadesWithoutAStep() {
        var mixer = Mixer(sampleRate: 22050, fadeMilliseconds: 8)
        mixer.play(constant(8000, frames: 10_000), slot: .speech)
        var out = [Int16](repeating: 0, count: 300)
        mixer.render(into: &out)
        mixer.play(constant(-8000, frames: 10_000), slot: .speech)
        var after = [Int16](repeating: 0, count: 600)
        mixer.render(into: &after)
        let all = out + after
        let largestStep = zip(all, all.dropFirst()).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(largestStep <= 16000 / mixer.fadeFrames + 2)
        #expect(after[mixer.fadeFrames + 10] == -8000)
        #expect(after[0] > 0)  // the old line is still fading, not cut
    }

    @Test func clipsInsteadOfWrapping() {
        var mixer = Mixer(sampleRate: 22050)
        mixer.play(constant(30000, frames: 10), slot: .speech)
        mixer.play(constant(30000, frames: 10), slot: .effect)
        var out = [Int16](repeating: 0, count: 10)
        mixer.render(into: &out)
        #expect(out.allSatisfy { $0 == 32767 })
    }
}

/// ALSA for real, through its `file:` device.
@Suite struct ALSAPlaybackTests {
    @Test func arrrIsPlayedFrameForFrame() throws {
        let arrr = try WAVFile.readForMixer(path: Repository.voicesDirectory + "/arrr.wav", rate: 22050)
        #expect(arrr.frameCount > 2205)
        let scratch = try Scratch("audio-arrr")
        let path = scratch.path + "/arrr.wav"
        let playback = try ALSAPlayback.open(configuration: PlaybackConfiguration(device: fileDevice(path)))
        playback.play(arrr, slot: .effect)
        #expect(playback.waitUntilIdle())
        playback.shutdown()
        let played = try WAVFile.read(path: path)
        #expect(played.sampleRate == 22050 && played.channels == 1)
        let start = try #require(index(of: arrr.samples, in: played.samples))
        #expect(start == 0)
        // After it only the silent tail.
        #expect(played.samples[arrr.samples.count...].allSatisfy { $0 == 0 })
    }

    @Test func aLineReplacingALineFadesWithoutAGap() throws {
        let scratch = try Scratch("audio-replace")
        let path = scratch.path + "/replace.wav"
        var configuration = PlaybackConfiguration(device: fileDevice(path))
        configuration.emulateClock = true
        let playback = try ALSAPlayback.open(configuration: configuration)
        let first = constant(8000, frames: 22050 * 30)
        var second = constant(-8000, frames: 22050)
        for i in 0..<441 { second.samples[22050 - 441 + i] = Int16(-8000 * (441 - i) / 441) }  // its own ending
        playback.play(first, slot: .speech)
        #expect(eventually { playback.framesWritten >= 4410 })
        playback.play(second, slot: .speech)
        #expect(playback.waitUntilIdle())
        playback.shutdown()
        let x = try WAVFile.read(path: path).samples

        #expect(x.first == 8000)
        let switchAt = try #require(x.firstIndex { $0 < 8000 })
        #expect(switchAt >= 4410 && switchAt < first.frameCount)  // mid-way through the first line
        let largestStep = zip(x, x.dropFirst()).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(largestStep < 400)  // a cut would jump 16000
        // No gap: from the last frame of the first line's level to the second line's level.
        let lastHigh = try #require(x.lastIndex { $0 > 7900 })
        let firstLow = try #require(x.firstIndex { $0 < -7900 })
        let quiet = x[lastHigh..<firstLow].filter { abs(Int($0)) < 100 }.count
        #expect(quiet <= 220)  // one 10 ms period at most
        #expect(firstLow - lastHigh <= 400)
        // The whole second line was played.
        #expect(x.filter { $0 == -8000 }.count >= 22050 - 441 - 400)
    }

    @Test func effectAndSpeechAreMixed() throws {
        let scratch = try Scratch("audio-mix")
        let path = scratch.path + "/mix.wav"
        var configuration = PlaybackConfiguration(device: fileDevice(path))
        configuration.emulateClock = true
        let playback = try ALSAPlayback.open(configuration: configuration)
        playback.play(constant(3000, frames: 22050 * 3), slot: .speech)
        playback.play(constant(4000, frames: 4410), slot: .effect)
        #expect(playback.waitUntilIdle())
        playback.shutdown()
        let x = try WAVFile.read(path: path).samples
        #expect(x.filter { $0 == 7000 }.count == 4410)
        #expect(x.filter { $0 == 3000 }.count == 22050 * 3 - 4410)
    }

    @Test func anUnderrunIsRecoveredAndPlayContinues() throws {
        let scratch = try Scratch("audio-underrun")
        let path = scratch.path + "/underrun.wav"
        let log = EventLog()
        var configuration = PlaybackConfiguration(device: fileDevice(path))
        configuration.emulateClock = true
        log.configure(&configuration)
        let playback = try ALSAPlayback.open(configuration: configuration)
        // Each sample says where it is, so lost or repeated frames would show.
        let sound = PCMBuffer(sampleRate: 22050, channels: 1, samples: (0..<44100).map { Int16($0 % 30000 + 1) })
        playback.play(sound, slot: .speech)
        #expect(eventually { playback.framesWritten >= 4410 })
        playback.interruptStream()
        #expect(playback.waitUntilIdle())
        playback.shutdown()
        #expect(playback.recoveries >= 1)
        #expect(log.recovered.contains(-EBADFD))
        // Each recovery is one log line (stderr in the commands), naming the cause.
        let lines = log.lines.withLock { $0 }
        #expect(lines.count == log.recovered.count)
        #expect(lines.contains("recovered from write error (File descriptor in bad state)"))
        let x = try WAVFile.read(path: path).samples
        #expect(Array(x.prefix(4410)) == Array(sound.samples.prefix(4410)))
        // It went on to the end of the sound after the recovery.
        let tail = Array(sound.samples.suffix(11025))
        #expect(index(of: tail, in: x) != nil)
    }

    @Test func aDeviceOpenedOnThePlaybackThreadPlaysWhatWasPostedAtOnce() throws {
        let scratch = try Scratch("audio-thread-open")
        let path = scratch.path + "/thread-open.wav"
        let log = EventLog()
        var configuration = PlaybackConfiguration(device: fileDevice(path))
        log.configure(&configuration)
        let playback = ALSAPlayback(configuration: configuration)
        let sound = PCMBuffer(sampleRate: 22050, channels: 1, samples: (0..<5000).map { Int16($0 % 2000 + 1) })
        playback.play(sound, slot: .speech)
        #expect(playback.waitUntilIdle())
        #expect(playback.isDeviceOpen)
        playback.shutdown()
        #expect(!playback.isDeviceOpen)
        let x = try WAVFile.read(path: path).samples
        #expect(Array(x.prefix(5000)) == sound.samples)
        #expect(log.lines.withLock { $0 }.isEmpty)
    }

    /// `auto` without a USB card opens ALSA's default (a Pi's headphone jack); a USB card
    /// that comes later (the speaker plugged in after the start, or back after an unplug) is
    /// switched to once the playback is idle. It stayed on the jack for good: the child heard
    /// nothing until a restart. (The cards are the test's: the jack and the speaker are
    /// `file:` devices.)
    /// `auto` on the test's cards: the jack (ALSA's default) until plugged in, then a USB
    /// speaker; both `file:` devices in `scratch`, retried every 100 ms.
    final class Plug: Sendable {
        let isIn = Mutex(false)
        func plugIn() { isIn.withLock { $0 = true } }
    }

    struct AutoCards {
        let jack: String, usb: String
        let plug = Plug()
        let log = EventLog()
        var configuration = PlaybackConfiguration(device: SoundCards.auto)

        init(_ scratch: Scratch) {
            jack = scratch.path + "/jack.wav"
            usb = scratch.path + "/usb.wav"
            let speaker = SoundCard(index: 1, id: "Device", name: "USB Audio Device", driver: "USB-Audio", longName: "USB Audio Device at usb-1.2")
            configuration.retryInterval = .milliseconds(100)
            let (jack, usb, plug) = (jack, usb, plug)
            configuration.chooseDevice = { _ in
                plug.isIn.withLock { $0 }
                    ? DeviceChoice(device: fileDevice(usb), card: speaker, reason: "auto: the first USB audio card")
                    : DeviceChoice(device: fileDevice(jack), card: nil, reason: "auto: no USB audio card, so ALSA's default")
            }
            log.configure(&configuration)
        }
    }

    @Test func autoLeavesALSAsDefaultForAUSBCardThatComesLater() throws {
        let scratch = try Scratch("audio-auto-usb")
        let cards = AutoCards(scratch)
        let (jack, usb, log) = (cards.jack, cards.usb, cards.log)
        let playback = ALSAPlayback(configuration: cards.configuration)
        let before = PCMBuffer(sampleRate: 22050, channels: 1, samples: (0..<4000).map { Int16($0 % 1500 + 1) })
        let after = PCMBuffer(sampleRate: 22050, channels: 1, samples: (0..<4000).map { Int16(-($0 % 1700) - 1) })
        playback.play(before, slot: .speech)
        #expect(playback.waitUntilIdle())
        cards.plug.plugIn()
        #expect(eventually { log.lines.withLock { $0 }.contains { $0.contains("a USB audio card is here now") } })
        playback.play(after, slot: .speech)
        #expect(playback.waitUntilIdle())
        playback.shutdown()
        let onJack = try WAVFile.read(path: jack).samples, onUSB = try WAVFile.read(path: usb).samples
        #expect(index(of: before.samples, in: onJack) != nil, "the first line on the jack")
        #expect(index(of: after.samples, in: onUSB) != nil, "the next line on the USB speaker")
        // ALSA's default is reported as the fallback it is, the USB card as a device: the
        // hunter counts the speaker found only then (and says what was missed on the jack).
        let opened = log.events.withLock { list in
            list.compactMap { event -> String? in
                switch event {
                case .fallbackOpened: "fallback"
                case .deviceOpened: "device"
                default: nil
                }
            }
        }
        #expect(opened == ["fallback", "device"], "\(opened)")
    }

    /// The same while the detector clicks every 50 ms: each click woke the idle wait before
    /// its `retryInterval`, the look for a USB card never came, and every line went on to the
    /// jack for as long as the treasure was heard.
    @Test func autoLeavesALSAsDefaultForAUSBCardWhileTheDetectorClicks() throws {
        let scratch = try Scratch("audio-auto-usb-clicks")
        var cards = AutoCards(scratch)
        cards.configuration.tailMilliseconds = 0
        let log = cards.log
        let playback = ALSAPlayback(configuration: cards.configuration)
        let click = PCMBuffer(sampleRate: 22050, channels: 1, samples: [Int16](repeating: 900, count: 20))
        playback.play(click, slot: .effect)
        #expect(playback.waitUntilIdle())
        cards.plug.plugIn()
        var switched = false
        for _ in 0..<60 {
            playback.play(click, slot: .effect)
            usleep(50_000)
            if log.lines.withLock({ $0 }).contains(where: { $0.contains("a USB audio card is here now") }) {
                switched = true
                break
            }
        }
        playback.shutdown()
        #expect(switched, "clicks every 50 ms for 3 s, and still on the jack")
    }

    @Test func aMissingDeviceIsLoggedOnceAndNeverBlocks() throws {
        let log = EventLog()
        var configuration = PlaybackConfiguration(device: "pirate_hunter_no_such_device")
        configuration.retryInterval = .milliseconds(20)
        log.configure(&configuration)
        let playback = ALSAPlayback(configuration: configuration)
        playback.play(constant(1000, frames: 100), slot: .speech)
        #expect(eventually { log.unavailable == 1 })
        // Several retries later it is still one line.
        let written = playback.framesWritten
        usleep(150_000)
        playback.play(constant(1000, frames: 100), slot: .speech)
        #expect(playback.waitUntilIdle())
        playback.shutdown()
        #expect(!playback.isDeviceOpen)
        #expect(written == 0)
        #expect(log.lines.withLock { $0 }.count == 1)
        #expect(log.lines.withLock { $0 }.first?.contains("pirate_hunter_no_such_device") == true)
    }

    @Test func openingAMissingDeviceThrowsNamingIt() {
        #expect(throws: AudioError.self) {
            try ALSAPlayback.open(configuration: PlaybackConfiguration(device: "pirate_hunter_no_such_device"))
        }
        do {
            _ = try PCMDevice(name: "pirate_hunter_no_such_device")
        } catch {
            #expect(error.message.contains("'pirate_hunter_no_such_device'"))
        }
    }
}
