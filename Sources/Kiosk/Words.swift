import Ranging

/// The words the screen and the log both use, each from one field of the state, so the two
/// never disagree (and neither says what the state does not).
enum Words {
    /// "close" for near, ...: from the committed class only.
    static func proximity(_ p: Proximity) -> String {
        switch p {
        case .immediate: return "right here!"
        case .near: return "close"
        case .far: return "far away"
        case .unknown: return "in the fog"
        }
    }

    /// "warmer"/"colder": from the trend only.
    static func trend(_ t: Trend) -> String {
        switch t {
        case .warmer: return "warmer"
        case .colder: return "colder"
        }
    }

    /// The big words about the nearest hunter, two lines: who is near, and how it goes.
    static func headline(_ nearest: KioskState.Hunter?) -> (String, String) {
        guard let h = nearest else { return ("No hunters near yet.", "Come and find me!") }
        let who = "Hunter \(h.id)"
        if h.foundAndNear { return ("\(who) found it!", "Well done, matey!") }
        let first: String
        switch h.proximity {
        case .immediate: first = "\(who) is right here!"
        case .near: first = "\(who) is close!"
        case .far: first = "\(who) is far away."
        case .unknown: first = "I hear a hunter..."
        }
        let second: String
        switch h.trend {
        case .warmer: second = "Getting warmer!"
        case .colder: second = "Getting colder..."
        case nil: second = h.proximity == .unknown ? "Where are you?" : ""
        }
        return (first, second)
    }

    /// The trail's progress: "Find the treasure!" for one chest, "1 of 3 treasures found" on a trail.
    static func progress(_ trail: KioskState.Trail) -> (icons: String, text: String) {
        let t = trail.normalized
        let icons = t.count <= 12 ? String(repeating: "■", count: t.found) + String(repeating: "□", count: t.count - t.found) : ""
        if t.count == 1 { return (icons, t.found == 1 ? "The treasure is found!" : "Find the treasure!") }
        if t.found == t.count { return (icons, "All \(t.count) treasures found!") }
        return (icons, "\(t.found) of \(t.count) treasures found")
    }

    /// "2:13" (minutes and seconds), "1:02:03" past the hour; nil for nonsense.
    static func duration(_ seconds: Double?) -> String? {
        guard let s = seconds, s.isFinite, s >= 0, s < 1e7 else { return nil }
        let total = Int(s.rounded(.down))
        let h = total / 3600, m = (total / 60) % 60, sec = total % 60
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return h > 0 ? "\(h):\(two(m)):\(two(sec))" : "\(m):\(two(sec))"
    }

    /// "5 s ago", "3 min ago"; nil under 2 s or for nonsense.
    static func ago(_ age: Double) -> String? {
        guard age.isFinite, age >= 2, age < 1e9 else { return nil }
        return age < 120 ? "\(Int(age)) s ago" : "\(Int(age / 60)) min ago"
    }
}
