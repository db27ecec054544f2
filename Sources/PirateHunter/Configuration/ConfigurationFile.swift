#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials
import Radio
import Voice

// Loading: the file found, read and checked (the decoding is in ConfigurationDecoding),
// the flags put over it, the directories left to their defaults resolved.

extension HunterConfiguration {
    /// The whole chain for a command: reads `flags.configPath` (or the default path, where a
    /// missing file means defaults), applies the flags, resolves the default voice and cache
    /// directories. Errors: 66 no such file (explicit --config), 77 unreadable, 78 invalid
    /// content, 64 a `--lang` without its line pack. `validate` (the hunt's start and its
    /// reload) also opens every file the configuration names (`ConfigurationValidator`).
    static func load(
        flags: ConfigurationFlags, environment: [String: String] = ProcessInfo.processInfo.environment,
        executablePath: String? = VoiceLocations.currentExecutablePath(), defaultPath: String = HunterConfiguration.defaultPath,
        validate: Bool = false
    ) throws(CLIError) -> HunterConfiguration {
        let path = flags.configPath ?? defaultPath
        var configuration: HunterConfiguration
        if let bytes = try ConfigurationFile.read(path, explicit: flags.configPath != nil) {
            configuration = try decode(bytes, file: path)
        } else {
            configuration = HunterConfiguration()
        }
        configuration.apply(flags)
        configuration.resolveDirectories(environment: environment, executablePath: executablePath)
        try configuration.checkLanguagePack(fromFlag: flags.has(Flags.language))
        if validate { try ConfigurationValidator.validate(configuration) }
        return configuration
    }

    /// The line pack must exist in the voices directory: a wrong language is named with the
    /// packs there (exit 64 for `--lang`, 78 for the file). A missing voices directory is
    /// left to `PirateVoice.load`, which names it.
    func checkLanguagePack(fromFlag: Bool) throws(CLIError) {
        guard let directory = voice.voicesDirectory else { return }
        let lines = directory + "/lines"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: lines) else { return }
        let packs = names.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(".json".count)) }.sorted()
        guard !packs.contains(voice.language) else { return }
        let problem = "no line pack '\(voice.language)' in \(lines); allowed: \(packs.joined(separator: ", "))"
        if fromFlag { throw CLIError(.usage, Flags.language.name + ": " + problem) }
        throw CLIError(.config, "\(file ?? "configuration"): voice.language: " + problem)
    }

    /// The paths the file names (clue recordings, the capture, the voice and cache
    /// directories) made absolute from the file's own directory, as a parent expects: under
    /// systemd the working directory is `/`. A file read from a pipe (`--config <(...)`) has
    /// no directory of its own; its paths stay relative to the working directory.
    mutating func resolveRelativePaths(from file: String) {
        guard let directory = Self.directory(of: file) else { return }
        func absolute(_ path: String) -> String {
            path.isEmpty || path.hasPrefix("/") ? path : (directory.hasSuffix("/") ? directory : directory + "/") + path
        }
        for i in hunt.trail.indices {
            if case let .recording(path)? = hunt.trail[i].clue { hunt.trail[i].clue = .recording(absolute(path)) }
        }
        record = record.map(absolute)
        voice.voicesDirectory = voice.voicesDirectory.map(absolute)
        voice.cacheDirectory = voice.cacheDirectory.map(absolute)
    }

    /// The directory holding `file`, absolute; nil for a pipe's name (/dev/fd/N,
    /// /proc/self/fd/N).
    static func directory(of file: String) -> String? {
        if file.hasPrefix("/dev/fd/") || file.hasPrefix("/proc/") { return nil }
        var path = file
        if !path.hasPrefix("/") {
            guard let cwd = FileManager.default.currentDirectoryPath.nonEmpty else { return nil }
            path = cwd + "/" + path
        }
        guard let slash = path.lastIndex(of: "/") else { return nil }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    /// Fills in the voice and cache directories left to their defaults.
    mutating func resolveDirectories(environment: [String: String], executablePath: String?) {
        if voice.voicesDirectory == nil {
            voice.voicesDirectory = VoiceLocations.resolve(executablePath: executablePath)
        }
        if voice.cacheDirectory == nil {
            if let systemd = environment["CACHE_DIRECTORY"], let first = systemd.split(separator: ":").first {
                voice.cacheDirectory = String(first)
            } else if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
                voice.cacheDirectory = xdg + "/pirate-hunter"
            } else if let home = environment["HOME"], home.hasPrefix("/"), home != "/" {
                voice.cacheDirectory = home + "/.cache/pirate-hunter"
            }
        }
    }
}

/// Reading the configuration file: a missing default file means the defaults, a missing
/// explicit one is an error; a directory, an unreadable file and anything over
/// `maximumBytes` are refused with their own exit codes. Pipes are read like files
/// (`--config <(...)`).
extension String {
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}

enum ConfigurationFile {
    static let maximumBytes = 1 << 20
    /// How long a pipe or FIFO may take to deliver its first (and each further) bytes.
    static let pipeTimeout = 5.0

    /// The file's bytes; nil when the default file is missing (defaults apply).
    static func read(_ path: String, explicit: Bool) throws(CLIError) -> [UInt8]? {
        let fd: FileDescriptor
        do {
            // Non-blocking: a FIFO nobody writes to must not hang the start (open would wait
            // for a writer); it gets `pipeTimeout` to deliver instead.
            fd = try FileDescriptor.open(path, O_RDONLY | O_NONBLOCK)
        } catch {
            switch error.errno {
            case ENOENT, ENOTDIR:
                if !explicit { return nil }
                throw CLIError(.noInput, "\(path): no such configuration file")
            case EACCES, EPERM:
                throw CLIError(.noPermission, "\(path): cannot read the configuration file: \(error.reason)")
            default:
                throw CLIError(.noInput, "\(path): cannot open the configuration file: \(error.reason)")
            }
        }
        defer { fd.close() }
        var info = stat()
        let statted = fstat(fd.rawValue, &info) == 0
        if statted, (info.st_mode & mode_t(S_IFMT)) == mode_t(S_IFDIR) {
            throw CLIError(.noInput, "\(path): is a directory, not a configuration file")
        }
        let isFIFO = statted && (info.st_mode & mode_t(S_IFMT)) == mode_t(S_IFIFO)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n: Int?
            do {
                n = try fd.read(into: &chunk)
            } catch {
                throw CLIError(error.errno == EACCES ? .noPermission : .ioError,
                               "\(path): cannot read the configuration file: \(error.reason)")
            }
            guard let n else {
                // A pipe with nothing yet: wait for it, a bounded time.
                var p = pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0)
                if poll(&p, 1, Int32(pipeTimeout * 1000)) <= 0 {
                    throw CLIError(.noInput, "\(path): nothing to read after \(Int(pipeTimeout)) s (a FIFO nobody writes to?)")
                }
                continue
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk.prefix(n))
            if bytes.count > maximumBytes {
                throw CLIError(.config, "\(path): larger than \(maximumBytes) bytes; not a configuration file")
            }
        }
        if bytes.isEmpty && isFIFO {
            throw CLIError(.noInput, "\(path): a FIFO nobody writes to, not a configuration file")
        }
        return bytes
    }
}
