import Foundation

/// The repository the tests were built from, found from this file's path (tests run from
/// anywhere, and the test bundle is not inside the repository).
public enum Repository {
    /// The repository's root folder, without a trailing "/".
    public static let path: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/TestSupport/Repository.swift
        return parts.joined(separator: "/")
    }()

    public static var url: URL { URL(fileURLWithPath: path, isDirectory: true) }

    /// The repository's voices/ (the pirate voice, its line packs and arrr.wav).
    public static var voicesDirectory: String { path + "/voices" }
}
