#if canImport(Glibc)
import Glibc
#endif
import Audio
import Hunt

/// The one validation of a configuration beyond its own text: every file it names opened and
/// read as the hunt will read it. `check` lists what it finds, `hunt` refuses to start on it
/// and a reload (SIGHUP) refuses to take it, all with the same lines (the decoding already
/// refused what is wrong inside the file itself).
enum ConfigurationValidator {
    /// A clue is a few sentences; a minute of recording is already long for a child.
    static let maximumClueSeconds = 120.0
    /// Every recorded clue of a trail together (what the hunter holds decoded in memory).
    static let maximumCluesSeconds = 600.0
    /// The rate the check decodes at: only the hunt's mixer resamples, and no problem
    /// depends on the rate.
    static let checkRate = 22_050

    /// Every problem, in the file's order (empty: the configuration can be hunted).
    static func problems(_ configuration: HunterConfiguration) -> [CLIError] {
        clueRecordings(configuration.hunt.trail, sampleRate: checkRate).problems
    }

    /// The whole configuration refused when there is a problem: the first one's exit code,
    /// every one's line.
    static func validate(_ configuration: HunterConfiguration) throws(CLIError) {
        let found = problems(configuration)
        guard var first = found.first else { return }
        first.further = found.dropFirst().map(\.message)
        throw first
    }

    /// The trail's recorded clues read for the mixer at `sampleRate`, each file once; a file
    /// that is missing is "no input" (66), one that is not a usable WAV a configuration
    /// error (78), each naming its step.
    static func clueRecordings(_ trail: [TrailStep], sampleRate: Int) -> (recordings: [String: PCMBuffer], problems: [CLIError]) {
        var loaded: [String: PCMBuffer] = [:]
        var problems: [CLIError] = []
        var failed: Set<String> = []
        var total = 0.0
        for (i, step) in trail.enumerated() {
            guard case let .recording(path)? = step.clue, loaded[path] == nil, !failed.contains(path) else { continue }
            let key = "hunt.trail[\(i)].clue_wav"
            do {
                // Too long is refused from the header, before the samples are decoded.
                let buffer = try WAVFile.readForMixer(path: path, rate: sampleRate, maximumSeconds: maximumClueSeconds)
                total += buffer.durationSeconds
                if total > maximumCluesSeconds {
                    failed.insert(path)
                    problems.append(CLIError(.config, "\(key): \(path): the recorded clues up to this one last \(Int(total.rounded())) s; allowed: at most \(Int(maximumCluesSeconds)) s together"))
                } else if buffer.frameCount == 0 {
                    failed.insert(path)
                    problems.append(CLIError(.config, "\(key): \(path): holds no sound"))
                } else {
                    loaded[path] = buffer
                }
            } catch {
                failed.insert(path)
                let missing = error.errno == ENOENT || error.errno == ENOTDIR
                problems.append(CLIError(missing ? .noInput : (error.errno == EACCES || error.errno == EPERM ? .noPermission : .config), "\(key): \(error.message)"))
            }
        }
        return (loaded, problems)
    }
}
