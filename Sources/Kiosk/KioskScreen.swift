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

    struct Area: Equatable {
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

    /// Where everything goes on a `width` x `height` screen: computed from the size alone,
    /// so nothing moves when the words change.
    struct Layout: Equatable {
        var framed: Bool
        /// The chest and its top-left corner, nil when there is no room for one.
        var picture: Int?
        var pictureRow = 0, pictureColumn = 0
        /// The column of words (beside or under the chest).
        var text: Area
        /// The chest is beside the words (else above them).
        var beside: Bool
        /// The technical footer's rows at the bottom, nil when the screen is too small.
        var footer: Area?
        /// The whole drawing area (inside the frame).
        var area: Area
    }

    /// Rows the words need at least: the two headline lines, the trail's progress, one more.
    static let minTextRows = 4
    /// Columns the words need at least beside the chest, and at most.
    static let minTextColumns = 36, maxTextColumns = 64
    /// The block of chest and words is at most this tall (the rest is air).
    static let maxBlockRows = 24

    static func layout(width: Int, height: Int) -> Layout {
        let framed = width >= 30 && height >= 10
        let area = framed ? Area(x: 1, y: 1, width: width - 2, height: height - 2) : Area(x: 0, y: 0, width: max(0, width), height: max(0, height))
        for (index, picture) in Picture.bySize.enumerated() {
            if area.width >= picture.width + gap + minTextColumns + 2, area.height >= max(picture.height, minTextRows) {
                let footerRows = area.height >= picture.height + 3 ? 2 : area.height >= picture.height + 2 ? 1 : 0
                let body = area.height - footerRows - (footerRows > 0 ? 1 : 0)
                let textWidth = min(maxTextColumns, area.width - picture.width - gap - 2)
                let blockHeight = min(body, max(picture.height, maxBlockRows))
                let x = area.x + (area.width - picture.width - gap - textWidth) / 2
                let y = area.y + (body - blockHeight) / 2
                return Layout(
                    framed: framed, picture: index, pictureRow: y, pictureColumn: x,
                    text: Area(x: x + picture.width + gap, y: y, width: textWidth, height: blockHeight), beside: true,
                    footer: footer(area, footerRows), area: area)
            }
        }
        // Under it only when no chest fits beside the words (under, they get few rows).
        for (index, picture) in Picture.bySize.enumerated() {
            if area.width >= picture.width, area.height >= picture.height + minTextRows {
                let spare = area.height - picture.height - minTextRows
                let footerRows = spare >= 6 ? 2 : spare >= 3 ? 1 : 0
                let body = area.height - footerRows - (footerRows > 0 ? 1 : 0)
                let spacer = body >= picture.height + minTextRows + 1 ? 1 : 0
                let textRows = min(body - picture.height - spacer, maxBlockRows)
                let blockHeight = picture.height + spacer + textRows
                let y = area.y + (body - blockHeight) / 2
                let textWidth = min(maxTextColumns, max(0, area.width - 2))
                return Layout(
                    framed: framed, picture: index, pictureRow: y, pictureColumn: area.x + (area.width - picture.width) / 2,
                    text: Area(x: area.x + (area.width - textWidth) / 2, y: y + picture.height + spacer, width: textWidth, height: textRows),
                    beside: false, footer: footer(area, footerRows), area: area)
            }
        }
        let footerRows = area.height >= minTextRows + 6 ? 2 : area.height >= minTextRows + 3 ? 1 : 0
        let body = area.height - footerRows - (footerRows > 0 ? 1 : 0)
        let textWidth = min(maxTextColumns, area.width > 2 ? area.width - 2 : area.width)
        let textRows = min(body, maxBlockRows)
        return Layout(
            framed: framed, picture: nil,
            text: Area(x: area.x + (area.width - textWidth) / 2, y: area.y + (body - textRows) / 2, width: textWidth, height: textRows),
            beside: false, footer: footer(area, footerRows), area: area)
    }

    static func footer(_ area: Area, _ rows: Int) -> Area? {
        guard rows > 0 else { return nil }
        return Area(x: area.x + 1, y: area.y + area.height - rows, width: max(0, area.width - 2), height: rows)
    }

    /// The normal screen: the chest, the big words beside or under it (who is near, how it
    /// goes, the trail), the hunters and the finders, and the technical lines in a footer.
    static func drawBoard(_ state: KioskState, on canvas: inout Canvas, now: Double) {
        let layout = layout(width: canvas.width, height: canvas.height)
        if layout.framed { _ = drawFrame(on: &canvas) }
        if let index = layout.picture {
            Picture.bySize[index].draw(on: &canvas, row: layout.pictureRow, column: layout.pictureColumn, now: now)
        }
        let text = layout.text
        let lines = wordLines(state, width: text.width, rows: text.height, now: now)
        drawLines(lines, on: &canvas, row: text.y, column: text.x, limit: text.x + text.width)
        if let footer = layout.footer {
            let lines = footerLines(state, width: footer.width, rows: footer.height)
            drawLines(lines, on: &canvas, row: footer.y, column: footer.x, limit: footer.x + footer.width)
        }
    }

    /// The greeting: "Ahoy hunter 7!" and the reward's QR code, whole or not at all.
    static func drawGreeting(_ greeting: KioskState.Greeting, _ state: KioskState, on canvas: inout Canvas, now: Double) {
        let qr = greeting.qrLines.map(Text.clean)
        let qrWidth = qr.map { Text.width(of: $0) }.max() ?? 0
        let ahoy = [Span("Ahoy hunter \(greeting.hunterID)!", .greet)]
        let reward = state.reward.map { [Span(Text.clean($0), .gold)] }

        // Beside the chest where the board has it (so the chest stays put), else with the
        // frame if the code fits inside it, else on the bare screen.
        let board = layout(width: canvas.width, height: canvas.height)
        var attempts: [(framed: Bool, chest: Bool)] = [(true, true), (true, false), (false, false)]
        if canvas.width < 30 || canvas.height < 10 { attempts = [(false, false)] }
        if !(board.beside && board.picture != nil && board.framed) { attempts.removeAll { $0.chest } }
        for (framed, besideChest) in attempts {
            let area = besideChest
                ? Area(x: board.text.x, y: board.area.y, width: board.area.x + board.area.width - board.text.x - 1, height: board.area.height)
                : framed
                ? Area(x: 1, y: 1, width: canvas.width - 2, height: canvas.height - 2)
                : Area(x: 0, y: 0, width: canvas.width, height: canvas.height)
            guard qrWidth <= area.width, qr.count + 1 <= area.height else { continue }
            if framed { _ = drawFrame(on: &canvas, force: true) }
            if besideChest, let index = board.picture {
                Picture.bySize[index].draw(on: &canvas, row: board.pictureRow, column: board.pictureColumn, now: now)
            }

            // The column: the greeting and the code, then extras while there is room:
            // what the reward is, the big AHOY!, some air.
            var top: [[Span]] = [ahoy]
            var bottom: [[Span]] = []
            var spare = area.height - qr.count - 1
            if spare >= 1 {
                // "Scan your reward" only over a code of a reward.
                let scan = state.reward != nil && !qr.isEmpty
                top.append([Span(scan ? "You found the treasure! Scan your reward:" : "You found the treasure!", .gold)])
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
            if besideChest {
                x = area.x + (area.width - columnWidth) / 2
            } else if let picture = Picture.bySize.first(where: {
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

    /// The column of words, `rows` tall, in fixed slots: the headline (two lines), the
    /// trail's progress, then the hunters nearest first and, below them at fixed rows, the
    /// finders.
    static func wordLines(_ state: KioskState, width: Int, rows: Int, now: Double) -> [[Span]] {
        let hunters = state.huntersNearestFirst
        let nearest = hunters.first
        let (first, second) = Words.headline(nearest)
        let paint: Paint = nearest.map { .hunter($0.proximity) } ?? .title
        var lines: [[Span]] = [[Span(first, paint)], second.isEmpty ? [] : [Span(second, paint)]]
        let (icons, progress) = Words.progress(state.trail)
        lines.append(icons.isEmpty ? [Span(progress, .gold)] : [Span(icons + " ", .gold), Span(progress, .gold)])
        guard rows > 3 else { return Array(lines.prefix(max(0, rows))) }

        // The rest, split by the size alone: hunters, then the finders.
        let blank = rows >= 6 ? 1 : 0
        let rest = rows - 3 - blank
        let finderRows = rest >= 6 ? max(3, rest / 3) : rest >= 3 ? 1 : 0
        let hunterRows = rest - finderRows - (finderRows >= 3 ? 1 : 0)
        if blank > 0 { lines.append([]) }

        let finders = state.standingsInOrder
        var list: [[Span]] = []
        // A single row left (small screens): the first find is bigger news than a count.
        if hunterRows == 1, finderRows == 0, let winner = finders.first, hunters.count > 1 {
            let took = Words.duration(winner.took).map { " in " + $0 } ?? ""
            let what = state.trail.normalized.count > 1 ? "treasure \(winner.treasure)" : "it"
            lines.append([Span("Hunter \(winner.hunter) found \(what)\(took)!", .gold)])
            return Array(lines.prefix(max(0, rows)))
        }
        let shown = hunters.count <= hunterRows ? hunters.count : max(0, hunterRows - 1)
        for hunter in hunters.prefix(shown) {
            list.append(hunterLine(hunter, state, width: width, now: now))
        }
        if shown < hunters.count, hunterRows > 0 {
            list.append([Span(shown == 0 ? "\(hunters.count) hunters" : "and \(hunters.count - shown) more", .label)])
        }
        while list.count < hunterRows { list.append([]) }
        lines += list

        if finderRows >= 3 {
            lines.append([])
            if !finders.isEmpty {
                // One chest: who found it; a trail: every find, whichever chest.
                let header = state.trail.normalized.count == 1 ? "Treasure found by:" : "Finders:"
                lines.append([Span(header, .title)])
                let room = finderRows - 1
                let shownFinders = finders.count <= room ? finders.count : room - 1
                for (place, finder) in finders.prefix(shownFinders).enumerated() {
                    lines.append(finderLine(place + 1, finder, state, width: width, now: now))
                }
                if shownFinders < finders.count { lines.append([Span("and \(finders.count - shownFinders) more", .label)]) }
            }
        } else if finderRows == 1, let winner = finders.first {
            lines.append([Span("1st ", .title)] + finderLine(1, winner, state, width: width - 4, now: now).dropFirst())
        }
        return Array(lines.prefix(max(0, rows)))
    }

    /// "#7     ███░ close       warmer found it!  ~1.2 m  5 s ago": fixed columns; the
    /// trend only from the state's trend, the distance only when it agrees with the class,
    /// "found it!" only for a finder still near; later parts only when they fit.
    static func hunterLine(_ hunter: KioskState.Hunter, _ state: KioskState, width: Int, now: Double) -> [Span] {
        let p = hunter.proximity
        var spans = [
            Span(pad("#\(hunter.id)", 7), .hunter(p)),
            Span(meter(p) + " ", .hunter(p)),
            Span(pad(Words.proximity(p), 12), .hunter(p)),
        ]
        func add(_ text: String, _ paint: Paint) {
            if spans.columns + Text.width(of: text) <= width { spans.append(Span(text, paint)) }
        }
        add(pad(hunter.trend.map(Words.trend) ?? "", 7), .hunter(p))
        if hunter.foundAndNear { add("found it!  ", .gold) }
        if let distance = Text.distance(state.shownDistance(hunter)) { add(pad(distance, 8), .plain) }
        if let age = Words.ago(now - hunter.lastSeen) { add(age, .label) }
        return spans
    }

    /// "1. Hunter 7   treasure 2   2:13" (the time taken, or how long ago when not known).
    static func finderLine(_ place: Int, _ finder: KioskState.Finisher, _ state: KioskState, width: Int, now: Double) -> [Span] {
        var spans = [Span(pad("\(place).", 4), .gold), Span(pad("Hunter \(finder.hunter)", 13), .gold)]
        func add(_ text: String, _ paint: Paint) {
            if spans.columns + Text.width(of: text) <= width { spans.append(Span(text, paint)) }
        }
        if state.trail.normalized.count > 1 { add(pad("treasure \(finder.treasure)", 13), .plain) }
        if let took = Words.duration(finder.took) {
            add(took, .plain)
        } else if let age = Words.ago(now - finder.at) {
            add(age, .label)
        }
        return spans
    }

    /// The technical lines, small and grey: what the radio does, the reward, the beacon's ids.
    static func footerLines(_ state: KioskState, width: Int, rows: Int) -> [[Span]] {
        var status = statusLine(state.advertising)
        status.append(Span("   reward ", .label))
        status.append(state.reward.map { Span(Text.clean($0), .label) } ?? Span("(none)", .label))
        var ids = [Span(
            "\(Text.clean(state.uuid))  major \(state.major) minor \(state.minor)  \(state.power) dBm  \(state.intervalMilliseconds) ms",
            .label)]
        if let game = state.game {
            let paired = game.hasPrefix("game ")
            let text = "  " + Text.clean(game)
            if ids.reduce(0, { $0 + Text.width(of: $1.text) }) + Text.width(of: text) <= width || !paired {
                ids.append(Span(text, paired ? .label : .warn))
            }
        }
        // The page's code first: the kiosk is where a grown-up reads it.
        if let page = state.page {
            let pageText = "page " + Text.clean(page)
            let idsWidth = ids.reduce(0) { $0 + Text.width(of: $1.text) }
            let line = [Span(pageText, .label)]
            ids = Text.width(of: pageText) + 2 + idsWidth <= width ? line + [Span("  ", .label)] + ids : line
        }
        if rows >= 2 { return [status, ids] }
        return rows == 1 ? [status] : []
    }

    static func statusLine(_ advertising: KioskState.Advertising) -> [Span] {
        switch advertising {
        case .advertising(let adapter, let family):
            return [Span("((o)) advertising on \(Text.clean(adapter)) (\(Text.clean(family)))", .label)]
        case .waiting(let reason):
            return [Span("zzz waiting: \(Text.clean(reason))", .warn)]
        }
    }

    static func meter(_ p: Proximity) -> String {
        switch p {
        case .immediate: return "████"
        case .near: return "███░"
        case .far: return "█░░░"
        case .unknown: return "░░░░"
        }
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s + String(repeating: " ", count: max(0, width - Text.width(of: s)))
    }
}
