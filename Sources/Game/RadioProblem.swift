import Hunt

/// Why the radio cannot be used, as a grown-up must hear it: each has its plain-words line
/// (`notice-…` in every line pack), said at start instead of the child's "spyglass" line.
public enum RadioProblem: Sendable, Equatable, CaseIterable {
    /// rfkill, or an adapter that is down and cannot be brought up.
    case bluetoothOff
    /// No adapter (none plugged in, or the one named is not there).
    case noAdapter
    /// A capability or a file permission is missing.
    case noPermission
    /// The kernel has no Bluetooth sockets at all.
    case noBluetooth

    public var notice: LineEvent {
        switch self {
        case .bluetoothOff: .noticeBluetoothOff
        case .noAdapter: .noticeNoAdapter
        case .noPermission: .noticeNoPermission
        case .noBluetooth: .noticeNoBluetooth
        }
    }
}
