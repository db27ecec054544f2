import Foundation
import Testing
import TestSupport

/// The checker, and reading what the demo wrote.
enum DemoAudio {
    /// The mixer's cross-fade (Mixer's `fadeMilliseconds` default): what is still heard of
    /// a line after its cut.
    static let fadeSeconds = 0.008
    /// How much of the line, after the fade, must be quiet: a pause between words, not a
    /// stop closure inside one (those are 10 ms dips).
    static let pauseSeconds = 0.020
    /// The pause may start this long after the fade: the last of a word's decay, masked by it.
    static let tailSeconds = 0.025
    /// Quiet: RMS below this fraction of the line's loudest 10 ms.
    static let quietFraction = 0.05
    /// Samples this small match whether the line still plays or not (the fade rounds them
    /// back, the next line may start with silence): the cut can be anywhere in a run of them.
    static let silent = 64

    struct Stop: CustomStringConvertible {
        var name: String
        var asked: Double  // the say event's t
        var started: Double  // where the line is in the WAV
        var stopped: Double  // where it stops being heard (WAV time)
        var length: Double
        /// Of its own rendering: the quietest 20 ms that starts between the stop and the end of
        /// the fade and its tail.
        var unheardRMS: Double
        var peakRMS: Double
        var overSound: Bool  // the stop is at the end of a sound's span: not resolved
        var soundEnds: Double  // WAV time where the line's last sound (a quiet-threshold window) ends
        var remaining: Double { length - (stopped - started) }
        /// Some of its sound was never heard.
        var cut: Bool { stopped + DemoAudio.fadeSeconds < soundEnds }
        var atPause: Bool { !cut || unheardRMS < DemoAudio.quietFraction * peakRMS }
        var description: String {
            String(
                format: "%@ (asked %.2f s, heard from %.3f s) stopped at %.3f s with %.3f of %.3f s left; its next 20 ms pause within 33 ms: RMS %.0f = %.1f%% of its peak %.0f",
                name, asked, started, stopped, remaining, length, unheardRMS, 100 * unheardRMS / max(peakRMS, 1), peakRMS)
        }
    }

    // MARK: The checker

    static func rms(_ samples: [Int16], _ range: Range<Int>) -> Double {
        let r = range.clamped(to: 0..<samples.count)
        guard !r.isEmpty else { return 0 }
        var sum = 0.0
        for i in r { sum += Double(samples[i]) * Double(samples[i]) }
        return (sum / Double(r.count)).squareRoot()
    }

    static func peakRMS(_ samples: [Int16], rate: Int) -> Double {
        let window = rate / 100
        return stride(from: 0, to: max(0, samples.count - window), by: window / 2).map { rms(samples, $0..<($0 + window)) }.max() ?? 0
    }

    /// Where `line` starts in `heard`, between `from` and `to`: a 20 ms stretch of it, taken
    /// 20 ms after its first loud sample (clear of a fade-in and of the old line's fade-out),
    /// found unchanged.
    static func locate(_ line: [Int16], in heard: [Int16], from: Int, to: Int, rate: Int) -> Int? {
        guard let loud = line.firstIndex(where: { abs(Int($0)) > 2000 }) else { return nil }
        let probe = loud + rate / 50, probeLength = rate / 50
        guard probe + probeLength <= line.count else { return nil }
        var offset = max(0, from)
        while offset <= to, offset + probe + probeLength <= heard.count {
            var same = true
            for k in 0..<probeLength where heard[offset + probe + k] != line[probe + k] {
                same = false
                break
            }
            if same { return offset }
            offset += 1
        }
        return nil
    }

    /// How far into `line` (placed at `start`) `heard` holds it unchanged from `first`, skipping `ignore`
    /// (WAV sample ranges where a sound is mixed on top).
    static func heardUntil(_ line: [Int16], in heard: [Int16], at start: Int, from first: Int, ignore: [Range<Int>]) -> Int {
        var i = first
        let n = min(line.count, heard.count - start)
        while i < n {
            if let span = ignore.first(where: { $0.contains(start + i) }) {
                i = span.upperBound - start
                continue
            }
            if heard[start + i] != line[i] { return i }
            i += 1
        }
        return n
    }

    /// Where `line`, heard from `start`, stops being heard, and how loud it was there.
    static func stop(
        of line: [Int16], in heard: [Int16], at start: Int, rate: Int, ignore: [Range<Int>] = [],
        name: String = "", asked: Double = 0
    ) -> Stop {
        // From where `locate` matched it: before that the line before it may still be fading out.
        let first = min(line.count, (line.firstIndex { abs(Int($0)) > 2000 } ?? 0) + rate / 50)
        var until = heardUntil(line, in: heard, at: start, from: first, ignore: ignore)
        let matchedToEnd = until >= min(line.count, heard.count - start)
        if !matchedToEnd {
            while until > 0, abs(Int(line[until - 1])) <= silent { until -= 1 }
        }
        let peak = peakRMS(line, rate: rate), window = rate / 100
        let lastSound = Array(stride(from: 0, to: max(0, line.count - window), by: window / 2)).last { rms(line, $0..<($0 + window)) >= quietFraction * peak }
        let fade = Int(fadeSeconds * Double(rate)), pause = Int(pauseSeconds * Double(rate)), tail = Int(tailSeconds * Double(rate))
        let unheard = stride(from: until, through: until + fade + tail, by: max(1, rate / 1000)).map { rms(line, $0..<($0 + pause)) }.min() ?? 0
        return Stop(
            name: name, asked: asked, started: Double(start) / Double(rate), stopped: Double(start + until) / Double(rate),
            length: Double(line.count) / Double(rate),
            unheardRMS: unheard, peakRMS: peak,
            overSound: ignore.contains { $0.upperBound == start + until },
            soundEnds: Double(start + (lastSound.map { $0 + window } ?? 0)) / Double(rate))
    }

    // MARK: Files

    /// The samples of a mono S16 WAV (its "data" chunk) and its rate.
    static func readWAV(_ path: String) throws -> (samples: [Int16], rate: Int) {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func u32(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 | Int(data[at + 2]) << 16 | Int(data[at + 3]) << 24 }
        try #require(data.count >= 44 && data[0..<4] == [0x52, 0x49, 0x46, 0x46], "\(path): not a RIFF file")
        let rate = u32(24)
        var at = 12
        while at + 8 <= data.count {
            let id = String(decoding: data[at..<(at + 4)], as: UTF8.self)
            // alsa-lib's file plugin may leave the sizes unset (0 or 0xffffffff) while it writes.
            var size = u32(at + 4)
            if id == "data" {
                if size == 0 || at + 8 + size > data.count { size = data.count - at - 8 }
                let bytes = data[(at + 8)..<(at + 8 + size / 2 * 2)]
                let samples = bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
                return (samples.map { Int16(littleEndian: $0) }, rate)
            }
            at += 8 + size + size % 2
        }
        Issue.record("\(path): no data chunk")
        return ([], rate)
    }

    /// The line cache's renderings by their text (LineCache's format: "PHPCM1\n", the key's
    /// length and the key, whose last \u{1}-separated field is the text, then rate, count and
    /// the S16 samples). A text can have several (another voice file, another engine).
    static func cachedLines(_ directory: String) throws -> [String: [[Int16]]] {
        var lines: [String: [[Int16]]] = [:]
        let magic = Array("PHPCM1\n".utf8)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name.hasSuffix(".pcm") {
            guard let data = FileManager.default.contents(atPath: directory + "/" + name) else { continue }
            let bytes = [UInt8](data)
            func u32(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
            guard bytes.count >= magic.count + 4, Array(bytes[0..<magic.count]) == magic else { continue }
            let keyLength = u32(magic.count)
            let keyEnd = magic.count + 4 + keyLength
            guard keyEnd + 8 <= bytes.count else { continue }
            let key = String(decoding: bytes[(magic.count + 4)..<keyEnd], as: UTF8.self)
            let count = u32(keyEnd + 4)
            guard keyEnd + 8 + count * 2 == bytes.count, let text = key.split(separator: "\u{1}", omittingEmptySubsequences: false).last
            else { continue }
            let samples = bytes[(keyEnd + 8)...].withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }.map { Int16(littleEndian: $0) }
            lines[String(text), default: []].append(samples)
        }
        return lines
    }
}

/// Issue #13: "no line cut inside a word", checked from the audio the demo handed to ALSA's
/// `file:` device. A more important line takes over the speech slot only at a pause of the
/// line playing (or at its end): so wherever a line stops being heard, its own rendering must
/// be in a pause there (20 ms under 5 % of its loudest 10 ms, starting by the end of the
/// mixer's 8 ms fade and a 25 ms tail), unless none of its sound was left.
///
/// Each pre-rendered line the demo says is in the line cache it was given, sample for sample
/// as the mixer played it (the demo's master gain is 0 dB). The demo WAV holds that rendering
/// unchanged from the line's start until the mixer fades it out: the first sample that
/// differs is where the line stopped being heard. Composed lines (clues, hints, the reward,
/// the finale) are synthesized when said and kept nowhere: they are counted, not checked.
@Suite struct DemoAudioTests {
    @Test func noLineOfTheDemoIsCutInsideAWord() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("demo-audio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let wavPath = directory.appendingPathComponent("heard.wav").path
        // A cache of its own: it then holds exactly the renderings this demo played (on
        // virtual time every line is rendered afresh and stored).
        let cacheDirectory = directory.appendingPathComponent("cache").path
        let result = try await PirateHunterBinary.run(
            ["demo", "--virtual-time", "--json", "--device", "file:FILE=\(wavPath),FORMAT=wav", "--cache-dir", cacheDirectory],
            timeout: 60)
        try #require(result.status == 0, "\(result.stderr)")
        let events = try jsonObjects(result)
        let (heard, rate) = try DemoAudio.readWAV(wavPath)
        try #require(rate == 22050 && heard.count > rate * 60)
        let cache = try DemoAudio.cachedLines(cacheDirectory)
        let arrr = try DemoAudio.readWAV(Repository.url.appendingPathComponent("voices/arrr.wav").path)
        let arrrLength = arrr.samples.count * rate / max(arrr.rate, 1)
        // The sounds are mixed on their own slot, over speech: not compared there.
        let sounds = events.filter { $0["event"] as? String == "sound" }.compactMap { $0["t"] as? Double }.map { t in
            max(0, Int(t * Double(rate)) - rate / 20)..<(Int(t * Double(rate)) + arrrLength + rate / 10)
        }

        var stops: [DemoAudio.Stop] = []
        var composed: [String] = []
        let says = events.filter { $0["event"] as? String == "say" }
        for e in says {
            let name = e["event_name"] as? String ?? "?", text = e["text"] as? String ?? ""
            let asked = try #require(e["t"] as? Double)
            guard let renderings = cache[text] else {
                composed.append(name)
                continue
            }
            // It starts when asked, or at the playing line's pause (within 0.6 s) or end (1 s).
            let from = Int(asked * Double(rate)) - rate / 20, to = Int(asked * Double(rate)) + rate * 3 / 2
            let placed = renderings.lazy.compactMap { line in DemoAudio.locate(line, in: heard, from: from, to: to, rate: rate).map { (line, $0) } }.first
            guard let (line, start) = placed else {
                Issue.record("\(name) at \(asked) s (\"\(text)\"): its cached rendering is not in the WAV")
                continue
            }
            stops.append(DemoAudio.stop(of: line, in: heard, at: start, rate: rate, ignore: sounds, name: name, asked: asked))
        }

        let takeovers = stops.filter(\.cut)
        let report = "\(stops.count) lines checked (\(composed.count) composed, not checked: \(composed.joined(separator: ", "))); "
            + "\(takeovers.count) taken over:\n" + takeovers.map { "  " + $0.description }.joined(separator: "\n")
        print("DemoAudioTests: " + report)
        // Not vacuous: the demo's walk has lines taken over (its finds take over the
        // "immediate" lines at 95.5 and 110.75 s with either eSpeak NG). Which others are
        // depends on its version: 3 takeovers with bookworm's 1.51, 4 with Debian 13's
        // 1.52, each run the same since every line is rendered afresh on virtual time
        // (before, a warm or cold cache gave 2, 3 or 4 from run to run).
        #expect(takeovers.count >= 2, "\(report)")
        #expect(stops.count >= 8, "\(report)")
        #expect(stops.allSatisfy { !$0.overSound }, "a stop hidden under a sound: \(report)")
        // The mixer took a 10 ms dip under 2 % of full scale for a pause: this test caught 3
        // of 6 takeovers losing part of a word ("on top of i|t!", "hear the c|oins", "D|ig").
        // A pause is now 20 ms under 5 % of the line's own loudest 10 ms.
        for s in takeovers {
            #expect(s.atPause, "cut inside a word: \(s)\n\(report)")
        }
    }

    /// The checker itself: a line spliced into another inside a word is caught; the same
    /// splice at a pause between its words, or at its end, is not.
    @Test func aSpliceInsideAWordIsCaughtAndOneAtAPauseIsNot() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("demo-audio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var renderings: [[Int16]] = []
        for (i, text) in ["Ye be gettin' hotter than a cannon in battle!", "By Davy Jones, ye be standing on top of it!"].enumerated() {
            let path = directory.appendingPathComponent("line\(i).wav").path
            let said = try await PirateHunterBinary.run(["say", text, "--out", path], timeout: 60)
            try #require(said.status == 0, "\(said.stderr)")
            let wav = try DemoAudio.readWAV(path)
            try #require(wav.rate == 22050 && wav.samples.count > wav.rate)
            renderings.append(wav.samples)
        }
        let (a, b) = (renderings[0], renderings[1])
        let rate = 22050, window = rate / 100
        let peak = DemoAudio.peakRMS(a, rate: rate)
        // Mid-word: the loudest 10 ms of the line's middle half. A pause: the middle of its
        // longest quiet stretch between its first and last sound.
        let middle = (a.count / 4)..<(a.count * 3 / 4)
        let loudest = try #require(stride(from: middle.lowerBound, to: middle.upperBound, by: window).max { DemoAudio.rms(a, $0..<($0 + window)) < DemoAudio.rms(a, $1..<($1 + window)) })
        let first = try #require(a.firstIndex { abs(Int($0)) > 2000 }), last = try #require(a.lastIndex { abs(Int($0)) > 2000 })
        var best = 0..<0, run = first
        for i in first..<last {
            if DemoAudio.rms(a, i..<(i + window)) >= DemoAudio.quietFraction * peak { run = i + 1 } else if i + 1 - run > best.count { best = run..<(i + 1) }
        }
        try #require(best.count > rate / 20, "the line has a pause of at least 50 ms")
        let pause = best.lowerBound + window / 2  // inside the quiet run, the window after it is quiet too

        /// `a` until `cut`, faded out over 8 ms with `b` fading in, as the mixer does.
        func splice(at cut: Int) -> [Int16] {
            let fade = Int(DemoAudio.fadeSeconds * Double(rate))
            var out = Array(a[0..<cut])
            for i in 0..<max(b.count, fade) {
                let g = Float(i + 1) / Float(fade)
                let old = cut + i < a.count && i < fade ? Float(a[cut + i]) * max(0, 1 - g) : 0
                let new = i < b.count ? Float(b[i]) * min(1, g) : 0
                out.append(Int16(max(-32768, min(32767, (old + new).rounded()))))
            }
            return out
        }
        let midWord = DemoAudio.stop(of: a, in: splice(at: loudest + window / 2), at: 0, rate: rate, name: "mid-word")
        let atPause = DemoAudio.stop(of: a, in: splice(at: pause), at: 0, rate: rate, name: "at a pause")
        let atEnd = DemoAudio.stop(of: a, in: a + b, at: 0, rate: rate, name: "at its end")
        print("DemoAudioTests (splices): \(midWord)\n  \(atPause)\n  \(atEnd)")
        #expect(midWord.cut && !midWord.atPause, "\(midWord)")
        #expect(abs(midWord.stopped - Double(loudest + window / 2) / Double(rate)) < 0.002, "the stop is found where the splice is")
        #expect(atPause.cut && atPause.atPause, "\(atPause)")
        #expect(!atEnd.cut && atEnd.atPause, "\(atEnd)")
    }
}
