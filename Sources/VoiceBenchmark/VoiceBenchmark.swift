import Audio
import Hunt
import FoundationEssentials
import Synchronization
import Voice

#if canImport(Glibc)
import Glibc
#endif

/// Release-build benchmark of the voice and sound layer:
///   swift run -c release VoiceBenchmark [--voice-dir DIR] [--requests N]
/// (a) "speak this line" to its first frame handed to snd_pcm_writei, through the real ALSA
///     `null` device paced by the playback thread's emulated clock (as a card would pace it);
/// (b) median F0 and speaking rate of the pirate voice against eSpeak NG's default `en`;
/// (c) start-up to ready with every line pre-rendered, cold and from the cache.
@main enum VoiceBenchmark {
    static func main() throws {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var voiceDirectory: String?
        var requests = 1000
        while !arguments.isEmpty {
            let flag = arguments.removeFirst()
            switch (flag, arguments.first) {
            case ("--voice-dir", let value?): voiceDirectory = value; arguments.removeFirst()
            case ("--requests", let value?): requests = Int(value) ?? requests; arguments.removeFirst()
            default:
                print("usage: VoiceBenchmark [--voice-dir DIR] [--requests N]")
                exit(64)
            }
        }
        let voices = VoiceLocations.resolve(explicit: voiceDirectory)
        print("voices: \(voices)")

        // (c) first, so the cold start really is cold.
        let clock = ContinuousClock()
        var engine: EspeakSynthesizer?
        let engineStart = clock.measure { engine = try? EspeakSynthesizer.shared() }
        guard let engine else {
            print("eSpeak NG did not start")
            exit(69)
        }
        print("eSpeak NG \(engine.version) at \(engine.sampleRate) Hz, engine start \(fmt(ms(engineStart))) ms")
        // A fresh private directory (mkdtemp: 0700, never one another user could have made).
        var template = Array("/tmp/ph-voice-bench-XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else {
            print("cannot create a cache directory in /tmp")
            exit(73)
        }
        let cache = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { try? FileManager.default.removeItem(atPath: cache) }
        print("\n(c) start-up to ready, every line pre-rendered")
        var pirate: PirateVoice?
        for language in ["en-pirate", "ja"] {
            var configuration = VoiceConfiguration(voicesDirectory: voices, language: language, cacheDirectory: cache)
            var loaded: PirateVoice?
            let cold = try clock.measure { loaded = try PirateVoice.load(configuration) }
            let coldReport = loaded?.report
            var warmTimes: [Double] = []
            var warmReport: RenderReport?
            for _ in 0..<5 {
                let warm = try clock.measure { loaded = try PirateVoice.load(configuration) }
                warmTimes.append(ms(warm))
                warmReport = loaded?.report
            }
            configuration.cacheDirectory = nil
            let noCache = try clock.measure { loaded = try PirateVoice.load(configuration) }
            if language == "en-pirate" { pirate = loaded }
            print(
                "  \(language): \(coldReport?.lines ?? 0) lines; cold (render + write cache) \(fmt(ms(cold))) ms"
                    + " [synthesized \(coldReport?.synthesized ?? 0)];"
                    + " from cache median \(fmt(SpeechAnalysis.median(warmTimes))) ms of 5"
                    + " [from cache \(warmReport?.fromCache ?? 0)];"
                    + " no cache \(fmt(ms(noCache))) ms; cold/cache ratio \(fmt(ms(cold) / max(SpeechAnalysis.median(warmTimes), 0.001)))")
        }
        guard let pirate else { exit(70) }

        // (b) pirate against eSpeak's default English on the same lines.
        print("\n(b) pirate voice against eSpeak NG's default 'en', all \(pirate.pack.allLines.count) English lines")
        var pirateF0: [Double] = []
        var plainF0: [Double] = []
        var pirateSeconds = 0.0
        var plainSeconds = 0.0
        var words = 0
        for line in pirate.pack.allLines {
            let p = try engine.synthesize(line.text, voice: pirate.pack.voice)
            let d = try engine.synthesize(line.text, voice: .name("en"))
            pirateF0 += SpeechAnalysis.f0Track(p)
            plainF0 += SpeechAnalysis.f0Track(d)
            pirateSeconds += SpeechAnalysis.activeDuration(p)
            plainSeconds += SpeechAnalysis.activeDuration(d)
            words += line.text.split(separator: " ").count
        }
        let pF0 = SpeechAnalysis.median(pirateF0)
        let dF0 = SpeechAnalysis.median(plainF0)
        let pRate = Double(words) / pirateSeconds * 60
        let dRate = Double(words) / plainSeconds * 60
        print("  median F0: pirate \(fmt(pF0)) Hz, en \(fmt(dF0)) Hz, ratio \(fmt(pF0 / dF0)) (\(fmt((1 - pF0 / dF0) * 100)) % lower; target >= 20 %)")
        print("  speaking rate: pirate \(fmt(pRate)) wpm, en \(fmt(dRate)) wpm, ratio \(fmt(pRate / dRate)) (\(fmt((1 - pRate / dRate) * 100)) % slower; target >= 20 %)")
        print("  speech time: pirate \(fmt(pirateSeconds)) s, en \(fmt(plainSeconds)) s")

        // (a) request to first frame handed to snd_pcm_writei.
        print("\n(a) 'speak this line' to its first frame handed to snd_pcm_writei (ALSA 'null', clock emulated)")
        final class Firsts: Sendable {
            let latencies = Mutex<[UInt64: Double]>([:])
            let arrived = WakeSignal()
        }
        let firsts = Firsts()
        var configuration = PlaybackConfiguration(device: "null")
        configuration.emulateClock = true
        configuration.observer = { event in
            if case .firstFrame(let tag, let requested, let written) = event {
                firsts.latencies.withLock { $0[tag] = ms(written - requested) }
                firsts.arrived.post()
            }
        }
        let playback = try ALSAPlayback.open(configuration: configuration)
        var random = SystemRandomNumberGenerator()
        func run(_ count: Int, fromIdle: Bool) -> [Double] {
            var tags: [UInt64] = []
            for _ in 0..<count {
                if fromIdle {
                    playback.stop(.speech)
                    _ = playback.waitUntilIdle()
                }
                let line = pirate.line(LineEvent.allCases.randomElement(using: &random) ?? .warmer)
                let tag = playback.play(line.audio, slot: .speech)
                tags.append(tag)
                while firsts.latencies.withLock({ $0[tag] }) == nil { firsts.arrived.wait(timeout: .seconds(1)) }
                // Land anywhere within a period next time.
                usleep(UInt32.random(in: 1_000...25_000, using: &random))
            }
            return firsts.latencies.withLock { all in tags.compactMap { all[$0] } }
        }
        _ = run(20, fromIdle: false)  // warm-up
        let streaming = run(requests, fromIdle: false)
        let idle = run(max(requests / 20, 10), fromIdle: true)
        playback.shutdown()
        let period = 1000.0 * 220 / 22050
        print("  device buffer 40 ms, period \(fmt(period)) ms")
        print("  while speaking (replacing a line), \(streaming.count) requests: median \(fmt(SpeechAnalysis.median(streaming))) ms, p99 \(fmt(SpeechAnalysis.percentile(streaming, 0.99))) ms, max \(fmt(streaming.max() ?? 0)) ms (target p99 <= 15 ms)")
        print("  from idle (stream stopped), \(idle.count) requests: median \(fmt(SpeechAnalysis.median(idle))) ms, p99 \(fmt(SpeechAnalysis.percentile(idle, 0.99))) ms")
        print("  p99 / period ratio \(fmt(SpeechAnalysis.percentile(streaming, 0.99) / period))")
    }

    static func ms(_ d: Duration) -> Double {
        let (s, a) = d.components
        return Double(s) * 1000 + Double(a) / 1e15
    }

    static func fmt(_ v: Double) -> String {
        let scaled = (v * 100).rounded() / 100
        return String(scaled)
    }
}
