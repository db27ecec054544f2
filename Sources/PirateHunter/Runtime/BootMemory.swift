#if canImport(Glibc)
import Glibc
#endif

/// What this boot has already been told: a marker file per cause in the service's runtime
/// directory (`RUNTIME_DIRECTORY`, which systemd keeps across restarts with
/// RuntimeDirectoryPreserve and which a reboot empties), or in the user's private
/// `XDG_RUNTIME_DIR`. Without either, everything is told (a person at a terminal).
enum BootMemory {
    /// True the first time `cause` is asked about since boot; false after that.
    static func firstTime(_ cause: String, environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }) -> Bool {
        let name: String
        if let directory = environment("RUNTIME_DIRECTORY")?.split(separator: ":").first.map(String.init), directory.hasPrefix("/") {
            name = directory + "/said-" + fingerprint(cause)
        } else if let directory = environment("XDG_RUNTIME_DIR"), directory.hasPrefix("/") {
            name = directory + "/pirate-hunter-said-" + fingerprint(cause)
        } else {
            return true
        }
        // O_EXCL: the first one to create it is the first to tell; O_NOFOLLOW: never through a link.
        let fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd >= 0 {
            close(fd)
            return true
        }
        return errno != EEXIST
    }

    /// FNV-1a, 64 bits, in hex: a file name for any cause text.
    static func fingerprint(_ text: String) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
