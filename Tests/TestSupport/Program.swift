import Foundation

/// What a program did: its exit status and everything it wrote.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var lines: [String] { stdout.split(separator: "\n").map(String.init) }

    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }
}

/// Runs a program as a user would, for the tests that check a command's output.
public enum Program {
    /// The same as the synchronous `run`, from an async test: the wait is on a thread of its
    /// own. A synchronous wait holds one of Swift Testing's cooperative threads (one per core),
    /// so on a 2-core machine only two commands ran at a time and `swift test` took the sum of
    /// their durations over two.
    public static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 120) async throws -> CommandResult {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try run(path, arguments, environment: environment, timeout: timeout) })
            }.start()
        }
    }

    /// Runs `path` with `arguments` in the repository's root, with this process's environment
    /// and `environment` over it, standard input empty, and waits for it (a program still
    /// running after `timeout` seconds is terminated).
    public static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 120) throws -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.currentDirectoryURL = Repository.url
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        process.environment = env
        // Output goes to files, not pipes: with many commands started at once from several
        // threads, a pipe's write end leaks into another test's child (fork before exec) and
        // reading to EOF then waits for that child too. A file needs no EOF.
        let outputs = FileManager.default.temporaryDirectory.appendingPathComponent("ph-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: outputs, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: outputs) }
        let outURL = outputs.appendingPathComponent("stdout"), errURL = outputs.appendingPathComponent("stderr")
        for file in [outURL, errURL] { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try out.close()
        try err.close()
        // A hung command is killed rather than hanging the test run.
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [process] in
            if process.isRunning { process.terminate() }
        }
        process.waitUntilExit()
        let outData = try Data(contentsOf: outURL)
        let errData = try Data(contentsOf: errURL)
        return CommandResult(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }
}
