/// Plain log lines for when stdout is not a terminal (systemd's journal): what changed between
/// two states, one line each, no escape sequences (every string shown is cleaned of control
/// characters). Distances alone moving do not make lines; proximity, trend and standings changes
/// do, in the same words as the screen (no distance that contradicts the class, no trend the
/// state does not carry).
public enum KioskLog {
    public static func changes(from old: KioskState?, to new: KioskState) -> [String] {
        var lines: [String] = []
        if old?.advertising != new.advertising {
            switch new.advertising {
            case .advertising(let adapter, let family):
                lines.append("advertising on \(Text.clean(adapter)) (\(Text.clean(family)) commands)")
            case .waiting(let reason):
                lines.append("waiting: \(Text.clean(reason))")
            }
        }
        if old?.uuid != new.uuid || old?.major != new.major || old?.minor != new.minor || old?.power != new.power
            || old?.intervalMilliseconds != new.intervalMilliseconds
        {
            lines.append(
                "beacon \(Text.clean(new.uuid)) major \(new.major) minor \(new.minor), "
                    + "\(new.power) dBm at 1 m, every \(new.intervalMilliseconds) ms")
        }
        if old?.reward != new.reward {
            if let reward = new.reward {
                lines.append("reward: \(Text.clean(reward))")
            } else {
                lines.append("reward cleared")
            }
        }

        let before = Dictionary((old?.hunters ?? []).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let now = Dictionary(new.hunters.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        for hunter in new.huntersNearestFirst {
            // A hunter listed twice is logged once, as the nearest of its entries.
            guard lines.contains(where: { $0.hasPrefix("hunter \(hunter.id) ") }) == false else { continue }
            let was = before[hunter.id]
            // The same words as the screen: the class, the distance only when it agrees with
            // it, the trend only when the state has one.
            let trend = hunter.trend.map { "getting " + Words.trend($0) }
            if was?.proximity != hunter.proximity {
                let distance = Text.distance(new.shownDistance(hunter)).map { " (\($0))" } ?? ""
                lines.append("hunter \(hunter.id) \(hunter.proximity.rawValue)\(distance)" + (trend.map { ", " + $0 } ?? ""))
            } else if let trend, was?.trend != hunter.trend {
                lines.append("hunter \(hunter.id) \(trend)")
            }
        }
        for id in before.keys.sorted() where now[id] == nil {
            lines.append("hunter \(id) gone")
        }

        let trail = new.trail.normalized
        if let old, old.trail.normalized != trail, trail.count > 1 {
            lines.append("treasures found: \(trail.found) of \(trail.count)")
        }
        let finders = new.standingsInOrder
        let known = old?.standings ?? []
        for (place, finder) in finders.enumerated() where !known.contains(finder) {
            let took = Words.duration(finder.took).map { " after \($0)" } ?? ""
            lines.append("finder \(place + 1): hunter \(finder.hunter) found treasure \(finder.treasure)\(took)")
        }

        if let greeting = new.greeting, greeting.hunterID != old?.greeting?.hunterID || greeting.at != old?.greeting?.at {
            lines.append("greeted hunter \(greeting.hunterID)")
        }
        return lines
    }
}
