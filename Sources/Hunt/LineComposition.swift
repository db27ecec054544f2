extension LineDetail {
    /// The words of a trail line, given the pack's line for `event` (`template`, with its
    /// `{placeholders}`): the parent's own words for a hint or a found line when the step has
    /// them; for a clue, the pack's lead-in filled in, then the parent's clue; for the other
    /// composed events, the pack's line filled in. nil: no words of the trail, the pack's
    /// pre-rendered line says it as it is. The pack's line is asked for only when it is used
    /// (a pack picks one of its lines at random each time).
    public func text(of event: LineEvent, template: @autoclosure () -> String) -> String? {
        switch event {
        case .treasureFound, .hint:
            if let text { return text }
        case .clue:
            return fill(template()) + (text.map { " " + $0 } ?? "")
        default:
            break
        }
        return event.isComposed ? fill(template()) : nil
    }
}
