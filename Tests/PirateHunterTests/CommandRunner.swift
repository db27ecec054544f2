import Foundation
import Testing
import TestSupport

/// Runs the real `pirate-hunter` binary that `swift test` built, as a user would (on
/// `Program.run`, TestSupport).
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
        try Program.run(url.path, arguments, environment: environment, timeout: timeout)
    }

    /// The same, from an async test: the wait is on a thread of its own. A synchronous wait
    /// holds one of Swift Testing's cooperative threads (one per core), so on this 2-core
    /// machine only two commands ran at a time and `swift test` took the sum of their
    /// durations over two.
    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 120) async throws -> CommandResult {
        try await Program.run(url.path, arguments, environment: environment, timeout: timeout)
    }

    /// `scripts/bench/fake-controller.py` serving H4 on `socket` with `arguments`, started and
    /// waited for (its `.ready` file). The caller kills it (`kill()`, which also reaps it).
    static func startFakeController(socket: String, _ arguments: [String]) throws -> ChildProcess {
        let controller = try ChildProcess(
            "/usr/bin/env", ["python3", Repository.url.appendingPathComponent("scripts/bench/fake-controller.py").path, socket] + arguments)
        for _ in 0..<400 where !FileManager.default.fileExists(atPath: socket + ".ready") { usleep(25_000) }
        return controller
    }
}

