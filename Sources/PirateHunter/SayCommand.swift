#if canImport(Glibc)
import Glibc
#endif
import Audio
import Hunt
import Voice

/// `pirate-hunter say TEXT [--line EVENT] [--config FILE] [--device NAME] [--volume DB]
///  [--out FILE.wav] [--sound] [--voice-dir DIR] [--lang en-family|en-pirate|ja]`
///
/// Speaks TEXT (or a random line of EVENT) with the pack's voice, then the "arrr" with
/// `--sound`; `--out` writes a WAV instead of playing.
enum SayCommand {
    static func run(_ arguments: ParsedArguments) throws(CLIError) -> ExitCode {
        let text = arguments.operand
        let event = arguments.flags.line
        // The configuration's voice and audio (the default file when there is one, or
        // --config), the flags over it, as the hunt would speak and play.
        let settings = try HunterConfiguration.load(flags: arguments.flags)
        let device = settings.audio.device
        let volume = settings.audio.volumeDB
        let output = arguments.flags.out
        let sound = arguments.has(Flags.sound)
        let voiceDirectory = settings.voice.voicesDirectory
        let language = settings.voice.language
        if text == nil && event == nil { throw CLIError(.usage, "give TEXT or \(Flags.line.synopsis) (see 'pirate-hunter say --help')") }
        if text != nil && event != nil { throw CLIError(.usage, "give TEXT or \(Flags.line.synopsis), not both") }
        if output != nil && arguments.has(Flags.device) { throw CLIError(.usage, "give --device or --out, not both") }

        let voices = VoiceLocations.resolve(explicit: voiceDirectory)
        let pack: LinePack
        let engine: EspeakSynthesizer
        var arrr: PCMBuffer?
        do {
            pack = try LinePack.load(language: language, voicesDirectory: voices)
            engine = try EspeakSynthesizer.shared()
            if sound { arrr = try PirateVoice.loadArrr(voicesDirectory: voices, sampleRate: engine.sampleRate) }
        } catch {
            throw cliError(error)
        }

        // Open the device before synthesizing: no device, no waiting.
        var playback: ALSAPlayback?
        if output == nil {
            var configuration = PlaybackConfiguration(device: device)
            configuration.sampleRate = engine.sampleRate
            configuration.volumeDB = volume
            do {
                playback = try ALSAPlayback.open(configuration: configuration)
            } catch {
                throw CLIError(.unavailable, "no audio device: \(error.message)")
            }
        }

        let spoken: String
        if let event {
            var picker = LinePicker()
            var random = SystemRandomNumberGenerator()
            let lines = pack.lines(for: event)
            let line = lines[picker.pick(event, count: lines.count, using: &random)]
            // A trail's line with sample values in its {placeholders}, as a hunt would fill them.
            spoken = event.isComposed
                ? LineDetail(treasure: 2, next: 1, hunter: 2, seconds: 95, host: "piratepi", port: 8080, code: "123456").fill(line) : line
            Log.info("say: \(spoken)")
        } else {
            spoken = SpeechText.sanitize(text ?? "", maxCharacters: 1000)
        }
        let speech: PCMBuffer
        do {
            speech = try engine.synthesize(spoken, voice: pack.voice)
        } catch {
            playback?.shutdown()
            throw cliError(error)
        }

        guard let playback else {
            var samples = speech.samples
            if let arrr { samples += arrr.samples }
            do {
                // At the volume the mixer would play it at.
                try WAVFile.write(
                    PCMBuffer(sampleRate: speech.sampleRate, channels: 1, samples: samples).atVolume(dB: volume), to: output ?? "")
            } catch {
                throw CLIError(error.errno.map { ApplianceRuntime.outputFileExitCode(errno: $0) } ?? .ioError, error.message)
            }
            return .ok
        }
        playback.play(speech, slot: .speech)
        var finished = playback.waitUntilIdle(timeout: .seconds(120))
        if let arrr {
            playback.play(arrr, slot: .effect)
            finished = playback.waitUntilIdle(timeout: .seconds(30)) && finished
        }
        playback.shutdown()
        if !finished { throw CLIError(.ioError, "audio device '\(device)' stopped playing") }
        return .ok
    }

    private static func cliError(_ error: VoiceError) -> CLIError {
        switch error.kind {
        case .missingFile: CLIError(.noInput, error.message)
        case .noPermission: CLIError(.noPermission, error.message)
        case .badData: CLIError(.dataError, error.message)
        case .engine: CLIError(.unavailable, error.message)
        }
    }
}
