/// The trail as the parent edits it on the page: steps made from tags in view, with their
/// texts, and the hunt's order, mode and hunters. Read from the configuration, from a posted
/// form, written back as the configuration's `hunt` section (the file's validator judges
/// it: the page has no rules of its own).
public struct TrailDraft: Sendable, Equatable {
    public struct Step: Sendable, Equatable {
        public var region = ""
        public var clue = ""
        public var hint = ""
        public var found = ""
        public var reward = ""
        /// Kept as the file had them (the page does not edit them).
        public var clueWAV: String?
        public var box = false

        public init(region: String = "", clue: String = "") {
            self.region = region
            self.clue = clue
        }
    }

    public static let maximumSteps = 20

    public var steps: [Step] = []
    public var order = "in_order"
    public var mode = "solo"
    /// Other hunters' ids, comma separated ("2, 3"), or empty.
    public var hunters = ""
    /// What the file said of each tag's step that the page does not show (`box`, `clue_wav`),
    /// by the step's region: a step that takes that tag again, anywhere, has it again. Only
    /// the file fills it (its trail is bounded), and every draft made from this one keeps it.
    public struct Unshown: Sendable, Equatable {
        public var clueWAV: String?
        public var box: Bool
    }
    public private(set) var fromFile: [String: Unshown] = [:]

    public init() {}

    /// What a posted trail form says; unknown fields are ignored, at most 20 steps.
    public init(form: [String: String], keepingFrom previous: TrailDraft) {
        var count = 0
        while count < Self.maximumSteps, form["step-\(count)-region"] != nil { count += 1 }
        for n in 0..<count {
            var step = Step()
            step.region = Self.clean(form["step-\(n)-region"])
            step.clue = Self.clean(form["step-\(n)-clue"])
            step.hint = Self.clean(form["step-\(n)-hint"])
            step.found = Self.clean(form["step-\(n)-found"])
            step.reward = Self.clean(form["step-\(n)-reward"])
            // What the page does not show goes with the tag, wherever its step moved (a box
            // step whose tag was changed and chosen again, a step removed before it): carried
            // by the step's number alone, a box step lost `box` unsaid and was found by
            // presence again, which a copy of the box's beacon gives.
            if previous.steps.indices.contains(n), previous.steps[n].region == step.region {
                step.clueWAV = previous.steps[n].clueWAV
                step.box = previous.steps[n].box
            } else if let kept = previous.fromFile[step.region] {
                step.clueWAV = kept.clueWAV
                step.box = kept.box
            }
            if step.clueWAV != nil, !step.clue.isEmpty { step.clueWAV = nil }
            steps.append(step)
        }
        order = form["order"] == "any_order" ? "any_order" : "in_order"
        mode = form["mode"] == "race" ? "race" : "solo"
        hunters = Self.clean(form["hunters"])
        fromFile = previous.fromFile
    }

    /// Line ends as a phone sends them (CR LF) made plain, outer spaces gone.
    static func clean(_ text: String?) -> String {
        (text ?? "").replacingCRLF().trimmingSpaces()
    }

    /// The `hunt` keys this draft sets (the rest of the section is left as it was).
    public func huntSection(into hunt: JSONDocument) -> JSONDocument {
        var section = hunt.isObject ? hunt : .object([])
        let trail: [JSONDocument] = steps.map { step in
            var members: [(String, JSONDocument)] = [("region", .string(step.region))]
            if !step.clue.isEmpty { members.append(("clue", .string(step.clue))) } else if let wav = step.clueWAV { members.append(("clue_wav", .string(wav))) }
            if !step.hint.isEmpty { members.append(("hint", .string(step.hint))) }
            if !step.found.isEmpty { members.append(("found", .string(step.found))) }
            if !step.reward.isEmpty { members.append(("reward", .string(step.reward))) }
            if step.box { members.append(("box", .bool(true))) }
            return .object(members)
        }
        if trail.isEmpty { section.remove("trail") } else { section.set("trail", .array(trail)) }
        section.set("order", .string(order))
        section.set("mode", .string(mode))
        return section
    }

    /// The ids of `hunters` as the file's `game.hunters` (nil: none given; the text as it is
    /// when it is not a list of numbers, for the validator to name).
    public var huntersValue: JSONDocument? {
        let parts = hunters.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
        guard !parts.isEmpty else { return nil }
        let numbers = parts.compactMap { Int($0) }
        return numbers.count == parts.count ? .array(numbers.map { .number(Double($0)) }) : .string(hunters)
    }

    /// The draft of a configuration file's `hunt` and `game` sections.
    public init(configuration document: JSONDocument) {
        let hunt = document["hunt"]
        for item in hunt?["trail"]?.arrayValue ?? [] {
            var step = Step()
            step.region = item["region"]?.stringValue ?? ""
            step.clue = item["clue"]?.stringValue ?? ""
            step.hint = item["hint"]?.stringValue ?? ""
            step.found = item["found"]?.stringValue ?? ""
            step.reward = item["reward"]?.stringValue ?? ""
            step.clueWAV = item["clue_wav"]?.stringValue
            step.box = item["box"]?.boolValue ?? false
            steps.append(step)
            if step.box || step.clueWAV != nil, fromFile[step.region] == nil {
                fromFile[step.region] = Unshown(clueWAV: step.clueWAV, box: step.box)
            }
        }
        order = hunt?["order"]?.stringValue ?? "in_order"
        mode = hunt?["mode"]?.stringValue ?? "solo"
        // A number that is no whole hunter id (1e19, 2.5) is shown as written, for the
        // validator to name when saved: `Int(_:)` of it trapped, and `--wait-for-fix`, there
        // to let the page mend a bad file, restarted on that file for good.
        hunters = (document["game"]?["hunters"]?.arrayValue ?? []).compactMap(\.numberValue)
            .map { Int(exactly: $0).map(String.init) ?? "\($0)" }.joined(separator: ", ")
    }

    /// The whole file with this draft in it: `hunt` (trail, order, mode) and `game.hunters`.
    public func applied(to document: JSONDocument) -> JSONDocument {
        var file = document.isObject ? document : .object([])
        file.set("hunt", huntSection(into: file["hunt"] ?? .object([])))
        var game = file["game"] ?? .object([])
        if let hunters = huntersValue { game.set("hunters", hunters) } else { game.remove("hunters") }
        if game.objectCount == 0 { file.remove("game") } else { file.set("game", game) }
        return file
    }
}

extension String {
    public func replacingCRLF() -> String {
        var out = ""
        var previousCR = false
        for scalar in unicodeScalars {
            if scalar == "\r" {
                out += "\n"
                previousCR = true
                continue
            }
            if scalar == "\n", previousCR {
                previousCR = false
                continue
            }
            previousCR = false
            out.unicodeScalars.append(scalar)
        }
        return out
    }

    /// Without the spaces (and line ends) around it.
    public func trimmingSpaces() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
