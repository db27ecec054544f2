#if canImport(Glibc)
import Glibc
#endif

let usage = """
    usage: pirate-hunter COMMAND [OPTIONS]
      replay FILE [--json]          decode a btsnoop capture: every beacon sighting
      say TEXT|--line EVENT [--sound] [--device NAME] [--out FILE.wav] [--voice-dir DIR] [--lang en-pirate|ja]
                                    speak a text or a line of a hunt event with the pirate voice
      hunt [--config FILE] [--region UUID[:MAJOR[:MINOR]]] [--hci T] [--device NAME] [--json] [--quiet]
           [--hunter-id N] [--reward-svg FILE] ...
                                    the appliance: range the treasure, speak the hunt, read out its reward
      treasure [--config FILE] [--hci T] [--uuid U] [--major N] [--minor N] [--power DBM] [--interval MS]
           [--reward TEXT] [--json] [--no-kiosk] [--duration S]
                                    the treasure box: advertise the treasure, greet the hunters who find it
      scan [--hci T] [--active] [--json] [--duration S] [--record FILE.btsnoop]
                                    every beacon in view, live (the tool to place the treasure)
      demo [--device NAME] [--json] a simulated hunt through the real pipeline, about a minute
      help                          this text

    configuration flags (hunt, demo, treasure; they override /etc/pirate-hunter/hunter.json, or treasure.json
    for the treasure box; see docs/configuration.md):
    \(ConfigurationFlags.usage)
    """

func runCommand(_ arguments: [String]) throws(CLIError) -> ExitCode {
    var cursor = ArgumentCursor(arguments)
    guard let command = cursor.next() else {
        throw CLIError(.usage, "no command given (try 'pirate-hunter help')")
    }
    switch command {
    case "replay":
        return try ReplayCommand.run(&cursor)
    case "say":
        return try SayCommand.run(&cursor)
    case "hunt":
        return try HuntCommand.run(&cursor)
    case "scan":
        return try ScanCommand.run(&cursor)
    case "demo":
        return try HuntCommand.demo(&cursor)
    case "treasure":
        return try TreasureCommand.run(&cursor)
    case "help", "--help", "-h":
        print(usage)
        return .ok
    default:
        throw CLIError(.usage, "unknown command '\(command)' (try 'pirate-hunter help')")
    }
}

do {
    exit(try runCommand(Array(CommandLine.arguments.dropFirst())).rawValue)
} catch {
    printError("pirate-hunter: \(error.message)")
    exit(error.code.rawValue)
}
