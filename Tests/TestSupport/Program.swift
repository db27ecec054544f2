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

/// Runs a program as a user would, for the tests that check a command's output (on
/// `ChildProcess`).
public enum Program {
    /// The same as the synchronous `run`, from an async test: the wait sleeps between polls
    /// instead of holding one of Swift Testing's cooperative threads (one per core: on a
    /// 2-core machine only two commands would run at a time).
    public static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 120) async throws -> CommandResult {
        let (child, outputs) = try start(path, arguments, environment: environment)
        defer { try? FileManager.default.removeItem(atPath: outputs) }
        let ended = await child.wait(timeout: timeout)
        return try result(ended, outputs)
    }

    /// Runs `path` with `arguments` in the repository's root, with this process's environment
    /// and `environment` over it, standard input empty, and waits for it (a program still
    /// running after `timeout` seconds is killed, and its status is then 128 + 9).
    public static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 120) throws -> CommandResult {
        let (child, outputs) = try start(path, arguments, environment: environment)
        defer { try? FileManager.default.removeItem(atPath: outputs) }
        return try result(child.wait(timeout: timeout), outputs)
    }

    /// Output goes to files, not pipes: a file needs no end of file, so nothing waits for
    /// whichever other child might hold a copy of a pipe.
    private static func start(_ path: String, _ arguments: [String], environment: [String: String]) throws -> (ChildProcess, String) {
        let outputs = FileManager.default.temporaryDirectory.appendingPathComponent("ph-run-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: outputs, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        do {
            let child = try ChildProcess(path, arguments, environment: environment, stdout: .file(outputs + "/stdout"), stderr: .file(outputs + "/stderr"))
            return (child, outputs)
        } catch {
            try? FileManager.default.removeItem(atPath: outputs)
            throw error
        }
    }

    private static func result(_ ended: ChildProcess.Termination, _ outputs: String) throws -> CommandResult {
        let out = (try? Data(contentsOf: URL(fileURLWithPath: outputs + "/stdout"))) ?? Data()
        let err = (try? Data(contentsOf: URL(fileURLWithPath: outputs + "/stderr"))) ?? Data()
        return CommandResult(
            status: ended.signalled ? 128 + ended.status : ended.status, stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self) + (ended.timedOut ? "\n(killed: still running after its time)" : ""))
    }
}
