#if canImport(Glibc)
import Glibc
#endif

// A reader that goes away (`hunt --json | head -1`) is EPIPE on the next write, handled
// where it happens (the command stops cleanly), not a signal that kills the appliance with
// scanning left on.
signal(SIGPIPE, SIG_IGN)

do {
    exit(try Commands.run(Array(CommandLine.arguments.dropFirst())).rawValue)
} catch {
    // One line, whatever the user or the radio put in it: controls escaped, a huge value cut.
    for message in [error.message] + error.further {
        printError("pirate-hunter: " + CLIError.printable(message, limit: 400))
    }
    exit(error.code.rawValue)
}
