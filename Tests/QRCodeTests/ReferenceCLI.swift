import Foundation
import Testing
import TestSupport

/// The reference encoder: Debian's `qrencode` command (same libqrencode, its own argument
/// handling and renderers), installed by scripts/deps.sh. Missing is a failure, not a skip.
enum ReferenceCLI {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func executable() throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin"]
        for folder in folders {
            let candidate = URL(fileURLWithPath: folder).appendingPathComponent("qrencode")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw Failure(description: "the qrencode command is not installed (Debian package qrencode; run scripts/deps.sh)")
    }

    /// Runs `qrencode ARGUMENTS -o -` and returns its standard output split into lines.
    static func run(_ arguments: [String]) throws -> [String] {
        let result = try Program.run(try executable().path, arguments + ["-o", "-"])
        guard result.status == 0 else {
            throw Failure(description: "qrencode \(arguments) exited \(result.status): " + result.stderr)
        }
        var lines = result.stdout.components(separatedBy: "\n")
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    /// The reference matrix for `text`: `qrencode -t ASCII -m 0 -l LEVEL -8 TEXT`, where each
    /// module is two characters, "##" dark and two spaces light. Rows are returned as-is.
    static func matrix(_ text: String, level: String) throws -> [[Bool]] {
        try parseASCII(run(["-t", "ASCII", "-m", "0", "-l", level, "-8", text]))
    }

    /// Same, reading the bytes from a file (`-r`), so the text may hold a NUL.
    static func matrix(file: URL, level: String) throws -> [[Bool]] {
        try parseASCII(run(["-t", "ASCII", "-m", "0", "-l", level, "-8", "-r", file.path]))
    }

    static func parseASCII(_ lines: [String]) throws -> [[Bool]] {
        let rows = try lines.map { line -> [Bool] in
            let chars = Array(line)
            guard chars.count % 2 == 0 else { throw Failure(description: "odd qrencode ASCII line: \(line)") }
            return try stride(from: 0, to: chars.count, by: 2).map { i -> Bool in
                switch (chars[i], chars[i + 1]) {
                case ("#", "#"): return true
                case (" ", " "): return false
                default: throw Failure(description: "unexpected qrencode ASCII cell in: \(line)")
                }
            }
        }
        guard !rows.isEmpty, rows.allSatisfy({ $0.count == rows.count }) else {
            throw Failure(description: "qrencode ASCII output is not square: \(rows.count) rows")
        }
        return rows
    }
}
