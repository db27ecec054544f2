import Kiosk
import Ranging
import Testing

let crowd = [
    hunter(7, .near, 1.23, found: true, seen: 99), hunter(12, .far, 8.6, seen: 95),
    hunter(300, .unknown, seen: 100), hunter(65535, .immediate, 0.3, seen: 100),
]

/// States that exercise every layout: nobody near, a crowd, waiting, greetings with a small
/// and a big code, a long reward.
let sampleStates: [(String, KioskState)] = [
    ("empty", boxState(hunters: [])),
    ("crowd", boxState(hunters: crowd)),
    ("many", boxState(hunters: (1...40).map { hunter(UInt16($0), .far, Double($0), seen: 90) })),
    ("waiting", boxState(advertising: .waiting("adapter hci1 down"), reward: nil)),
    ("small code", boxState(hunters: crowd, greeting: .init(hunterID: 7, at: 99, qrLines: qrDrawing(modules: 21)))),
    ("big code", boxState(hunters: crowd, greeting: .init(hunterID: 7, at: 99, qrLines: qrDrawing(modules: 57)))),
    ("long reward", boxState(reward: String(repeating: "Dig three paces west of the old well. ", count: 8), hunters: crowd)),
]

@Suite struct KioskScreenSizeTests {
    @Test(arguments: [(80, 24), (40, 12), (200, 60), (120, 30), (60, 16), (30, 8), (20, 5), (3, 2), (1, 1)])
    func everyFrameFillsTheScreenExactly(size: (Int, Int)) {
        let (width, height) = size
        for (name, state) in sampleStates {
            for color in [false, true] {
                let frame = KioskScreen.render(state, width: width, height: height, color: color, now: 100)
                #expect(frame.hasPrefix(KioskScreen.home), "\(name)")
                // Never a line break after the last row: that would scroll the screen.
                #expect(!frame.hasSuffix("\n"), "\(name)")
                let lines = rows(frame, color: color)
                #expect(lines.count == height, "\(name) \(width)x\(height) color \(color)")
                for line in lines {
                    #expect(columns(line) == width, "\(name) \(width)x\(height) color \(color): \(line)")
                }
            }
        }
    }

    @Test func nothingToDrawOnAZeroSizedScreen() {
        #expect(KioskScreen.render(boxState(hunters: crowd), width: 0, height: 0, color: true, now: 0) == KioskScreen.home)
        #expect(KioskScreen.render(boxState(hunters: crowd), width: -5, height: 10, color: false, now: 0).count <= 10 * 2 + 3)
    }

    @Test func wideCharactersInTheRewardKeepRowsInside() {
        let state = boxState(reward: "宝物は庭の木の下にあるよ 🏴‍☠️ 💰💰💰 e\u{301}e\u{301}", hunters: crowd)
        for (width, height) in [(80, 24), (40, 12), (45, 10)] {
            for line in rows(KioskScreen.render(state, width: width, height: height, color: false, now: 100), color: false) {
                #expect(columns(line) <= width, "\(line)")
            }
        }
    }
}

@Suite struct KioskScreenContentTests {
    @Test func showsTheBigWordsHuntersAndTheTechnicalFooter() {
        let text = rows(KioskScreen.render(boxState(hunters: crowd), width: 80, height: 24, color: false, now: 100), color: false)
            .joined(separator: "\n")
        for expected in [
            "Pirate Treasure Box", "Hunter 65535 is right here!", "Find the treasure!", "#7", "#12", "#300", "#65535",
            "found it!", "advertising on hci1 (legacy)", "Gold coins under the big oak!", uuid, "major 1", "minor 7", "-59 dBm", "100 ms",
        ] {
            #expect(text.contains(expected), "missing \(expected)")
        }
        // The picture is there on a roomy screen.
        #expect(text.contains("╔═════════════════════════╗"))
        // Roomier still: the distances that agree with the classes, and the ages.
        let wide = rows(KioskScreen.render(boxState(hunters: crowd), width: 120, height: 40, color: false, now: 100), color: false)
            .joined(separator: "\n")
        for expected in ["~1.2 m", "~8.6 m", "~0.3 m", "5 s ago"] {
            #expect(wide.contains(expected), "missing \(expected)")
        }
    }

    @Test func waitingIsShownInTheFooter() {
        let text = rows(
            KioskScreen.render(boxState(advertising: .waiting("adapter hci1 down")), width: 80, height: 24, color: false, now: 0),
            color: false
        ).joined(separator: "\n")
        #expect(text.contains("waiting: adapter hci1 down"))
        #expect(!text.contains("advertising on"))
    }

    @Test func huntersAreListedNearestFirst() {
        let text = rows(KioskScreen.render(boxState(hunters: crowd), width: 80, height: 24, color: false, now: 100), color: false)
            .joined(separator: "\n")
        let order = ["#65535", "#7 ", "#12", "#300"].compactMap { text.firstRange(of: $0)?.lowerBound }
        #expect(order.count == 4)
        #expect(order == order.sorted())
    }

    @Test func huntersThatDoNotFitAreCounted() {
        let state = boxState(hunters: (1...40).map { hunter(UInt16($0), .far, Double($0), seen: 90) })
        let lines = rows(KioskScreen.render(state, width: 80, height: 24, color: false, now: 100), color: false)
        let shown = lines.filter { $0.contains("█░░░") }.count
        #expect(shown > 3)
        #expect(lines.contains { $0.contains("and \(40 - shown) more") })
    }

    @Test func onASmallScreenTheChestAndTheBigWordsStayTheFooterGoes() {
        let text = rows(KioskScreen.render(boxState(hunters: crowd), width: 40, height: 12, color: false, now: 100), color: false)
            .joined(separator: "\n")
        #expect(text.contains("╭─────╮"))
        #expect(text.contains("Hunter 65535 is right here!"))
        #expect(!text.contains("advertising on hci1"))
        #expect(!text.contains(uuid))
    }

    @Test func sparklesTwinkleWithTime() {
        let state = boxState(hunters: crowd)
        let a = KioskScreen.render(state, width: 80, height: 24, color: false, now: 100)
        #expect(KioskScreen.render(state, width: 80, height: 24, color: false, now: 100.4) == a)
        #expect(KioskScreen.render(state, width: 80, height: 24, color: false, now: 100.5) != a)
        for now in [Double.nan, .infinity, -1e300, 1e300] {
            #expect(rows(KioskScreen.render(state, width: 80, height: 24, color: false, now: now), color: false).count == 24)
        }
    }
}

@Suite struct KioskGreetingTests {
    /// Where `qr` sits in `lines`: every code line found whole, on consecutive rows, in one column.
    func placement(of qr: [String], in lines: [String]) -> (row: Int, column: Int)? {
        guard let first = qr.first else { return nil }
        for (y, line) in lines.enumerated() {
            guard let r = line.firstRange(of: first) else { continue }
            let column = columns(String(line[..<r.lowerBound]))
            let intact = qr.enumerated().allSatisfy { i, q in
                guard y + i < lines.count, let r = lines[y + i].firstRange(of: q) else { return false }
                return columns(String(lines[y + i][..<r.lowerBound])) == column
            }
            if intact { return (y, column) }
        }
        return nil
    }

    @Test(arguments: [(80, 24, 21), (80, 24, 33), (80, 24, 37), (40, 18, 29), (200, 60, 57), (120, 40, 57)])
    func theCodeIsShownWholeWhenItFits(width: Int, height: Int, modules: Int) {
        let qr = qrDrawing(modules: modules)
        #expect(qr.count + 1 <= height && (qr.first?.count ?? 0) <= width)
        for color in [false, true] {
            let state = boxState(hunters: crowd, greeting: .init(hunterID: 7, at: 99, qrLines: qr))
            let lines = rows(KioskScreen.render(state, width: width, height: height, color: color, now: 100), color: color)
            let place = placement(of: qr, in: lines)
            #expect(place != nil, "\(width)x\(height) modules \(modules) color \(color)")
            #expect(lines.contains { $0.contains("Ahoy hunter 7!") })
            if let place {
                // Centred: the free columns either side differ by at most the picture beside it.
                #expect(place.column > 0 && place.column + (qr.first?.count ?? 0) <= width)
                #expect(lines.firstIndex { $0.contains("Ahoy hunter 7!") } ?? lines.count < place.row)
            }
        }
    }

    @Test(arguments: [(40, 12, 21), (80, 24, 57), (30, 40, 29), (80, 16, 33)])
    func aCodeThatDoesNotFitIsNotCutButExplained(width: Int, height: Int, modules: Int) {
        let qr = qrDrawing(modules: modules)
        let state = boxState(greeting: .init(hunterID: 7, at: 99, qrLines: qr))
        let lines = rows(KioskScreen.render(state, width: width, height: height, color: false, now: 100), color: false)
        #expect(lines.count == height)
        let text = lines.joined(separator: "\n")
        #expect(text.contains("Ahoy hunter 7!"))
        // The notice may be wrapped: read it as words.
        let words = lines.flatMap { $0.split { $0 == " " || $0 == "│" } }.joined(separator: " ")
        #expect(words.contains("QR code does not fit"))
        #expect(words.contains("needs \(qr.first?.count ?? 0)x\(qr.count + 1)"))
        // Not a single line of the code, not even a cut one (every drawn line starts with the
        // quiet zone, a run of full blocks).
        #expect(!text.contains("█████"))
    }

    @Test func onAScreenJustBigEnoughTheCodeFillsItUnderTheGreeting() {
        let qr = qrDrawing(modules: 21)
        let width = qr[0].count, height = qr.count + 1
        let state = boxState(hunters: crowd, greeting: .init(hunterID: 9, at: 99, qrLines: qr))
        for color in [false, true] {
            let lines = rows(KioskScreen.render(state, width: width, height: height, color: color, now: 100), color: color)
            #expect(lines.first?.contains("Ahoy hunter 9!") == true)
            #expect(Array(lines.dropFirst()) == qr)
        }
    }

    @Test func aRoomyScreenAddsTheBigAhoyAndTheRewardText() {
        let qr = qrDrawing(modules: 25)
        let state = boxState(hunters: crowd, greeting: .init(hunterID: 9, at: 99, qrLines: qr))
        let lines = rows(KioskScreen.render(state, width: 120, height: 40, color: false, now: 100), color: false)
        guard let place = placement(of: qr, in: lines) else {
            Issue.record("code not found")
            return
        }
        let above = lines[..<place.row].joined(separator: "\n")
        let below = lines[(place.row + qr.count)...].joined(separator: "\n")
        #expect(above.contains("█▄▄█ █▄▄█"))
        #expect(above.contains("Ahoy hunter 9!"))
        #expect(above.contains("You found the treasure!"))
        #expect(below.contains("Gold coins under the big oak!"))
        // And the chest beside the code.
        #expect(lines.contains { $0.contains("╔═════════════════════════════════════╗") })
    }

    @Test func theQuietZoneRowOfTheCodeIsNotMistakenForMissing() {
        // A code made of distinct lines is found in order: the helper checks real placement.
        let qr = qrDrawing(modules: 21)
        #expect(Set(qr.dropFirst().dropLast()).count > 5)
        let state = boxState(greeting: .init(hunterID: 7, at: 99, qrLines: qr))
        let lines = rows(KioskScreen.render(state, width: 80, height: 24, color: false, now: 100), color: false)
        #expect(placement(of: qr.reversed(), in: lines) == nil)
        #expect(placement(of: qr, in: lines) != nil)
    }
}

@Suite struct KioskColourTests {
    /// The SGR colour of the top-left frame corner.
    func frameColour(_ frame: String) -> String? {
        guard let corner = frame.firstRange(of: "╭") else { return nil }
        let before = frame[..<corner.lowerBound]
        guard let start = before.ranges(of: "\u{1B}[").last else { return nil }
        return String(before[start.upperBound...])
    }

    static let expected: [(Proximity?, String)] = [
        (nil, "0;38;5;33m"), (.unknown, "0;38;5;33m"), (.far, "0;38;5;51m"), (.near, "0;38;5;208m"), (.immediate, "0;38;5;196m"),
    ]

    @Test(arguments: 0..<5)
    func theFrameTakesTheColourOfTheNearestHunter(index: Int) {
        let (proximity, code) = Self.expected[index]
        // The nearest hunter is `proximity`; the others are further away (or unknown).
        var hunters: [KioskState.Hunter] = []
        if let proximity {
            hunters = [hunter(1, .unknown), hunter(2, proximity, 0.2)]
            if proximity == .near || proximity == .immediate { hunters.append(hunter(3, .far, 9)) }
        }
        let state = boxState(hunters: hunters.reversed())
        #expect(KioskScreen.accent(for: state) == proximity)
        #expect(frameColour(KioskScreen.render(state, width: 80, height: 24, color: true, now: 100)) == code)
        #expect(Palette.colour(for: proximity) == Int(code.dropFirst(7).dropLast()))
    }

    @Test func withinAClassTheShorterDistanceIsNearest() {
        let state = boxState(hunters: [hunter(1, .near, 2.5), hunter(2, .near), hunter(3, .near, 0.9)])
        #expect(state.huntersNearestFirst.map(\.id) == [3, 1, 2])
        #expect(KioskScreen.accent(for: state) == .near)
    }

    @Test func withoutColourTheOnlyEscapeIsCursorHome() {
        for (name, state) in sampleStates {
            for (w, h) in [(80, 24), (40, 12), (200, 60)] {
                let frame = KioskScreen.render(state, width: w, height: h, color: false, now: 100)
                #expect(escapes(in: frame) == [KioskScreen.home], "\(name) \(w)x\(h)")
            }
        }
    }

    @Test func withColourEveryOtherEscapeIsAnSGR() {
        for (name, state) in sampleStates {
            let frame = KioskScreen.render(state, width: 80, height: 24, color: true, now: 100)
            let found = escapes(in: frame)
            #expect(found.first == KioskScreen.home)
            #expect(found.count > 2)
            #expect(found.dropFirst().allSatisfy { $0.hasPrefix("\u{1B}[") && $0.hasSuffix("m") }, "\(name)")
            // Every row ends with the attributes reset (or was plain all along).
            for line in frame.split(separator: "\r\n") where line.contains("\u{1B}[0;") {
                #expect(line.hasSuffix("\u{1B}[0m"))
            }
        }
    }

    @Test func controlCharactersInTheRewardNeverReachTheTerminal() {
        let state = boxState(reward: "\u{1B}[31mred\u{9B}2J\u{7}bell\ttab\u{202E}evil", hunters: crowd)
        for (w, h) in [(80, 24), (120, 40)] {
            let plain = KioskScreen.render(state, width: w, height: h, color: false, now: 100)
            #expect(escapes(in: plain) == [KioskScreen.home])
            #expect(plain.contains("[31mred2Jbell tabevil"))
            #expect(!plain.unicodeScalars.contains { $0.value == 0x9B || $0.value == 0x07 || $0.value == 0x202E || $0 == "\t" })
            let coloured = KioskScreen.render(state, width: w, height: h, color: true, now: 100)
            #expect(!coloured.contains("\u{1B}[31m"))
            #expect(stripSGR(coloured).contains("[31mred2Jbell tabevil"))
        }
        // The same in the greeting and in the screen's other strings.
        let greeting = boxState(
            advertising: .waiting("adapter \u{1B}]0;pwned\u{7} down"), reward: "\u{1B}[31m",
            greeting: .init(hunterID: 3, at: 1, qrLines: qrDrawing(modules: 21)))
        let frame = KioskScreen.render(greeting, width: 80, height: 24, color: false, now: 2)
        #expect(escapes(in: frame) == [KioskScreen.home])
        #expect(frame.contains("[31m"))
    }

    @Test func fullScreenControlsAreThePairThatUndoEachOther() {
        #expect(KioskScreen.enterFullScreen.contains("\u{1B}[?1049h") && KioskScreen.enterFullScreen.contains("\u{1B}[?25l"))
        #expect(KioskScreen.leaveFullScreen.contains("\u{1B}[?25h") && KioskScreen.leaveFullScreen.hasSuffix("\u{1B}[?1049l"))
    }
}

/// The box's game (issue #25): its key's fingerprint for a parent to compare, or a warning
/// that it is not paired; never more than the frame holds.
@Suite struct KioskGameTests {
    @Test func theFooterNamesTheGameOrSaysItIsNotPaired() {
        var state = boxState(hunters: [])
        state.game = "game ABCD"
        let paired = stripSGR(KioskScreen.render(state, width: 120, height: 30, color: false, now: 100))
        #expect(paired.contains("ms  game ABCD"))
        state.game = "NOT PAIRED: no reward sent (pirate-hunter check)"
        let unpaired = KioskScreen.render(state, width: 120, height: 30, color: true, now: 100)
        #expect(stripSGR(unpaired).contains("NOT PAIRED"))
        for width in [20, 40, 80] {
            let rows = rows(KioskScreen.render(state, width: width, height: 12, color: false, now: 100), color: false)
            #expect(rows.allSatisfy { columns($0) <= width })
        }
        state.game = nil
        #expect(!stripSGR(KioskScreen.render(state, width: 120, height: 30, color: false, now: 100)).contains("game"))
    }
}

@Suite struct KioskPageTests {
    /// The box's page and its setup code are in the footer (issue 26): before the ids, and
    /// alone when the screen is too narrow for both.
    @Test func theSetupCodeIsInTheFooter() {
        var state = boxState(hunters: crowd)
        state.page = "http://box.local:8080/ code 042917"
        for (width, height) in [(80, 24), (200, 60), (60, 16)] {
            let frame = KioskScreen.render(state, width: width, height: height, color: false, now: 100)
            #expect(frame.contains("code 042917"), "\(width)x\(height)")
        }
        let wide = KioskScreen.render(state, width: 200, height: 60, color: false, now: 100)
        #expect(wide.contains("major"))
    }
}
