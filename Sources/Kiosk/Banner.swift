/// "AHOY!" in big letters (half blocks, three rows), for the greeting when there is room.
enum Banner {
    static let ahoy = [
        "▄▀▀▄ █  █ ▄▀▀▄ █  █ █",
        "█▄▄█ █▄▄█ █  █ ▀▄▄▀ ▀",
        "█  █ █  █ ▀▄▄▀  ██  ▀",
    ]
    static let width = ahoy.map { Text.width(of: $0) }.max() ?? 0
}
