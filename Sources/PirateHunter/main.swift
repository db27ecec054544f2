#if canImport(Glibc)
import Glibc
#endif

do {
    exit(try Commands.run(Array(CommandLine.arguments.dropFirst())).rawValue)
} catch {
    // One line, whatever the user or the radio put in it: controls escaped, a huge value cut.
    printError("pirate-hunter: " + CLIError.printable(error.message, limit: 400))
    exit(error.code.rawValue)
}
