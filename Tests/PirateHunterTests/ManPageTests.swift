import Foundation
import Testing
import TestSupport

@testable import PirateHunter

/// pirate-hunter(1) comes from the same table as --help: every command and every flag is in
/// it, and groff reads it without a warning.
@Suite struct ManPageTests {
    @Test func everyCommandAndFlagIsInTheManPage() async throws {
        let result = try await PirateHunterBinary.run(["help", "--man"])
        #expect(result.status == 0, "\(result.stderr)")
        let page = result.stdout
        #expect(page.hasPrefix(".TH PIRATE-HUNTER 1 \"\" \"pirate-hunter \(Version.current)\""))
        for command in Commands.all {
            #expect(page.contains("\n.B \(Commands.roff(command.name))"), "\(command.name)")
            for flag in command.flags {
                #expect(page.contains("\\fB\(Commands.roff(flag.name))\\fR"), "\(command.name) \(flag.name)")
            }
        }
        #expect(Commands.roff(".x-y\\z") == "\\&.x\\-y\\ez")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/groff")))
    func groffReadsItWithoutWarnings() async throws {
        let page = FileManager.default.temporaryDirectory.appendingPathComponent("pirate-hunter-\(UUID().uuidString).1").path
        defer { try? FileManager.default.removeItem(atPath: page) }
        let result = try await PirateHunterBinary.run(["help", "--man"])
        try Data(result.stdout.utf8).write(to: URL(fileURLWithPath: page))
        let groff = try await Program.run("/usr/bin/groff", ["-man", "-Tutf8", "-ww", "-z", page])
        #expect(groff.status == 0)
        #expect(groff.stderr.isEmpty, "\(groff.stderr)")
    }
}
