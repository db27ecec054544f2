import Foundation
import Testing

/// The pinned kiosk frames, one file each: `Fixtures/frames/<story>-<width>x<height>.txt` holds
/// the frame as `pinned(_:)` gives it, byte for byte, with no newline added at the end. The
/// tests read the copies in the test bundle (`Bundle.module`).
///
/// After a deliberate change to the screen, `PIN_FRAMES=1 swift test --filter KioskFrameTests`
/// writes each frame that differs (or has no file yet) to its file in the source tree and
/// fails, naming it: read the diff, then run the tests again without PIN_FRAMES (a build copies
/// the new files into the bundle; `--skip-build` would still read the old copies).
enum PinnedFrameFiles {
    static let folder = "Fixtures/frames"

    /// The file's name without `.txt`: "greeting, no reward" at 80x24 is `greeting-no-reward-80x24`.
    static func name(story: String, width: Int, height: Int) -> String {
        var slug = ""
        for c in story.lowercased().unicodeScalars {
            if ("a"..."z").contains(c) || ("0"..."9").contains(c) {
                slug.unicodeScalars.append(c)
            } else if !slug.isEmpty, !slug.hasSuffix("-") {
                slug += "-"
            }
        }
        while slug.hasSuffix("-") { slug.removeLast() }
        return "\(slug)-\(width)x\(height)"
    }

    /// Whether this run re-pins (`PIN_FRAMES=1`).
    static var repinning: Bool { ProcessInfo.processInfo.environment["PIN_FRAMES"] == "1" }

    /// The pinned bytes of `name`, nil when the bundle has no such file.
    static func expected(_ name: String) -> [UInt8]? {
        guard let url = Bundle.module.url(forResource: name, withExtension: "txt", subdirectory: folder),
            let data = try? Data(contentsOf: url)
        else { return nil }
        return [UInt8](data)
    }

    /// The names of every pinned file in the bundle.
    static func all() -> Set<String> {
        guard let directory = Bundle.module.url(forResource: folder, withExtension: nil),
            let files = try? FileManager.default.contentsOfDirectory(atPath: directory.path)
        else { return [] }
        return Set(files.filter { $0.hasSuffix(".txt") }.map { String($0.dropLast(4)) })
    }

    /// The file in the source tree (the one `PIN_FRAMES=1` writes).
    static func sourceFile(_ name: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent(folder).appendingPathComponent(name + ".txt")
    }

    /// Expects `frame` to be the pinned frame `name`, byte for byte. With `PIN_FRAMES=1` a
    /// differing frame is written to the source tree's file, and the test still fails.
    static func expect(_ frame: String, pinnedAs name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let actual = Array(frame.utf8)
        let pinned = expected(name)
        if actual == pinned { return }
        let was = pinned.map { String(decoding: $0, as: UTF8.self) } ?? "(no file \(folder)/\(name).txt)"
        guard repinning else {
            Issue.record(
                "\(name): the frame is not the pinned one (PIN_FRAMES=1 re-pins it, docs/kiosk.md):\n\(frame)\npinned:\n\(was)",
                sourceLocation: sourceLocation)
            return
        }
        let file = sourceFile(name)
        do {
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(actual).write(to: file, options: .atomic)
            Issue.record(
                "\(name): re-pinned (PIN_FRAMES=1) to \(file.path); read the diff, then run again without PIN_FRAMES:\n\(frame)",
                sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(name): could not re-pin \(file.path): \(error)", sourceLocation: sourceLocation)
        }
    }
}
