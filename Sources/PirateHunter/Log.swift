#if canImport(Glibc)
import Glibc
#endif

/// Logs on stderr, one event a line. When stderr is the journal (JOURNAL_STREAM names it)
/// each line carries a journald priority prefix (<3> error, <4> warning, <6> info) so
/// `journalctl -p` works.
enum Log {
    static let underSystemd = JournalStream.isStandardError()

    static func error(_ message: String) { write(3, message) }
    static func warning(_ message: String) { write(4, message) }
    static func info(_ message: String) { write(6, message) }

    private static func write(_ priority: Int, _ message: String) {
        let line = CLIError.printable(JournalStream.oneLine(message), limit: 2000)
        printError(underSystemd ? "<\(priority)>\(line)" : "pirate-hunter: \(line)")
    }
}
