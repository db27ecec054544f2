import POSIX

#if canImport(Glibc)
import Glibc
#endif

/// sysexits(3) codes: what the appliance tells its caller and systemd.
enum ExitCode: Int32 {
    case ok = 0
    case usage = 64
    case dataError = 65
    case noInput = 66
    case unavailable = 69
    case software = 70
    /// An output file the user named cannot be created (no such directory, not a file).
    case cantCreate = 73
    case ioError = 74
    case noPermission = 77
    case config = 78
}

/// A failure the user can act on: one line, one exit code.
struct CLIError: Error {
    let code: ExitCode
    let message: String
    /// More problems found with the first (a configuration's validation reports them all),
    /// each its own line after `message`.
    var further: [String] = []
    init(_ code: ExitCode, _ message: String) {
        self.code = code
        self.message = message
    }

    /// This problem and each further one as its own error, with this one's code.
    var each: [CLIError] { [CLIError(code, message)] + further.map { CLIError(code, $0) } }

    /// User-given text safe to echo in a message: control characters (C0, DEL, C1) and
    /// bidirectional overrides escaped, at most `limit` characters.
    static func printable(_ text: String, limit: Int = 80) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit {
                out += "..."
                break
            }
            count += 1
            let v = scalar.value
            if v < 0x20 || (0x7F...0x9F).contains(v) || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v) {
                let hex = String(v, radix: 16, uppercase: true)
                out += "\\u{" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

/// Writes to stderr without buffering surprises.
func printError(_ line: String) {
    var text = line
    text.append("\n")
    text.withUTF8 { buffer in
        _ = write(2, buffer.baseAddress, buffer.count)
    }
}

/// Buffered stdout for line-oriented output (JSON lines, tables).
final class StandardOutput {
    private var buffer: [UInt8] = []
    /// Why stdout can no longer be written (EPIPE: the reader went away, as `| head` does);
    /// nil while it can. After a failure nothing more is written.
    private(set) var failure: Int32?
    /// Told once, at the first failure (the runtime stops the command then).
    var onFailure: (Int32) -> Void = { _ in }

    init() { buffer.reserveCapacity(1 << 16) }

    func line(_ text: String) {
        guard failure == nil else { return }
        buffer.append(contentsOf: text.utf8)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Text as it is, no newline (a kiosk frame must not scroll the screen).
    func text(_ text: String) {
        guard failure == nil else { return }
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        defer { buffer.removeAll(keepingCapacity: true) }
        guard failure == nil else { return }
        do {
            // A non-blocking stdout that is full is waited for (a reader that takes nothing
            // for 5 s is as good as gone: EAGAIN).
            try FileDescriptor.standardOutput.writeAll(buffer, timeoutMilliseconds: 5000)
        } catch {
            failure = error.errno
            onFailure(error.errno)
        }
    }

    /// Flushes, then throws (exit 74) when stdout could not take it all. A reader that went
    /// away (`| head`, EPIPE) is no fault, unless what was printed is all there is of it
    /// (`lost` says what is lost then).
    func finish(lost: String? = nil) throws(CLIError) {
        flush()
        guard let code = failure, code != EPIPE || lost != nil else { return }
        throw CLIError(.ioError, "standard output: \(String(cString: strerror(code)))" + (lost.map { ": " + $0 } ?? ""))
    }
}
