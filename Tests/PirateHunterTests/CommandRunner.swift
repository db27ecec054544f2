import Foundation
import Testing
import TestSupport

/// Runs the real `pirate-hunter` binary that `swift test` built, as a user would.
struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

enum PirateHunterBinary {
    static var fixtures: URL { Repository.url.appendingPathComponent("Tests/BluetoothTests/Fixtures") }

    /// One line cache for the tests' runs of the binary (a debug build synthesizes the 57
    /// lines slowly; every run with a fresh cache did it again). Writes into it are atomic.
    static var lineCache: String { Repository.url.appendingPathComponent(".build/test-line-cache").path }

    static var url: URL {
        // The test bundle lives in the build products folder next to the executable.
        let products = Bundle.main.bundleURL
        let candidates = [
            products.appendingPathComponent("pirate-hunter"),
            products.deletingLastPathComponent().appendingPathComponent("pirate-hunter"),
            Repository.url.appendingPathComponent(".build/debug/pirate-hunter"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[2]
    }

    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 120) throws -> CommandResult {
        try runProgram(url.path, arguments, environment: environment, timeout: timeout)
    }

    /// The same, from an async test: the wait is on a thread of its own. A synchronous wait
    /// holds one of Swift Testing's cooperative threads (one per core), so on this 2-core
    /// machine only two commands ran at a time and `swift test` took the sum of their
    /// durations over two.
    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 120) async throws -> CommandResult {
        try await runProgram(url.path, arguments, environment: environment, timeout: timeout)
    }

    static func runProgram(_ path: String, _ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 120) async throws -> CommandResult {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try runProgram(path, arguments, environment: environment, timeout: timeout) })
            }.start()
        }
    }

    /// Any program (e.g. `script`, to give pirate-hunter a terminal), run the same way.
    static func runProgram(_ path: String, _ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 120) throws -> CommandResult {
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

    /// `scripts/bench/fake-controller.py` serving H4 on `socket` with `arguments`, started and
    /// waited for (its `.ready` file). The caller kills it (SIGKILL: a child may inherit a mask
    /// with SIGTERM blocked from the test runner's thread).
    static func startFakeController(socket: String, _ arguments: [String]) throws -> Process {
        let controller = Process()
        controller.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        controller.arguments = ["python3", Repository.url.appendingPathComponent("scripts/bench/fake-controller.py").path, socket] + arguments
        controller.standardError = FileHandle.nullDevice
        controller.standardOutput = FileHandle.nullDevice
        try controller.run()
        for _ in 0..<400 where !FileManager.default.fileExists(atPath: socket + ".ready") { usleep(25_000) }
        return controller
    }
}

