import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What the playback thread reports (for logs, tests and the benchmark).
public enum PlaybackEvent: Sendable {
    case deviceOpened(String)
    /// `auto` opened ALSA's default for want of a USB card (a Pi 4's jack, often with nothing
    /// in it); a USB card that comes later is switched to, and reported as `deviceOpened`.
    case fallbackOpened(String)
    case deviceUnavailable(String)

    /// `name` opened: `auto`'s fallback or the device itself.
    static func opened(_ name: String, fallback: Bool) -> PlaybackEvent {
        fallback ? .fallbackOpened(name) : .deviceOpened(name)
    }
    /// The first frame of request `tag` was handed to `snd_pcm_writei` at `written`.
    case firstFrame(tag: UInt64, requested: ContinuousClock.Instant, written: ContinuousClock.Instant)
    /// A write failed with `error` (negative errno) and the stream was recovered.
    case recovered(error: Int32)
    case deviceLost(String)
}

public struct PlaybackConfiguration: Sendable {
    /// ALSA device name: `default`, `plughw:1,0`, `sysdefault:CARD=vc4hdmi0`, `null`, `file:FILE=...,FORMAT=wav`,
    /// or `auto` (the first USB audio card, else `default`: `SoundCards.choose`).
    public var device: String
    public var sampleRate: Int = 22050
    public var latencyMicroseconds: Int = 40_000
    /// How often a missing or busy device is tried again.
    public var retryInterval: Duration = .seconds(3)
    /// Master volume in dB.
    public var volumeDB: Double = 0
    /// Cross-fade when a new sound replaces one in the same slot.
    public var fadeMilliseconds: Double = 8
    /// Silence written after the last sound before the stream is stopped (keep it longer
    /// than the latency: the stream is then dropped, not drained).
    public var tailMilliseconds: Int = 300
    /// For devices without a clock (`null`, `file:`): pace writes to real time, as a card does.
    public var emulateClock: Bool = false
    /// Virtual time: the caller says how far the clock has moved (`advance(toSeconds:)`) and
    /// exactly that much is mixed and written, silence included, as fast as the device takes
    /// it (a `file:` device then holds what a card would have played, at the same moments).
    public var pacedByCaller: Bool = false
    /// One line per notable thing (device missing once, device back, device lost, each
    /// recovered write failure such as an underrun).
    public var log: @Sendable (String) -> Void = { line in
        var text = "audio: " + line + "\n"
        text.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }
    public var observer: (@Sendable (PlaybackEvent) -> Void)?
    /// What a device name opens (`auto` chooses over the cards present now:
    /// `SoundCards.resolve`; tests give their own cards).
    public var chooseDevice: @Sendable (String) -> DeviceChoice = SoundCards.resolve

    public init(device: String = "default") { self.device = device }
}

/// ALSA playback on its own thread: one PCM opened once, blocking writes of one period at a
/// time, the `Mixer` in front of it. Callers post to a Mutex-guarded mailbox and never block.
public final class ALSAPlayback: Sendable {
    enum Command: Sendable {
        case play(PCMBuffer, MixerSlot, UInt64, ContinuousClock.Instant)
        case stop(MixerSlot)
        case volume(Double)
        case interrupt
        /// Paced by the caller: mix and write up to this frame.
        case advance(Int)
    }

    struct Mailbox {
        var commands: [Command] = []
        var submitted = 0
        var quit = false
        var nextTag: UInt64 = 1
    }

    /// Hands a PCM opened on the caller's thread to the playback thread, once.
    final class Handoff: @unchecked Sendable {
        // Written before the thread starts, taken once by it: no concurrent access.
        var device: PCMDevice?
        var fallback: Bool
        init(_ device: PCMDevice?, fallback: Bool) {
            self.device = device
            self.fallback = fallback
        }
    }

    public let configuration: PlaybackConfiguration
    private let mailbox = Mutex(Mailbox())
    private let wake = WakeSignal()
    private let idleAfter = Atomic<Int>(0)
    private let idle = Atomic<Bool>(true)
    private let written = Atomic<Int>(0)
    private let recoveryCount = Atomic<Int>(0)
    private let open = Atomic<Bool>(false)
    private let thread = Mutex<OwnerThread?>(nil)

    /// Starts the playback thread; the device is opened there (and retried) without blocking.
    public convenience init(configuration: PlaybackConfiguration) {
        self.init(configuration: configuration, device: nil, fallback: false)
    }

    /// Opens the device on the calling thread first: throws when it cannot be opened
    /// (a one-shot command exits 69 on that), else plays as `init(configuration:)`.
    public static func open(configuration: PlaybackConfiguration) throws(AudioError) -> ALSAPlayback {
        let (device, fallback) = try configuration.openChosenDevice()
        return ALSAPlayback(configuration: configuration, device: device, fallback: fallback)
    }

    private init(configuration: PlaybackConfiguration, device: PCMDevice?, fallback: Bool) {
        self.configuration = configuration
        let handoff = Handoff(device, fallback: fallback)
        if device != nil { open.store(true, ordering: .relaxed) }
        let started = OwnerThread(name: "ph-audio") { [self] in
            let device = handoff.device
            handoff.device = nil
            var loop = PlaybackLoop(owner: self, device: device, fallback: handoff.fallback)
            loop.run()
        }
        thread.withLock { $0 = started }
    }

    deinit { shutdown() }

    @discardableResult
    public func play(_ sound: PCMBuffer, slot: MixerSlot) -> UInt64 {
        let now = ContinuousClock.now
        let tag = mailbox.withLock { box in
            let tag = box.nextTag
            box.nextTag += 1
            box.commands.append(.play(sound, slot, tag, now))
            box.submitted += 1
            return tag
        }
        wake.post()
        return tag
    }

    public func stop(_ slot: MixerSlot) { post(.stop(slot)) }

    /// Paced by the caller (`pacedByCaller`): the clock is now `seconds` after the first
    /// frame; everything up to there is mixed and written.
    public func advance(toSeconds seconds: Double) {
        post(.advance(Int((seconds * Double(configuration.sampleRate)).rounded(.down))))
    }
    public func setVolume(dB: Double) { post(.volume(dB)) }

    /// Stops the PCM under the playback thread as an underrun would (see `PCMDevice.interruptStream`).
    public func interruptStream() { post(.interrupt) }

    private func post(_ command: Command) {
        mailbox.withLock { box in
            box.commands.append(command)
            box.submitted += 1
        }
        wake.post()
    }

    /// Frames handed to the device so far.
    public var framesWritten: Int { written.load(ordering: .acquiring) }
    /// Write failures recovered so far.
    public var recoveries: Int { recoveryCount.load(ordering: .acquiring) }
    public var isDeviceOpen: Bool { open.load(ordering: .acquiring) }

    /// Blocks until everything posted so far has been played (for one-shot commands and
    /// tests; never call it from the event loop). False on timeout.
    public func waitUntilIdle(timeout: Duration = .seconds(30)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let submitted = mailbox.withLock { $0.submitted }
            if idle.load(ordering: .acquiring) && idleAfter.load(ordering: .acquiring) == submitted { return true }
            sleepFor(.milliseconds(2))
        }
        return false
    }

    /// Stops the thread and closes the device (a `file:` device finishes its WAV here).
    public func shutdown() {
        mailbox.withLock { $0.quit = true }
        wake.post()
        let running = thread.withLock { current -> OwnerThread? in
            defer { current = nil }
            return current
        }
        running?.join()
    }

    // MARK: - The playback thread

    private struct PlaybackLoop {
        let owner: ALSAPlayback
        var device: PCMDevice?
        /// `auto` opened ALSA's default for want of a USB card: while idle, the cards are
        /// looked at again every `retryInterval`, and a USB card that came (the speaker
        /// plugged in late, or back after an unplug) is switched to.
        var onFallback: Bool
        var mixer: Mixer
        let config: PlaybackConfiguration

        init(owner: ALSAPlayback, device: PCMDevice?, fallback: Bool) {
            self.owner = owner
            self.device = device
            onFallback = fallback
            config = owner.configuration
            mixer = Mixer(sampleRate: config.sampleRate, fadeMilliseconds: config.fadeMilliseconds)
            mixer.setVolume(dB: config.volumeDB)
        }

        mutating func run() {
            if config.pacedByCaller {
                runPacedByCaller()
                return
            }
            var unavailableLogged = false
            var nextAttempt = ContinuousClock.now
            var nextCardLook = ContinuousClock.now + config.retryInterval
            var lastLost = ContinuousClock.now - config.retryInterval
            var streaming = false
            var silentFrames = 0
            var requested: [UInt64: ContinuousClock.Instant] = [:]
            var period: [Int16] = []
            var clockStart = ContinuousClock.now
            var clockFrames = 0
            if let device {
                config.observer?(.opened(device.name, fallback: onFallback))
            }

            while true {
                let (commands, submitted, quit) = owner.mailbox.withLock { box in
                    defer { box.commands.removeAll(keepingCapacity: true) }
                    return (box.commands, box.submitted, box.quit)
                }
                if quit { break }
                for command in commands {
                    switch command {
                    case .play(let sound, let slot, let tag, let at):
                        mixer.play(sound, slot: slot, tag: tag, atPause: slot == .speech)
                        requested[tag] = at
                    case .stop(let slot): mixer.stop(slot)
                    case .volume(let dB): mixer.setVolume(dB: dB)
                    case .interrupt: device?.interruptStream()
                    case .advance: break
                    }
                }
                if !commands.isEmpty { owner.idle.store(false, ordering: .releasing) }

                // No device: try again every few seconds; nothing is played late.
                if device == nil && ContinuousClock.now >= nextAttempt {
                    do {
                        let (opened, fallback) = try config.openChosenDevice()
                        device = opened
                        onFallback = fallback
                        owner.open.store(true, ordering: .releasing)
                        if unavailableLogged { config.log("device '\(config.device)' is back") }
                        unavailableLogged = false
                        config.observer?(.opened(opened.name, fallback: fallback))
                    } catch {
                        if !unavailableLogged {
                            config.log("\(error.message); retrying every \(config.retryInterval)")
                            config.observer?(.deviceUnavailable(error.message))
                            unavailableLogged = true
                        }
                        nextAttempt = ContinuousClock.now + config.retryInterval
                    }
                }
                guard let pcm = device else {
                    mixer.clear()
                    requested.removeAll()
                    owner.idleAfter.store(submitted, ordering: .releasing)
                    owner.idle.store(true, ordering: .releasing)
                    owner.wake.wait(timeout: nextAttempt - ContinuousClock.now)
                    continue
                }

                if mixer.isIdle {
                    // A sound replaced while it waited for a pause, or stopped before it
                    // began, never starts: its request is dropped here, not kept for days.
                    requested.removeAll(keepingCapacity: true)
                    let tailFrames = max(
                        config.tailMilliseconds * config.sampleRate / 1000, pcm.bufferFrames + pcm.periodFrames)
                    if streaming && silentFrames < tailFrames {
                        // A short silent tail keeps the stream running for a follow-up line.
                        silentFrames += pcm.periodFrames
                    } else {
                        if streaming {
                            // The tail is longer than the buffer: only silence is dropped,
                            // and nobody waits for a drain.
                            pcm.stopStream()
                            streaming = false
                        }
                        owner.idleAfter.store(submitted, ordering: .releasing)
                        owner.idle.store(true, ordering: .releasing)
                        guard onFallback else {
                            owner.wake.wait()
                            continue
                        }
                        // Idle on ALSA's default for want of a USB card: is there one now? Looked
                        // for every `retryInterval` however the wait ends: while the detector
                        // clicks every 0.1-2 s, every wait was woken before its 3 s, the look
                        // never came, and a speaker plugged back in was never played to.
                        if ContinuousClock.now < nextCardLook { _ = owner.wake.wait(timeout: nextCardLook - ContinuousClock.now) }
                        if ContinuousClock.now >= nextCardLook {
                            nextCardLook = ContinuousClock.now + config.retryInterval
                            if config.chooseDevice(config.device).card != nil {
                                config.log("a USB audio card is here now: leaving ALSA's default for it")
                                pcm.close()
                                device = nil
                                onFallback = false
                                owner.open.store(false, ordering: .releasing)
                                nextAttempt = ContinuousClock.now
                            }
                        }
                        continue
                    }
                } else {
                    silentFrames = 0
                }

                if period.count != pcm.periodFrames * pcm.channels {
                    period = [Int16](repeating: 0, count: pcm.periodFrames * pcm.channels)
                }
                let startedTags = mixer.takeStarted()
                mixer.render(into: &period)
                if !streaming {
                    clockStart = ContinuousClock.now
                    clockFrames = 0
                }
                let handedAt = ContinuousClock.now
                for tag in startedTags {
                    if let at = requested.removeValue(forKey: tag) {
                        config.observer?(.firstFrame(tag: tag, requested: at, written: handedAt))
                    }
                }
                do {
                    let recovered = try pcm.write(period)
                    for error in recovered {
                        owner.recoveryCount.add(1, ordering: .releasing)
                        config.log(recoveryLine(error))
                        config.observer?(.recovered(error: error))
                    }
                    streaming = true
                    owner.written.add(pcm.periodFrames, ordering: .releasing)
                } catch {
                    config.log("\(error.message); reopening")
                    config.observer?(.deviceLost(error.message))
                    device = nil
                    owner.open.store(false, ordering: .releasing)
                    streaming = false
                    // Reopened at once, the line kept (a speaker unplugged and plugged back
                    // while idle: the line that found the old handle dead is played on the
                    // new one); a device lost again within `retryInterval` waits that long.
                    let now = ContinuousClock.now
                    nextAttempt = now - lastLost >= config.retryInterval ? now : now + config.retryInterval
                    lastLost = now
                    unavailableLogged = true
                    continue
                }
                if config.emulateClock {
                    // Keep at most one buffer ahead of real time, as a card's clock would.
                    clockFrames += pcm.periodFrames
                    let ahead = clockFrames - pcm.bufferFrames
                    if ahead > 0 {
                        let due = clockStart + .microseconds(ahead * 1_000_000 / config.sampleRate)
                        sleepFor(due - ContinuousClock.now)
                    }
                }
            }
            device?.close()
            device = nil
            owner.open.store(false, ordering: .releasing)
        }

        /// Virtual time: commands in order, each `.advance` mixing and writing up to its frame.
        /// Idle means every command so far is done (nothing waits for a clock here).
        mutating func runPacedByCaller() {
            if device == nil {
                do {
                    device = try config.openDevice()
                    owner.open.store(true, ordering: .releasing)
                } catch {
                    config.log(error.message)
                    config.observer?(.deviceUnavailable(error.message))
                }
            }
            if let device { config.observer?(.deviceOpened(device.name)) }
            var frame = 0
            var chunk: [Int16] = []
            while true {
                let (commands, submitted, quit) = owner.mailbox.withLock { box in
                    defer { box.commands.removeAll(keepingCapacity: true) }
                    return (box.commands, box.submitted, box.quit)
                }
                for command in commands {
                    switch command {
                    case .play(let sound, let slot, let tag, _): mixer.play(sound, slot: slot, tag: tag, atPause: slot == .speech)
                    case .stop(let slot): mixer.stop(slot)
                    case .volume(let dB): mixer.setVolume(dB: dB)
                    case .interrupt: break
                    case .advance(let target):
                        while frame < target {
                            guard let pcm = device else {
                                frame = target
                                break
                            }
                            let n = min(pcm.periodFrames, target - frame)
                            if chunk.count != n * pcm.channels { chunk = [Int16](repeating: 0, count: n * pcm.channels) }
                            _ = mixer.takeStarted()
                            mixer.render(into: &chunk)
                            do {
                                try pcm.write(chunk)
                                owner.written.add(n, ordering: .releasing)
                            } catch {
                                config.log("\(error.message); nothing more is written")
                                config.observer?(.deviceLost(error.message))
                                pcm.close()
                                device = nil
                                owner.open.store(false, ordering: .releasing)
                            }
                            frame += n
                        }
                    }
                }
                owner.idleAfter.store(submitted, ordering: .releasing)
                owner.idle.store(true, ordering: .releasing)
                if quit { break }
                owner.wake.wait()
            }
            device?.close()
            device = nil
            owner.open.store(false, ordering: .releasing)
        }
    }
}

/// The log line for a write failure the stream was recovered from, e.g.
/// "recovered from underrun (Broken pipe)" for -EPIPE.
func recoveryLine(_ error: Int32) -> String {
    let cause = switch -error {
    case EPIPE: "underrun"
    case ESTRPIPE: "suspend"
    case EINTR: "interrupted write"
    default: "write error"
    }
    return "recovered from \(cause) (\(alsaMessage(error)))"
}
