import Radio

/// Where the controller is, as the user writes it: `auto`, `hci0`, `serial:/dev/ttyAMA0[@115200]`,
/// `unix:/path`, or `simulator`.
enum TransportSpec: Equatable, CustomStringConvertible {
    case kernel(adapter: UInt16?)
    case serial(path: String, baud: Int)
    case unix(path: String)
    case simulator

    static let help = "auto, hciN, serial:/dev/ttyXXX[@BAUD], unix:/path (under 108 bytes) or simulator"

    init?(_ text: String) {
        switch text {
        case "auto", "":
            self = .kernel(adapter: nil)
        case "simulator":
            self = .simulator
        case _ where text.hasPrefix("hci"):
            guard let n = UInt16(text.dropFirst(3)) else { return nil }
            self = .kernel(adapter: n)
        case _ where text.hasPrefix("serial:"):
            let rest = text.dropFirst(7)
            let parts = rest.split(separator: "@", maxSplits: 1)
            guard let path = parts.first, path.hasPrefix("/") else { return nil }
            var baud = 115_200
            if parts.count == 2 {
                guard let b = Int(parts[1]) else { return nil }
                baud = b
            }
            self = .serial(path: String(path), baud: baud)
        case _ where text.hasPrefix("unix:"):
            let path = String(text.dropFirst(5))
            // sun_path holds 108 bytes with its terminating NUL.
            guard path.hasPrefix("/"), path.utf8.count < 108 else { return nil }
            self = .unix(path: path)
        default:
            return nil
        }
    }

    var description: String {
        switch self {
        case .kernel(nil): return "the first adapter"
        case let .kernel(n?): return "hci\(n)"
        case let .serial(path, baud): return "serial:\(path)@\(baud)"
        case let .unix(path): return "unix:\(path)"
        case .simulator: return "simulator"
        }
    }

    /// A fresh transport (the session calls this again to reconnect). The simulator is made
    /// by its command, in process (`ControllerSource.inProcess`).
    func open() throws(TransportError) -> HCITransport {
        switch self {
        case let .kernel(adapter): return try KernelHCISocket(adapter: adapter)
        case let .serial(path, baud): return try H4StreamTransport.serial(path: path, baud: baud)
        case let .unix(path): return try H4StreamTransport.unixSocket(path: path)
        case .simulator: throw .unsupported("the simulator transport is made by its command")
        }
    }
}

extension TransportError {
    var isPermission: Bool {
        if case .permission = self { return true }
        return false
    }
}
