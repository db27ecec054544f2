/// A trail line in its two parts: the pack's words (a lead-in or a whole line, its
/// `{placeholders}` filled in), spoken in the pack's own voice, and the parent's words (a
/// clue, a hint, a found line), spoken as written with a voice for the language they are
/// written in.
public struct ComposedLine: Sendable, Equatable {
    /// The pack's line, filled in (nil: the parent's words stand alone).
    public var pack: String?
    /// What the parent wrote (nil: none).
    public var parent: String?

    public init(pack: String? = nil, parent: String? = nil) {
        self.pack = pack
        self.parent = parent
    }

    /// The whole line as printed and logged: the pack's part, then the parent's.
    public var text: String { [pack, parent].compactMap { $0 }.joined(separator: " ") }
}

extension LineDetail {
    /// The words of a trail line, given the pack's line for `event` (`template`, with its
    /// `{placeholders}`): the parent's own words for a hint or a found line when the step has
    /// them; for a clue, the pack's lead-in filled in, then the parent's clue; for the other
    /// composed events, the pack's line filled in. nil: no words of the trail, the pack's
    /// pre-rendered line says it as it is. The pack's line is asked for only when it is used
    /// (a pack picks one of its lines at random each time).
    public func parts(of event: LineEvent, template: @autoclosure () -> String) -> ComposedLine? {
        switch event {
        case .treasureFound, .hint:
            if let text { return ComposedLine(parent: text) }
        case .clue:
            return ComposedLine(pack: fill(template()), parent: text)
        default:
            break
        }
        return event.isComposed ? ComposedLine(pack: fill(template())) : nil
    }

    /// `parts(of:template:)` as one text.
    public func text(of event: LineEvent, template: @autoclosure () -> String) -> String? {
        parts(of: event, template: template())?.text
    }
}
