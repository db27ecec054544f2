enum ReplayCommand {
    static func run(_ cursor: inout ArgumentCursor) throws(CLIError) -> ExitCode {
        throw CLIError(.unavailable, "replay is being built")
    }
}
