import Foundation
import Testing

/// Runs the real `pirate-hunter` binary that `swift test` built, as a user would.
struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

enum PirateHunterBinary {
    static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static var fixtures: URL { repository.appendingPathComponent("Tests/BluetoothTests/Fixtures") }

    /// One line cache for the tests' runs of the binary (a debug build synthesizes the 57
    /// lines slowly; every run with a fresh cache did it again). Writes into it are atomic.
    static var lineCache: String { repository.appendingPathComponent(".build/test-line-cache").path }

    static var url: URL {
        // The test bundle lives in the build products folder next to the executable.
        let products = Bundle.main.bundleURL
        let candidates = [
            products.appendingPathComponent("pirate-hunter"),
            products.deletingLastPathComponent().appendingPathComponent("pirate-hunter"),
            repository.appendingPathComponent(".build/debug/pirate-hunter"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[2]
    }

    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 120) throws -> CommandResult {
        try runProgram(url.path, arguments, environment: environment, timeout: timeout)
    }

    /// Any program (e.g. `script`, to give pirate-hunter a terminal), run the same way.
    static func runProgram(_ path: String, _ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 120) throws -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.currentDirectoryURL = repository
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // A hung command is killed rather than hanging the test run.
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [process] in
            if process.isRunning { process.terminate() }
        }
        // Read while it runs so a large output cannot fill the pipe and stall it.
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CommandResult(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }
}
