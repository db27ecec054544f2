public import Ranging

/// The treasure box's full-screen terminal display, drawn as whole frames (pure: the caller
/// writes them to the terminal, and passes the time for the twinkling sparkles and the
/// "seen 5 s ago" ages).
///
/// Escape sequences in a frame: it starts with cursor home (`ESC [ H`) and, only when `color`
/// is set, holds SGR colour sequences (`ESC [ ... m`). Nothing else: no clearing is needed
/// because every frame paints every cell (exactly `height` rows of exactly `width` columns,
/// joined by CR LF, none after the last row so the terminal never scrolls).
/// Write `enterFullScreen` once before the first frame and `leaveFullScreen` on the way out.
public enum KioskScreen {
    /// Cursor home: every frame starts with it.
    public static let home = "\u{1B}[H"
    /// Alternate screen, cursor hidden, screen cleared.
    public static let enterFullScreen = "\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J"
    /// Attributes reset, cursor shown, back to the normal screen.
    public static let leaveFullScreen = "\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l"

    /// Largest frame drawn; bigger terminals get this much (in the top-left corner).
    static let maxColumns = 1000, maxRows = 500

    /// The proximity of the nearest hunter (see `KioskState.huntersNearestFirst`), nil when
    /// nobody is near. The chest and the frame take its colour: blue for none or unknown,
    /// cyan far, orange near, red immediate (`Palette`).
    public static func accent(for state: KioskState) -> Proximity? {
        state.huntersNearestFirst.first?.proximity
    }

    /// One whole frame for a `width` x `height` terminal (see the type's notes on escapes).
    public static func render(_ state: KioskState, width: Int, height: Int, color: Bool, now: Double) -> String {
        var canvas = Canvas(width: min(width, maxColumns), height: min(height, maxRows))
        if let greeting = state.greeting {
            drawGreeting(greeting, state, on: &canvas, now: now)
        } else {
            drawBoard(state, on: &canvas, now: now)
        }
        return canvas.frame(color: color, accent: accent(for: state))
    }

    // MARK: - Layout

    struct Area {
        var x: Int, y: Int, width: Int, height: Int
    }

    static let title = " Pirate Treasure Box "
    static let gap = 3

    /// The rounded frame round the whole screen, the title in its top edge; returns the area inside.
    /// Small screens get no frame.
    static func drawFrame(on canvas: inout Canvas, force: Bool = false) -> Area? {
        let w = canvas.width, h = canvas.height
        guard force || (w >= 30 && h >= 10), w >= 2, h >= 2 else { return nil }
        canvas.put("╭" + String(repeating: "─", count: w - 2) + "╮", row: 0, column: 0, paint: .accent)
        for y in 1..<(h - 1) {
            canvas.put("│", row: y, column: 0, paint: .accent)
            canvas.put("│", row: y, column: w - 1, paint: .accent)
        }
        canvas.put("╰" + String(repeating: "─", count: w - 2) + "╯", row: h - 1, column: 0, paint: .accent)
        let label = "~" + title + "~"
        if Text.width(of: label) + 4 <= w {
            canvas.put(label, row: 0, column: (w - Text.width(of: label)) / 2, paint: .title)
        }
        return Area(x: 1, y: 1, width: w - 2, height: h - 2)
    }

    /// The normal screen: the chest, and beside or under it what the box is doing and who is near.
    static func drawBoard(_ state: KioskState, on canvas: inout Canvas, now: Double) {
        let area = drawFrame(on: &canvas) ?? Area(x: 0, y: 0, width: canvas.width, height: canvas.height)
        let hunters = state.huntersNearestFirst
        let minRows = 6 + (hunters.isEmpty ? 0 : 1)
        // Beside the chest, the status, the UUID and the ids must fit uncut.
        let natural = infoLines(state, hunters: hunters, width: Int.max, rows: 3, now: now)
        let minInfoWidth = max(32, natural.map(\.columns).max() ?? 0)

        for picture in Picture.bySize {
            let room = area.width - picture.width - gap - 1  // one column of air before the frame
            guard room >= minInfoWidth, area.height >= picture.height, area.height >= minRows else { continue }
            let info = infoLines(state, hunters: hunters, width: room, rows: area.height, now: now)
            let infoWidth = min(room, info.map(\.columns).max() ?? 0)
            let blockHeight = max(picture.height, info.count)
            let x = area.x + (area.width - picture.width - gap - infoWidth) / 2
            let y = area.y + (area.height - blockHeight) / 2
            picture.draw(on: &canvas, row: y + (blockHeight - picture.height) / 2, column: x, now: now)
            drawLines(info, on: &canvas, row: y + (blockHeight - info.count) / 2, column: x + picture.width + gap,
                limit: x + picture.width + gap + infoWidth)
            return
        }
        for picture in Picture.bySize {
            let rows = area.height - picture.height - 1
            guard area.width >= picture.width, rows >= minRows else { continue }
            let info = infoLines(state, hunters: hunters, width: area.width, rows: rows, now: now)
            let infoWidth = min(area.width, info.map(\.columns).max() ?? 0)
            let y = area.y + (area.height - picture.height - 1 - info.count) / 2
            picture.draw(on: &canvas, row: y, column: area.x + (area.width - picture.width) / 2, now: now)
            let x = area.x + (area.width - infoWidth) / 2
            drawLines(info, on: &canvas, row: y + picture.height + 1, column: x, limit: x + infoWidth)
            return
        }
        let info = infoLines(state, hunters: hunters, width: area.width, rows: area.height, now: now)
        let infoWidth = min(area.width, info.map(\.columns).max() ?? 0)
        let x = area.x + (area.width - infoWidth) / 2
        drawLines(info, on: &canvas, row: area.y + max(0, (area.height - info.count) / 2), column: x, limit: x + infoWidth)
    }

    /// The greeting: "Ahoy hunter 7!" and the reward's QR code, whole or not at all.
    static func drawGreeting(_ greeting: KioskState.Greeting, _ state: KioskState, on canvas: inout Canvas, now: Double) {
        let qr = greeting.qrLines.map(Text.clean)
        let qrWidth = qr.map { Text.width(of: $0) }.max() ?? 0
        let ahoy = [Span("Ahoy hunter \(greeting.hunterID)!", .greet)]
        let reward = state.reward.map { [Span(Text.clean($0), .gold)] }

        // With the frame if the code fits inside it, else on the bare screen.
        var attempts: [Bool] = [true, false]
        if canvas.width < 30 || canvas.height < 10 { attempts = [false] }
        for framed in attempts {
            let area = framed
                ? Area(x: 1, y: 1, width: canvas.width - 2, height: canvas.height - 2)
                : Area(x: 0, y: 0, width: canvas.width, height: canvas.height)
            guard qrWidth <= area.width, qr.count + 1 <= area.height else { continue }
            if framed { _ = drawFrame(on: &canvas, force: true) }

            // The column: the greeting and the code, then extras while there is room:
            // what the reward is, the big AHOY!, some air.
            var top: [[Span]] = [ahoy]
            var bottom: [[Span]] = []
            var spare = area.height - qr.count - 1
            if spare >= 1 {
                top.append([Span("You found the treasure! Scan your reward:", .gold)])
                spare -= 1
            }
            if let reward, spare >= 1 {
                bottom = spare >= 2 ? [[], reward] : [reward]
                spare -= bottom.count
            }
            if spare >= 4, area.width >= Banner.width {
                top = Banner.ahoy.map { [Span($0, .greet)] } + [[]] + top
                spare -= 4
            }
            if spare >= 1 {
                top.append([])
                spare -= 1
            }

            let columnWidth = min(area.width, max(qrWidth, (top + bottom).map(\.columns).max() ?? 0))
            var x = area.x + (area.width - columnWidth) / 2
            // The chest beside the code when there is room for both.
            if let picture = Picture.bySize.first(where: {
                $0.width + gap + columnWidth <= area.width && $0.height <= area.height
            }) {
                let blockX = area.x + (area.width - picture.width - gap - columnWidth) / 2
                picture.draw(on: &canvas, row: area.y + (area.height - picture.height) / 2, column: blockX, now: now)
                x = blockX + picture.width + gap
            }
            let total = top.count + qr.count + bottom.count
            var y = area.y + (area.height - total) / 2
            for line in top {
                drawCentered(line, on: &canvas, row: y, column: x, width: columnWidth)
                y += 1
            }
            let qrX = x + (columnWidth - qrWidth) / 2
            for line in qr {
                canvas.put(line, row: y, column: qrX, paint: .plain)
                y += 1
            }
            for line in bottom {
                drawCentered(line, on: &canvas, row: y, column: x, width: columnWidth)
                y += 1
            }
            return
        }

        // The code does not fit: say so rather than show a cut one nobody can scan.
        let area = drawFrame(on: &canvas) ?? Area(x: 0, y: 0, width: canvas.width, height: canvas.height)
        let notice = "The reward's QR code does not fit: it needs \(qrWidth)x\(qr.count + 1), "
            + "the screen is \(canvas.width)x\(canvas.height). Try a bigger window or a smaller font."
        var lines: [[Span]] = [ahoy] + Text.wrap(notice, area.width).map { [Span($0, .warn)] }
        if let reward = state.reward {
            lines += [[]] + Text.wrap("reward: " + Text.clean(reward), area.width).map { [Span($0, .gold)] }
        }
        let y = area.y + max(0, (area.height - lines.count) / 2)
        for (i, line) in lines.enumerated() where i < area.height {
            drawCentered(line, on: &canvas, row: y + i, column: area.x, width: area.width)
        }
    }

    static func drawLines(_ lines: [[Span]], on canvas: inout Canvas, row: Int, column: Int, limit: Int) {
        for (i, line) in lines.enumerated() {
            canvas.put(line, row: row + i, column: column, limit: limit)
        }
    }

    static func drawCentered(_ line: [Span], on canvas: inout Canvas, row: Int, column: Int, width: Int) {
        let w = min(width, line.columns)
        canvas.put(line, row: row, column: column + (width - w) / 2, limit: column + width)
    }

    // MARK: - Content

    /// The state as lines for a column `width` wide and at most `rows` tall: status, beacon
    /// ids, reward, then the hunters, nearest first ("and 3 more" when they do not all fit).
    static func infoLines(_ state: KioskState, hunters: [KioskState.Hunter], width: Int, rows: Int, now: Double) -> [[Span]] {
        var lines: [[Span]] = [statusLine(state.advertising), [Span(Text.clean(state.uuid))]]
        let ids = [Span("major ", .label), Span("\(state.major)"), Span("  minor ", .label), Span("\(state.minor)")]
        let radio = [Span("\(state.power) dBm", .plain), Span("  every ", .label), Span("\(state.intervalMilliseconds) ms")]
        if (ids + [Span("  ")] + radio).columns <= width {
            lines.append(ids + [Span("  ")] + radio)
        } else {
            lines += [ids, radio]
        }
        if let reward = state.reward {
            lines.append([Span("reward ", .label), Span(Text.clean(reward), .gold)])
        } else {
            lines.append([Span("reward ", .label), Span("(none yet)", .label)])
        }
        lines.append([])
        if hunters.isEmpty {
            lines.append([Span("No hunters near yet. Come and find me!", .title)])
            return Array(lines.prefix(max(0, rows)))
        }
        lines.append(headline(hunters[0]))
        let room = max(0, rows - lines.count)
        let shown = hunters.count <= room ? hunters.count : max(0, room - 1)
        for hunter in hunters.prefix(shown) {
            lines.append(hunterLine(hunter, width: width, now: now))
        }
        if shown < hunters.count, room > 0 {
            lines.append([Span("and \(hunters.count - shown) more", .label)])
        }
        return Array(lines.prefix(max(0, rows)))
    }

    /// What the nearest hunter is told, hot-and-cold style.
    static func headline(_ nearest: KioskState.Hunter) -> [Span] {
        let who = "Hunter \(nearest.id)"
        switch nearest.proximity {
        case .immediate: return [Span("\(who) is red hot! Right here!", .hunter(.immediate))]
        case .near: return [Span("\(who) is getting warmer!", .hunter(.near))]
        case .far: return [Span("\(who) is far away. Brrr, cold!", .hunter(.far))]
        case .unknown: return [Span("I hear a hunter... where are you?", .hunter(.unknown))]
        }
    }

    static func statusLine(_ advertising: KioskState.Advertising) -> [Span] {
        switch advertising {
        case .advertising(let adapter, let family):
            return [Span("((o)) ", .good), Span("advertising on \(Text.clean(adapter)) (\(Text.clean(family)))", .good)]
        case .waiting(let reason):
            return [Span("zzz ", .warn), Span("waiting: \(Text.clean(reason))", .warn)]
        }
    }

    /// "#7     ███░ close       ~1.2 m  found it!  seen 5 s ago": the "found it!" and the age
    /// only when they fit in `width`.
    static func hunterLine(_ hunter: KioskState.Hunter, width: Int, now: Double) -> [Span] {
        let p = hunter.proximity
        var spans = [
            Span(pad("#\(hunter.id)", 7), .hunter(p)),
            Span(meter(p) + " ", .hunter(p)),
            Span(pad(word(p), 12), .hunter(p)),
            Span(pad(Text.distance(hunter.distance) ?? "", 8)),
        ]
        func add(_ span: Span) {
            if spans.columns + Text.width(of: span.text) <= width { spans.append(span) }
        }
        if hunter.greeted { add(Span("found it!  ", .gold)) }
        let age = now - hunter.lastSeen
        if age.isFinite, age >= 2, age < 1e9 {
            let text = age < 120 ? "\(Int(age)) s ago" : "\(Int(age / 60)) min ago"
            if spans.columns + 5 + text.count <= width { add(Span("seen " + text, .label)) } else { add(Span(text, .label)) }
        }
        return spans
    }

    static func meter(_ p: Proximity) -> String {
        switch p {
        case .immediate: return "████"
        case .near: return "███░"
        case .far: return "█░░░"
        case .unknown: return "░░░░"
        }
    }

    static func word(_ p: Proximity) -> String {
        switch p {
        case .immediate: return "right here!"
        case .near: return "close"
        case .far: return "far away"
        case .unknown: return "in the fog"
        }
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s + String(repeating: " ", count: max(0, width - Text.width(of: s)))
    }
}
