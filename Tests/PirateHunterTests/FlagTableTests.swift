import Hunt
import Ranging
import Testing

@testable import PirateHunter

/// A flag is declared, checked and applied in one place, its row of `Flags`: every flag of
/// every command parses there and reaches what the command reads of it.
@Suite struct FlagTableTests {
    /// A valid value for every placeholder of the table (a new one fails until it has one).
    static let samples: [String: String] = [
        "T": "simulator", "FILE": "/tmp/settings.json", "FILE.btsnoop": "/tmp/x.btsnoop", "S": "5",
        "UUID[:MAJOR[:MINOR]]": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1", "ALSA": "null", "DB": "-6", "LANG": "ja",
        "DIR": "/tmp/voices", "UUID": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "N": "7", "DBM": "-70", "MS": "200",
        "TEXT": "gold", "FILE.wav": "/tmp/x.wav", "EVENT": "startup",
    ]

    /// What a command can read of its flags besides `has`: the configuration they set (over
    /// the defaults here) and the commands' own values.
    struct Reached: Equatable {
        var configuration = HunterConfiguration()
        var configPath: String?
        var regions: [Region]
        var duration: Double?
        var line: LineEvent?
        var out: String?
        var rewardSVG: String?

        init(_ flags: ConfigurationFlags) {
            configuration.apply(flags)
            configPath = flags.configPath
            regions = flags.regions
            duration = flags.duration
            line = flags.line
            out = flags.out
            rewardSVG = flags.rewardSVG
        }
    }

    @Test(arguments: Commands.all.map(\.name))
    func everyFlagOfACommandParsesAndReachesWhatTheCommandReads(_ name: String) throws {
        let command = try #require(Commands.all.first { $0.name == name })
        let operands = command.minimumOperands > 0 ? ["x"] : []
        let nothing = Reached(try commandLineFlags(operands, for: command))
        #expect(nothing == Reached(ConfigurationFlags()))
        for flag in command.flags {
            let value = try flag.value.map { placeholder in try #require(Self.samples[placeholder], "no sample for \(placeholder)") }
            for spelling in flag.names {
                let flags = try commandLineFlags(operands + [spelling] + (value.map { [$0] } ?? []), for: command)
                #expect(flags.given == [flag.name], "\(name) \(spelling)")
                if flag.value != nil {
                    // A switch is read with `has`; a value must land somewhere.
                    let reaches = Reached(flags) != nothing
                    #expect(reaches, "\(name) \(spelling): declared in the table, but applies nothing")
                }
            }
        }
    }

    @Test func aSpellingIsOneFlagInACommandAndTheSameFlagInEvery() {
        var seen: [String: Flag] = [:]
        for command in Commands.all {
            let spellings = command.flags.flatMap(\.names) + Flags.help.names
            #expect(Set(spellings).count == spellings.count, "\(command.name) has a spelling twice")
            for flag in command.flags {
                for spelling in flag.names {
                    if let other = seen[spelling] {
                        #expect(other.names == flag.names && other.value == flag.value && other.help == flag.help,
                                "\(spelling) means two things")
                    }
                    seen[spelling] = flag
                }
            }
        }
    }
}
