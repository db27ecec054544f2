import Bluetooth
import Radio

/// The tests listen to one kind of session event at a time: each setter puts its handler in
/// front of the session's one handler (later setters for the same kind win).
extension ControllerSession {
    private func listen(_ take: @escaping (Event) -> Bool) {
        let previous = onEvent
        onEvent = { event in if !take(event) { previous(event) } }
    }

    var onSighting: (BeaconSighting) -> Void {
        get { { _ in } }
        set { listen { if case let .sighting(s) = $0 { newValue(s); return true } else { return false } } }
    }

    var onReport: (AdvertisingReport, Double) -> Void {
        get { { _, _ in } }
        set { listen { if case let .report(r, t) = $0 { newValue(r, t); return true } else { return false } } }
    }

    var onStateChange: (ControllerState) -> Void {
        get { { _ in } }
        set { listen { if case let .state(s) = $0 { newValue(s); return true } else { return false } } }
    }

    var onAdvertisingRefused: (CommandFailure) -> Void {
        get { { _ in } }
        set { listen { if case let .advertisingRefused(f) = $0 { newValue(f); return true } else { return false } } }
    }

    var onNotice: (String) -> Void {
        get { { _ in } }
        set { listen { if case let .notice(n) = $0 { newValue(n); return true } else { return false } } }
    }
}
