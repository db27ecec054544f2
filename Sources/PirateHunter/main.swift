#if canImport(Glibc)
import Glibc
#endif

do {
    exit(try Commands.run(Array(CommandLine.arguments.dropFirst())).rawValue)
} catch {
    printError("pirate-hunter: \(error.message)")
    exit(error.code.rawValue)
}
