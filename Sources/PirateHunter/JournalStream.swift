#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials

// MARK: - Is stderr the journal?

/// systemd sets `JOURNAL_STREAM=<device>:<inode>` for the stream it connected to the
/// journal; a child whose stderr was redirected elsewhere inherits the variable, so only a
/// stderr that still is that stream should get `<N>` priority prefixes (`Log.underSystemd`).
enum JournalStream {
    static func isStandardError(
        environment: [String: String] = ProcessInfo.processInfo.environment, descriptor: Int32 = 2
    ) -> Bool {
        guard let stream = environment["JOURNAL_STREAM"] else { return false }
        let parts = stream.split(separator: ":")
        var info = stat()
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]),
              fstat(descriptor, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// One event, one line: control characters (newlines included) become spaces.
    static func oneLine(_ text: String) -> String {
        var clean = ""
        clean.unicodeScalars.append(contentsOf: text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 })
        return clean
    }
}
