import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child's output written to a file, read as it grows (a pipe read to its end would wait
/// for any other child holding a copy).
public struct OutputFile: Sendable {
    public let path: String
    public init(_ path: String) { self.path = path }

    /// What is there now ("" before the child wrote anything).
    public var text: String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    /// Waits (every 50 ms, at most `seconds`) until the text holds `words`; false if it never did.
    public func waitFor(_ words: String, seconds: Double) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if text.contains(words) { return true }
            usleep(50_000)
        }
        return false
    }
}
