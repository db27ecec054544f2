import FoundationEssentials
import Hunt
import Ranging

/// What a command line said, each value checked by its flag's `apply` (the table in
/// CommandTable is the only place that names a flag): the settings it puts over the
/// file, and the values the commands read themselves.
struct ConfigurationFlags: Sendable {
    /// The flags given (their first spelling), in order.
    private(set) var given: [String] = []
    /// `--config FILE`; nil: the command's default file.
    var configPath: String?
    /// `--region`, in order (`replay` ranges them without a file).
    var regions: [Region] = []
    /// What the flags set in the configuration, in the order given: put over the file by
    /// `HunterConfiguration.apply` (again after each SIGHUP re-read).
    fileprivate var settings: [@Sendable (inout HunterConfiguration) -> Void] = []

    // The commands' own values.
    var duration: Double?
    var line: LineEvent?
    var out: String?
    var rewardSVG: String?

    init() {}

    /// `flag` as given (`spelled`, with `value`; "" for a switch): checked and recorded.
    mutating func record(_ flag: Flag, spelled: String, value: String) throws(CLIError) {
        given.append(flag.name)
        try flag.apply(spelled, value, &self)
    }

    func has(_ flag: Flag) -> Bool { given.contains(flag.name) }

    /// A setting of the configuration, from a flag.
    mutating func set(_ setting: @escaping @Sendable (inout HunterConfiguration) -> Void) {
        settings.append(setting)
    }

    static func nonEmpty(_ flag: String, _ text: String) throws(CLIError) -> String {
        guard !text.isEmpty else { throw CLIError(.usage, "\(flag): needs a non-empty value") }
        return text
    }

    /// An integer setting of the file (`field`), given as a flag: out of range is a
    /// configuration error naming the field.
    static func field(_ flag: String, _ field: String, _ text: String, _ range: ClosedRange<Int>) throws(CLIError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw CLIError(.config, "\(flag) (\(field)): '\(text)' is out of range; allowed: \(Limits.text(range))")
        }
        return value
    }
}

extension HunterConfiguration {
    /// Flags over the file: only what was given on the command line changes.
    mutating func apply(_ flags: ConfigurationFlags) {
        for setting in flags.settings { setting(&self) }
    }
}
