import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory of our own for one test, `/tmp/ph-<name>-<8 hex digits>` (mode 0700),
/// removed at the end, after unmounting the tmpfs the test mounted on it (if any).
public final class Scratch {
    public let path: String
    private var mounted = false

    public init(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        path = "/tmp/ph-\(name)-\(UUID().uuidString.prefix(8).lowercased())"
        try #require(mkdir(path, 0o700) == 0, "mkdir \(path): \(errno)", sourceLocation: sourceLocation)
    }

    /// The names in the directory (or in `sub`, a path below it starting with "/"), sorted.
    public func entries(_ sub: String = "") -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path + sub)) ?? []).sorted()
    }

    /// The hidden `.NAME.….tmp` files a staged write leaves while it is open.
    public func temporaries() -> [String] { entries().filter { $0.hasPrefix(".") && $0.hasSuffix(".tmp") } }

    /// Writes `text` to the file `name` in the directory; its path.
    public func write(_ name: String, _ text: String) throws -> String {
        let file = path + "/" + name
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// Mounts a tmpfs with `options` (e.g. "size=64k") on the directory; needs root. It is
    /// unmounted (lazily, MNT_DETACH) before the directory is removed.
    public func mountTmpfs(_ options: String, readOnly: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try #require(
            mount("tmpfs", path, "tmpfs", readOnly ? UInt(MS_RDONLY) : 0, options) == 0, "mount: \(errno)",
            sourceLocation: sourceLocation)
        mounted = true
    }

    deinit {
        if mounted { _ = umount2(path, 2) }  // MNT_DETACH
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// The file type bits (`S_IFREG`, `S_IFLNK`, …) of `path` itself (a link is not followed); nil
/// when there is nothing there.
public func fileKind(_ path: String) -> mode_t? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return info.st_mode & mode_t(S_IFMT)
}

/// The bytes of the file at `path`, nil when it cannot be read.
public func fileContents(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}
