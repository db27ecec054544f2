import Foundation
import Testing
import TestSupport

@testable import PirateHunter

/// A WAV header and `seconds` of silence-free samples in a format the mixer may or may not take.
private func wav(code: UInt16 = 1, bits: UInt16 = 16, rate: UInt32 = 8000, seconds: Double = 0.5) -> Data {
    let frames = Int(Double(rate) * seconds)
    let bytesPerSample = Int(bits) / 8
    var body = Data()
    for i in 0..<frames {
        let value = Int16(truncatingIfNeeded: (i % 40) * 800 - 16_000)
        var sample = [UInt8](repeating: 0, count: bytesPerSample)
        sample[bytesPerSample - 1] = UInt8(truncatingIfNeeded: value >> 8)
        if bytesPerSample > 1 { sample[bytesPerSample - 2] = UInt8(truncatingIfNeeded: value) }
        if bytesPerSample == 1 { sample[0] = UInt8(truncatingIfNeeded: (value >> 8) + 128) }
        body.append(contentsOf: sample)
    }
    func le<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
    var out = Data("RIFF".utf8)
    out.append(contentsOf: le(UInt32(36 + body.count)))
    out.append(contentsOf: Array("WAVEfmt ".utf8) + le(UInt32(16)) + le(code) + le(UInt16(1)) + le(rate))
    out.append(contentsOf: le(rate * UInt32(bytesPerSample)) + le(UInt16(bytesPerSample)) + le(bits))
    out.append(contentsOf: Array("data".utf8) + le(UInt32(body.count)))
    out.append(body)
    return out
}

/// `check` refuses what `hunt` refuses, with the same lines: one validator
/// (`ConfigurationValidator`) behind both, run here over a corpus of broken files through the
/// real binary.
@Suite struct ConfigurationValidationTests {
    static let region = "50495241-5445-2D48-554E-544552000000"

    /// One case: the file's text (`DIR` is the scratch directory), the exit code and what
    /// each refusal line contains, in order.
    struct Broken: CustomStringConvertible {
        var name: String
        var file: [UInt8]
        var code: Int32
        var lines: [String]
        var description: String { name }
    }

    static func trail(_ steps: String) -> String {
        #"{"transport": "simulator", "hunt": {"trail": [\#(steps)]}}"#
    }

    static let corpus: [Broken] = [
        Broken(name: "a clue_wav that does not exist",
               file: Array(trail(#"{"region": "\#(region):1:1", "clue_wav": "DIR/nowhere.wav"}"#).utf8), code: 66,
               lines: ["hunt.trail[0].clue_wav: DIR/nowhere.wav: cannot read"]),
        Broken(name: "a 24-bit WAV",
               file: Array(trail(#"{"region": "\#(region):1:1", "clue_wav": "DIR/deep.wav"}"#).utf8), code: 78,
               lines: ["hunt.trail[0].clue_wav: DIR/deep.wav: 24-bit samples"]),
        Broken(name: "a float WAV",
               file: Array(trail(#"{"region": "\#(region):1:1", "clue_wav": "DIR/float.wav"}"#).utf8), code: 78,
               lines: ["hunt.trail[0].clue_wav: DIR/float.wav: format code 3 is not PCM"]),
        Broken(name: "a clue of three minutes",
               file: Array(trail(#"{"region": "\#(region):1:1", "clue_wav": "DIR/long.wav"}"#).utf8), code: 78,
               lines: ["hunt.trail[0].clue_wav: DIR/long.wav: 180 s long; allowed: at most 120 s"]),
        Broken(name: "a 4-hour clue (never decoded)",
               file: Array(trail(#"{"region": "\#(region):1:1", "clue_wav": "DIR/huge.wav"}"#).utf8), code: 78,
               lines: ["hunt.trail[0].clue_wav: DIR/huge.wav: the file is too large for 120 s of sound"]),
        Broken(name: "eleven minutes of clues together",
               file: Array(trail((1...6).map { #"{"region": "\#(region):1:\#($0)", "clue_wav": "DIR/clue\#($0).wav"}"# }.joined(separator: ", ")).utf8),
               code: 78,
               lines: ["hunt.trail[5].clue_wav: DIR/clue6.wav: the recorded clues up to this one last 660 s; allowed: at most 600 s together"]),
        Broken(name: "every problem, not the first",
               file: Array(trail(#"""
                   {"region": "\#(region):1:1", "clue_wav": "deep.wav"}, {"region": "\#(region):1:2", "clue_wav": "DIR/nowhere.wav"},
                   {"region": "\#(region):1:3", "clue_wav": "DIR/float.wav"}
                   """#).utf8), code: 78,
               lines: ["hunt.trail[0].clue_wav: DIR/deep.wav: 24-bit", "hunt.trail[1].clue_wav: DIR/nowhere.wav: cannot read",
                       "hunt.trail[2].clue_wav: DIR/float.wav: format code 3"]),
        Broken(name: "three regions and a trail",
               file: Array(#"""
                   {"transport": "simulator", "regions": [{"name": "a", "uuid": "\#(region)", "major": 1}, {"name": "b", "uuid": "\#(region)", "major": 2},
                    {"name": "c", "uuid": "\#(region)", "major": 3}], "hunt": {"trail": [{"region": "\#(region):1:1"}]}}
                   """#.utf8), code: 78,
               lines: ["regions: has 3 regions and hunt.trail is given too"]),
        Broken(name: "curly quotes from a phone",
               file: Array("{\u{201C}transport\u{201D}: \"simulator\"}".utf8), code: 78,
               lines: ["line 1, column 2: not valid JSON: expected a key in double quotes, found a curly quote '\u{201C}' (type a straight \" instead"]),
        Broken(name: "Latin-1 from an old editor",
               file: Array(#"{"transport": "simulator", "hunt": {"trail": [{"region": "\#(region):1:1", "clue": "Sous l'arbre "#.utf8) + [0xE9]
                   + Array(#"t\#u{00E9}"}]}}"#.utf8),
               code: 78, lines: ["line 1, column 124: not UTF-8 text (byte 0xe9: saved as Latin-1 or Windows-1252?): save the file as UTF-8"]),
    ]

    @Test(arguments: corpus)
    func checkRefusesWhatHuntRefusesWithTheSameLines(_ broken: Broken) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("validate-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try wav(bits: 24).write(to: URL(fileURLWithPath: directory + "/deep.wav"))
        try wav(code: 3, bits: 32).write(to: URL(fileURLWithPath: directory + "/float.wav"))
        try wav(rate: 4000, seconds: 180).write(to: URL(fileURLWithPath: directory + "/long.wav"))
        let text = String(decoding: broken.file, as: UTF8.self)
        if text.contains("clue1.wav") {
            for k in 1...6 { try wav(bits: 8, rate: 4000, seconds: 110).write(to: URL(fileURLWithPath: directory + "/clue\(k).wav")) }
        }
        if text.contains("huge.wav") {
            // 8-bit at 4 kHz, 4 hours: 58 MB of header-true silence.
            var huge = wav(bits: 8, rate: 4000, seconds: 0)
            let hugeBytes = 4 * 3600 * 4000
            huge.replaceSubrange(40..<44, with: withUnsafeBytes(of: UInt32(hugeBytes).littleEndian) { Data($0) })
            huge.append(Data(count: hugeBytes))
            try huge.write(to: URL(fileURLWithPath: directory + "/huge.wav"))
        }
        let file = text.contains("DIR") ? Array(text.replacingOccurrences(of: "DIR", with: directory).utf8) : broken.file
        let config = directory + "/hunter.json"
        try Data(file).write(to: URL(fileURLWithPath: config))
        let expected = broken.lines.map { $0.replacingOccurrences(of: "DIR", with: directory) }

        let hunt = try await PirateHunterBinary.run(
            ["hunt", "--config", config, "--virtual-time", "--duration", "2", "--device", "null", "--cache-dir", PirateHunterBinary.lineCache], timeout: 60)
        #expect(hunt.status == broken.code, "\(hunt.stderr)")
        let refused = hunt.stderr.split(separator: "\n").map { String($0.dropFirst("pirate-hunter: hunt: ".count)) }
        #expect(refused.count == expected.count, "\(hunt.stderr)")
        for (line, part) in zip(refused, expected) { #expect(line.contains(part), "\(line)") }

        let check = try await PirateHunterBinary.run(["check", "--json", "--silent", "--config", config], timeout: 60)
        #expect(check.status != 0)
        let failures = try jsonObjects(check).filter { $0["section"] as? String == "configuration" && $0["status"] as? String == "fail" }
        #expect(failures.compactMap { $0["detail"] as? String } == refused, "\(check.stdout)")
        #expect(failures.first?["exit"] as? Int == Int(broken.code))
    }

    /// A file saved by Notepad or a phone starts with a byte order mark: read as if it did not.
    @Test func aByteOrderMarkIsAccepted() throws {
        let configuration = try HunterConfiguration.decode([0xEF, 0xBB, 0xBF] + Array(#"{"transport": "simulator"}"#.utf8), file: "/etc/x/hunter.json")
        #expect(configuration.transport == .simulator)
        #expect(throws: CLIError.self) { try HunterConfiguration.decode([0xFF, 0xFE, 0x7B, 0x00], file: "hunter.json") }
    }

    /// Under systemd the working directory is /: a relative path is the file's neighbour.
    @Test func relativePathsAreRelativeToTheConfigurationFile() throws {
        let configuration = try HunterConfiguration.decode(Array(#"""
            {"record": "hunt.btsnoop", "voice": {"voices_directory": "../voices", "cache_directory": ""},
             "hunt": {"trail": [{"region": "\#(Self.region):1:1", "clue_wav": "clues/one.wav"}, {"region": "\#(Self.region):1:2", "clue_wav": "/srv/two.wav"}]}}
            """#.utf8), file: "/etc/pirate-hunter/hunter.json")
        #expect(configuration.hunt.trail.map(\.clue) == [.recording("/etc/pirate-hunter/clues/one.wav"), .recording("/srv/two.wav")])
        #expect(configuration.record == "/etc/pirate-hunter/hunt.btsnoop")
        #expect(configuration.voice.voicesDirectory == "/etc/pirate-hunter/../voices")
        #expect(configuration.voice.cacheDirectory == "")
        // A pipe has no directory: its paths stay as written.
        let piped = try HunterConfiguration.decode(Array(#"{"record": "x.btsnoop"}"#.utf8), file: "/dev/fd/63")
        #expect(piped.record == "x.btsnoop")
    }

    /// Several regions without a trail are all hunted, in any order; never the first alone.
    @Test func severalRegionsAreATrailInAnyOrder() throws {
        let configuration = try HunterConfiguration.decode(Array(#"""
            {"regions": [{"name": "a", "uuid": "\#(Self.region)", "major": 1}, {"name": "b", "uuid": "\#(Self.region)", "major": 2},
             {"name": "c", "uuid": "\#(Self.region)", "major": 3}]}
            """#.utf8), file: "hunter.json")
        let hunt = configuration.huntConfiguration()
        #expect(hunt.trail.map(\.region.name) == ["a", "b", "c"])
        #expect(hunt.trailRules.order == .anyOrder)
        #expect(configuration.hunterSetup().regions.map(\.name) == ["a", "b", "c"])
        let one = try HunterConfiguration.decode(Array(#"{"regions": [{"name": "a", "uuid": "\#(Self.region)"}]}"#.utf8), file: "hunter.json")
        #expect(one.huntConfiguration().trail.isEmpty)
    }

    /// What a phone's keyboard or an old editor puts in, named with what to type instead.
    @Test func encodingMistakesSayWhatToDo() {
        func problem(_ bytes: [UInt8]) -> String {
            do {
                _ = try HunterConfiguration.decode(bytes, file: "h.json")
                return ""
            } catch { return error.message }
        }
        #expect(problem(Array("{\"a\": \u{201C}x\u{201D}}".utf8)).contains("line 1, column 7: not valid JSON: expected a value, found a curly quote"))
        #expect(problem(Array("{\n\"transport\":\u{00A0}\"auto\"}".utf8)).contains("line 2, column 13: not valid JSON: expected a value, found an invisible space U+00A0"))
        #expect(problem([0x7B, 0x0A, 0x93, 0x61, 0x94, 0x3A, 0x31, 0x7D]).contains("line 2, column 1: a Windows curly quote (byte 0x93): type a straight \""))
        #expect(problem([0x7B, 0x22, 0xC3, 0x22, 0x7D]).contains("line 1, column 3: not UTF-8 text (byte 0xc3"))
        #expect(problem([0x7B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x7D]).contains("not UTF-8"))  // a surrogate
        #expect(ConfigurationText.firstInvalidByte(Array("ok é ✓ 🦜".utf8)) == nil)
        #expect(ConfigurationText.firstInvalidByte([0xF0, 0x9F, 0xA6]) == 0)  // cut short
        #expect(ConfigurationText.firstInvalidByte([0x41, 0xC0, 0x80]) == 1)  // overlong
    }
}
