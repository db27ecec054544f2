#if canImport(Glibc)
import Glibc
#endif

/// Logs on stderr, one event a line. Under systemd (JOURNAL_STREAM set) each line carries a
/// journald priority prefix (<3> error, <4> warning, <6> info) so `journalctl -p` works.
enum Log {
    static let underSystemd = getenv("JOURNAL_STREAM") != nil

    static func error(_ message: String) { write(3, message) }
    static func warning(_ message: String) { write(4, message) }
    static func info(_ message: String) { write(6, message) }

    private static func write(_ priority: Int, _ message: String) {
        printError(underSystemd ? "<\(priority)>\(message)" : "pirate-hunter: \(message)")
    }
}
