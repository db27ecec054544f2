#if canImport(Glibc)
import Glibc
#endif
import Audio
import Game
import Hunt
import Radio
import Synchronization
import Voice

/// Carries out the hunter's speech and sounds: a pack's pre-rendered line, a composed trail
/// line (synthesized off the loop, with a parent's recording after it), the reward read
/// slowly, the arrr; each line with its `say` JSON line and log line, played through ALSA on
/// the PCM's thread, and said to be over (from its length) so that the core can go on.
final class Speaker {
    var json: Bool
    private let runtime: ApplianceRuntime
    private var loop: EventLoop { runtime.loop }
    private var speech: HunterVoice?
    private var voice: PirateVoice? { speech?.voice }
    private let audio: ALSAPlayback?
    private var cacheWarnings: Set<String> = []
    /// The trail's lines made when said: the latest asked for, and what comes back.
    private var lineGeneration = 0 {
        didSet { generationNow.value.withLock { $0 = lineGeneration } }
    }
    /// `lineGeneration` as the engine's thread sees it: a composed line superseded before
    /// its turn is not synthesized at all.
    private let generationNow = SharedGeneration()

    final class SharedGeneration: Sendable {
        let value = Mutex(0)
    }
    private let composedMailbox: Mailbox<ComposedSpeech>
    /// The reward read out slowly, synthesized on the engine's thread and passed back here.
    private let rewardSpeechMailbox: Mailbox<Synthesized>
    private var rewardSpeech: PCMBuffer?
    /// The device's comings and goings, from the PCM's thread.
    private let deviceMailbox: Mailbox<SpeakerPresence.News>
    /// Whether the speaker was there from the start (one found late says so).
    private var presence = SpeakerPresence()
    private var speakerFound: () -> Void = {}
    private var speechTimer: Int?
    /// The last line given to the speaker, when (loop seconds), and how long it waited for
    /// the line before it to reach a pause.
    private var lastLine: (sound: PCMBuffer, postedAt: Double, wait: Double)?
    private var lineFinished: () -> Void = {}
    /// The treasure detector: its clicks a second, the next click's timer, and until when a
    /// sound effect plays (a click never cuts the arrr, nor plays over a line).
    private var detectorRate = 0.0
    private var clickTimer: Int?
    private var effectUntil = -Double.infinity
    private lazy var click = Self.click(sampleRate: speech?.voice.synthesizer.sampleRate ?? 22050)

    /// Each line said, as printed (the parent's page shows the latest).
    var onSaid: (LineEvent, String) -> Void = { _, _ in }
    /// The parent's page's previews (a clue tried, a test line, a rehearsal): synthesized or
    /// read off the loop, played at once; the hunt's own lines are not told of them.
    private let previewMailbox: Mailbox<Synthesized>

    /// A parent's clue (400 characters) after the pack's lead-in.
    static let composedLimit = 600

    init(_ setup: HunterSetup, runtime: ApplianceRuntime) throws(CLIError) {
        json = setup.json
        self.runtime = runtime
        do {
            rewardSpeechMailbox = try Mailbox()
            composedMailbox = try Mailbox()
            deviceMailbox = try Mailbox()
            previewMailbox = try Mailbox()
        } catch {
            throw CLIError(.software, "event loop: \(error)")
        }
        speech = try HunterVoice.load(setup, virtual: runtime.loop.isVirtual, warned: &cacheWarnings)
        let rate = speech?.voice.synthesizer.sampleRate
        let devices = deviceMailbox
        audio = setup.playback.map {
            HunterVoice.playback($0, sampleRate: rate, on: runtime) { event in
                switch event {
                case .deviceOpened: devices.post(.opened)
                case .fallbackOpened: devices.post(.fallback)
                case .deviceUnavailable: devices.post(.unavailable)
                default: break
                }
            }
        }
    }

    /// Nothing is being said and nothing waits to be.
    var isQuiet: Bool { speechTimer == nil && !loop.isAwaitingAnswer }

    /// Joins the loop: `lineFinished` when a line is over, `rewardReady` when the reward's
    /// slow reading is back, `speakerFound` when a speaker missing since the start appears.
    func start(lineFinished: @escaping () -> Void, rewardReady: @escaping () -> Void, speakerFound: @escaping () -> Void = {}) {
        self.lineFinished = lineFinished
        self.speakerFound = speakerFound
        loop.watch(deviceMailbox.fd) { [unowned self] in
            for news in deviceMailbox.drain() {
                switch presence.heard(news) {
                case .missing: Log.warning("audio: no speaker yet; the first clue waits for one")
                case .onFallback: Log.info("audio: no USB speaker yet; lines go to ALSA's default until one is plugged in")
                case .found:
                    Log.info("audio: speaker found")
                    speakerFound()
                case nil: break
                }
            }
        }
        loop.watch(rewardSpeechMailbox.fd) { [unowned self] in
            for speech in rewardSpeechMailbox.drain() {
                loop.expectationMet()
                if let line = speech.failureLine("the reward") { Log.error(line) }
                rewardSpeech = speech.audio
                rewardReady()
            }
        }
        loop.watch(previewMailbox.fd) { [unowned self] in
            for preview in previewMailbox.drain() {
                loop.expectationMet()
                if let line = preview.failureLine("the page's preview") { Log.error(line) }
                self.audio?.play(preview.audio, slot: .speech)
            }
        }
        loop.watch(composedMailbox.fd) { [unowned self] in
            for speech in composedMailbox.drain() {
                loop.expectationMet()
                // A newer line was said meanwhile: this one is stale.
                guard speech.generation == lineGeneration else { continue }
                if let line = speech.speech.failureLine("a line (\(speech.event.rawValue))") { Log.error(line) }
                play(speech.speech.audio)
            }
        }
    }

    /// The voice of `setup` (a reload); nothing changes when it cannot be loaded.
    func reload(_ setup: HunterSetup) throws(CLIError) {
        guard setup.voice != nil else { return }
        speech = try HunterVoice.load(setup, virtual: loop.isVirtual, warned: &cacheWarnings)
    }

    func setVolume(dB: Double) { audio?.setVolume(dB: dB) }

    func shutdown(waiting timeout: Duration) {
        guard let audio else { return }
        _ = audio.waitUntilIdle(timeout: timeout)
        audio.shutdown()
    }

    func play(_ sound: Sound) {
        if json, let line = OutputEvent.sound(time: runtime.now, sound).jsonLine { runtime.out.line(line) }
        if let buffer = speech?.sounds[sound], let audio {
            audio.play(buffer, slot: .effect)
            effectUntil = runtime.now + buffer.durationSeconds
        }
    }

    /// The treasure detector clicks `rate` times a second from now on (0: silent), between lines.
    func detect(_ rate: Double) {
        if json, let line = OutputEvent.detector(time: runtime.now, rate: rate).jsonLine { runtime.out.line(line) }
        let wasSilent = detectorRate <= 0
        detectorRate = rate
        if rate <= 0, let clickTimer {
            loop.cancel(clickTimer)
            self.clickTimer = nil
        } else if rate > 0, wasSilent {
            scheduleClick(after: 0)
        }
    }

    private func scheduleClick(after seconds: Double) {
        clickTimer = loop.schedule(after: seconds) { [unowned self] in
            clickTimer = nil
            guard detectorRate > 0 else { return }
            // Never over a line (said or being made) nor over a sound effect.
            if speechTimer == nil, !loop.isAwaitingAnswer, runtime.now >= effectUntil, let audio {
                audio.play(click, slot: .effect)
            }
            scheduleClick(after: 1 / detectorRate)
        }
    }

    /// The detector's click: 12 ms of a 2.4 kHz tone under a fast decay, soft enough to sit
    /// under the voice's level.
    static func click(sampleRate: Int) -> PCMBuffer {
        let frames = max(1, sampleRate * 12 / 1000)
        let samples = (0..<frames).map { i -> Int16 in
            let t = Double(i) / Double(sampleRate)
            let envelope = (1 - Double(i) / Double(frames)) * (1 - Double(i) / Double(frames))
            return Int16((sin(2 * Double.pi * 2400 * t) * envelope * 9000).rounded())
        }
        return PCMBuffer(sampleRate: sampleRate, samples: samples)
    }

    /// A trail line: its words composed (the parent's, or the pack's filled in), else the
    /// pack's own line.
    func tell(_ event: LineEvent, _ detail: LineDetail) {
        guard let voice else { return }
        if let code = detail.code {
            // The page's setup code is spoken, never printed or logged (nor shown as the last line).
            let template = voice.line(event).text
            var shown = detail
            shown.code = String(repeating: "*", count: code.count)
            sayComposed(event, line: ComposedLine(pack: detail.fill(template)), printed: shown.fill(template), recording: nil, voice: voice)
        } else if let line = detail.parts(of: event, template: voice.line(event).text) {
            sayComposed(event, line: line, recording: detail.recording.flatMap { speech?.recordings[$0] }, voice: voice)
        } else {
            say(event, reward: nil)
        }
    }

    /// A pre-rendered line of the pack (the reward's with `reward` itself after it, read slowly).
    func say(_ event: LineEvent, reward: String?) {
        guard let voice else { return }
        lineGeneration += 1
        var spoken = voice.line(event)
        if event == .reward, let reward, let text = rewardSpeech {
            // The pack's lead-in, a breath, then the reward itself, slowly, as plain text.
            var audio = spoken.audio
            audio.samples += [Int16](repeating: 0, count: audio.sampleRate * audio.channels * 4 / 10)
            audio.samples += text.channels == audio.channels ? text.samples : []
            spoken = SpokenLine(event: event, index: spoken.index, text: spoken.text + " " + SpeechText.sanitize(reward), audio: audio)
        }
        announce(event, text: spoken.text)
        play(spoken.audio)
    }

    /// The reward synthesized slowly off the loop (a code spelled, words said as a sentence:
    /// `RewardReading`), with the voice of its language; said once it is back (and the found
    /// line is over).
    func readSlowly(_ text: String) {
        guard let voice else { return }
        let mailbox = rewardSpeechMailbox
        let rate = voice.synthesizer.sampleRate
        // On virtual time the clock waits for the answer.
        loop.expectAnswer()
        voice.speak(untrusted: RewardReading.text(for: SpeechText.sanitize(text)), rateFactor: 0.7) { result in
            mailbox.post(Synthesized(result, sampleRate: rate))
        }
    }

    /// Says a composed line: printed and logged now, synthesized off the loop (the pack's part
    /// in its voice, the parent's in the voice of its language, both at a child's pace), played
    /// when back (then a breath and the parent's recording, if any).
    private func sayComposed(_ event: LineEvent, line: ComposedLine, printed: String? = nil, recording: PCMBuffer?, voice: PirateVoice) {
        lineGeneration += 1
        announce(event, text: SpeechText.sanitize(printed ?? line.text, maxCharacters: Self.composedLimit))
        // The line before it is over as far as the core knows: its timer must not end this one.
        if let speechTimer { loop.cancel(speechTimer) }
        speechTimer = nil
        let mailbox = composedMailbox
        let generation = lineGeneration
        let rate = voice.synthesizer.sampleRate
        loop.expectAnswer()
        let now = generationNow
        voice.speak(line, maxCharacters: Self.composedLimit, stale: { now.value.withLock { $0 } != generation }) { result in
            var speech = Synthesized(result, sampleRate: rate)
            if let recording, recording.channels == speech.audio.channels {
                speech.audio.samples += [Int16](repeating: 0, count: speech.audio.sampleRate * speech.audio.channels * 4 / 10)
                speech.audio.samples += recording.samples
            }
            mailbox.post(ComposedSpeech(generation: generation, event: event, speech: speech))
        }
    }

    /// A parent's text said now, at a child's pace, by the voice of its language (the page's
    /// "say it on the speaker" and test line); false without a voice.
    @discardableResult
    func preview(_ text: String, logAs: String? = nil) -> Bool {
        guard let voice else { return false }
        let mailbox = previewMailbox
        let rate = voice.synthesizer.sampleRate
        loop.expectAnswer()
        voice.speak(untrusted: SpeechText.sanitize(text, maxCharacters: Self.composedLimit)) { result in
            mailbox.post(Synthesized(result, sampleRate: rate))
        }
        Log.info("page: saying \(logAs ?? "\"" + SpeechText.sanitize(text, maxCharacters: 80) + "\"") on the speaker")
        return true
    }

    /// A recording played now (a rehearsal on the speaker), at the voice's rate.
    func preview(recording path: String) throws(WAVError) {
        guard let rate = voice?.synthesizer.sampleRate else { return }
        let buffer = try WAVFile.readForMixer(path: path, rate: rate, maximumSeconds: 900)
        loop.expectAnswer()
        previewMailbox.post(Synthesized(audio: buffer))
    }

    /// The `say` line and the log line of a line said.
    private func announce(_ event: LineEvent, text: String) {
        onSaid(event, text)
        if json, let line = OutputEvent.say(time: runtime.now, event: event, text: text).jsonLine { runtime.out.line(line) }
        Log.info("say [\(event.rawValue)] \(text)")
    }

    /// Plays a line and says when it is over: from its length, and from when it starts. A
    /// line that interrupts one still playing starts only at that one's next pause (the
    /// mixer's `atPause`); counted from the post, its end came up to a second early, and the
    /// line after it (the reward after the found line) cut its last words.
    private func play(_ sound: PCMBuffer) {
        audio?.play(sound, slot: .speech)
        let now = runtime.now
        let wait = lastLine.map { Self.waitForPause(after: $0.sound, startedAt: $0.postedAt + $0.wait, now: now) } ?? 0
        lastLine = (sound, now, wait)
        if let speechTimer { loop.cancel(speechTimer) }
        speechTimer = loop.schedule(after: wait + sound.durationSeconds + 0.05) { [unowned self] in
            speechTimer = nil
            lineFinished()
        }
    }

    /// How long a line posted at `now` waits for `playing` (started at `startedAt`, mono) to
    /// reach its next pause, as `Mixer.play(_:slot:tag:atPause:)` finds it: 0 when it is
    /// over; until its start when it has not started (the new line takes its place).
    static func waitForPause(after playing: PCMBuffer, startedAt: Double, now: Double) -> Double {
        let elapsed = now - startedAt
        guard elapsed >= 0 else { return -elapsed }
        guard playing.channels == 1, playing.sampleRate > 0 else { return 0 }
        let rate = playing.sampleRate
        let position = Int(elapsed * Double(rate))
        guard position < playing.samples.count else { return 0 }
        return Double(Mixer.nextPause(in: playing.samples, from: position, rate: rate) - position) / Double(rate)
    }
}

/// Whether the speaker was there from the start: one plugged in late (after the first lines
/// went nowhere) is said to be found, once; one lost later is the playback's own business (it
/// reopens it). `auto` on ALSA's default for want of a USB card (a Pi 4's jack, often with
/// nothing in it) is no speaker yet: the USB speaker plugged in later is found, and the
/// lines missed are said again there (they were counted as heard on the empty jack).
struct SpeakerPresence {
    enum News: Sendable { case opened, fallback, unavailable }
    enum Outcome: Equatable { case missing, onFallback, found }

    private var missingSinceStart: Bool?

    mutating func heard(_ news: News) -> Outcome? {
        switch (missingSinceStart, news) {
        case (nil, .unavailable):
            missingSinceStart = true
            return .missing
        case (nil, .fallback):
            missingSinceStart = true
            return .onFallback
        case (nil, .opened):
            missingSinceStart = false
        case (true?, .opened):
            missingSinceStart = false
            return .found
        default:
            break
        }
        return nil
    }
}
