import Kiosk
import Ranging
import Testing

/// The stories a child sees, each pinned at four sizes (`Fixtures/frames/`, `PinnedFrameFiles`), and checked
/// for words the state does not back.
let stories: [(String, KioskState)] = [
    ("idle", boxState()),
    (
        "approaching",
        boxState(hunters: [
            hunter(3, .near, 1.8, trend: .warmer, seen: 100),
            // Far, but a distance that reads like near: the number must not be shown.
            hunter(12, .far, 1.7, seen: 97),
            // Near at ~8 m: the same.
            hunter(5, .near, 8.0, seen: 100),
            hunter(300, .unknown, seen: 100),
        ])
    ),
    (
        "greeting",
        boxState(
            hunters: [hunter(7, .immediate, 0.3, found: true)],
            greeting: .init(hunterID: 7, at: 99, qrLines: qrDrawing(modules: 21)),
            standings: [.init(hunter: 7, treasure: 1, at: 99)])
    ),
    (
        "greeting, no reward",
        boxState(
            reward: nil, hunters: [hunter(7, .immediate, 0.3, found: true)],
            greeting: .init(hunterID: 7, at: 99, qrLines: []),
            standings: [.init(hunter: 7, treasure: 1, at: 99)])
    ),
    (
        "standings",
        boxState(
            hunters: [
                // Found treasure 1, then walked away: no "found it!" beside it any more.
                hunter(7, .far, 6.5, trend: .colder, found: true, seen: 100),
                hunter(3, .near, 2.0, seen: 99),
            ],
            trail: .init(count: 3, found: 2, number: 2),
            standings: [
                .init(hunter: 7, treasure: 1, at: 40, took: 133),
                .init(hunter: 3, treasure: 2, at: 70, took: 201.5),
            ])
    ),
]

let pinnedSizes = [(40, 12), (80, 24), (120, 40), (200, 60)]

/// A frame as pinned: its rows, the right edge of the frame and the blanks before it left
/// off (the sizes are checked exactly elsewhere).
func pinned(_ frame: String) -> String {
    rows(frame, color: false).map { row in
        var s = Substring(row)
        if s.hasSuffix("│") || s.hasSuffix("╮") || s.hasSuffix("╯") { s = s.dropLast() }
        while s.hasSuffix(" ") { s = s.dropLast() }
        return String(s)
    }.joined(separator: "\n")
}

/// Where the chest's lid is (row, column), nil when there is no chest (the frame's own
/// top-left corner, on row 0, does not count).
func chestPosition(_ lines: [String]) -> (Int, Int)? {
    for (y, line) in lines.enumerated() where y > 0 {
        if let r = line.firstRange(of: "╭─") { return (y, columns(String(line[..<r.lowerBound]))) }
    }
    return nil
}

@Suite struct KioskFrameTests {
    @Test(arguments: 0..<stories.count)
    func framesArePinned(story: Int) {
        let (name, state) = stories[story]
        for (width, height) in pinnedSizes {
            let key = "\(name) \(width)x\(height)"
            let frame = KioskScreen.render(state, width: width, height: height, color: false, now: 100)
            let lines = rows(frame, color: false)
            #expect(lines.count == height && lines.allSatisfy { columns($0) == width }, "\(key)")
            PinnedFrameFiles.expect(pinned(frame), pinnedAs: PinnedFrameFiles.name(story: name, width: width, height: height))
        }
    }

    /// Every file in Fixtures/frames/ is one a story pins (a story renamed or dropped leaves none behind).
    @Test func everyPinnedFileHasItsStory() {
        let pinnedNames = Set(stories.flatMap { story in
            pinnedSizes.map { PinnedFrameFiles.name(story: story.0, width: $0.0, height: $0.1) }
        })
        #expect(pinnedNames.count == stories.count * pinnedSizes.count)
        #expect(PinnedFrameFiles.all() == pinnedNames)
    }

    @Test(arguments: 0..<stories.count)
    func noWordContradictsTheState(story: Int) {
        let (name, state) = stories[story]
        let hunters = state.hunters
        for (width, height) in pinnedSizes + [(60, 16), (30, 8)] {
            let key = "\(name) \(width)x\(height)"
            let lines = rows(KioskScreen.render(state, width: width, height: height, color: false, now: 100), color: false)
            let text = lines.joined(separator: "\n").lowercased()
            // Warmer and colder only from a trend.
            #expect(!text.contains("warmer") || hunters.contains { $0.trend == .warmer }, "\(key)")
            #expect(!text.contains("colder") || hunters.contains { $0.trend == .colder }, "\(key)")
            // "found it" only beside (or about) a hunter that found it and is still near.
            for line in lines where line.lowercased().contains("found it") {
                let id = hunters.first { line.contains("#\($0.id) ") || line.contains("Hunter \($0.id) ") }
                #expect(id?.foundAndNear == true, "\(key): \(line)")
            }
            // A distance only beside the class it agrees with.
            for line in lines where line.contains(" m ") || line.hasSuffix(" m") || line.contains(" m│") {
                guard let h = hunters.first(where: { line.contains("#\($0.id) ") }) else { continue }
                #expect(state.shownDistance(h) != nil, "\(key): \(line)")
                if let d = state.shownDistance(h), let shown = metresText(d) { #expect(line.contains(shown), "\(key): \(line)") }
            }
            #expect(!text.contains("scan your reward") || state.reward != nil, "\(key)")
            // The class words come from the class.
            for h in hunters {
                for line in lines where line.contains("#\(h.id) ") {
                    for p in Proximity.allCases where p != h.proximity {
                        #expect(!line.contains(" " + word(p)), "\(key): \(line)")
                    }
                }
            }
            // The footer only once the big words are there whole.
            if state.greeting == nil, text.contains(uuid.lowercased()) || text.contains("advertising on") {
                let headline = headlineText(state)
                #expect(text.contains(headline.lowercased()), "\(key): footer without \(headline)")
            }
        }
    }

    @Test func bigWordsFirstTheFooterGoesFirst() {
        let state = stories[1].1
        let small = rows(KioskScreen.render(state, width: 40, height: 12, color: false, now: 100), color: false).joined()
        #expect(small.contains("Hunter 3 is close!"))
        #expect(small.contains("Getting warmer!"))
        #expect(!small.contains(uuid) && !small.contains("dBm") && !small.contains("advertising"))
        let big = rows(KioskScreen.render(state, width: 80, height: 24, color: false, now: 100), color: false).joined()
        #expect(big.contains("Hunter 3 is close!") && big.contains(uuid) && big.contains("-59 dBm"))
    }

    @Test(arguments: pinnedSizes + [(60, 16), (100, 30), (30, 8)])
    func theChestStaysPutWhateverTheWords(width: Int, height: Int) {
        var places: [String: (Int, Int)] = [:]
        var states = stories
        states += [
            ("a long name", boxState(hunters: [hunter(65535, .immediate, 0.1, trend: .warmer)])),
            ("waiting", boxState(advertising: .waiting("adapter hci1 down, and a long reason to go with it"), reward: nil)),
            ("crowd", boxState(hunters: crowd)),
        ]
        for (name, state) in states {
            let lines = rows(KioskScreen.render(state, width: width, height: height, color: false, now: 100), color: false)
            guard let place = chestPosition(lines) else {
                // Only a greeting may leave the chest out (for the code).
                #expect(state.greeting != nil || width < 40, "\(name) \(width)x\(height): no chest")
                continue
            }
            places[name] = place
        }
        let distinct = Set(places.values.map { "\($0.0),\($0.1)" })
        #expect(distinct.count <= 1, "\(width)x\(height): \(places)")
        if width >= 80 {
            // The greeting keeps the chest where the board has it when the code fits beside it.
            #expect(places["greeting"] != nil && places["greeting, no reward"] != nil, "\(width)x\(height)")
        }
    }

    @Test func noRewardNoScanning() {
        let state = stories[3].1
        for (width, height) in pinnedSizes {
            let text = rows(KioskScreen.render(state, width: width, height: height, color: false, now: 100), color: false).joined()
            #expect(text.contains("Ahoy hunter 7!"))
            #expect(!text.contains("Scan your reward"))
            #expect(!text.contains("does not fit"))
        }
        let with = rows(KioskScreen.render(stories[2].1, width: 80, height: 24, color: false, now: 100), color: false).joined()
        #expect(with.contains("Scan your reward"))
    }

    @Test func theStandingsAreShownWithTheirTimes() {
        let text = rows(KioskScreen.render(stories[4].1, width: 80, height: 24, color: false, now: 100), color: false)
            .joined(separator: "\n")
        #expect(text.contains("2 of 3 treasures found"))
        #expect(text.contains("Finders:"))
        #expect(text.contains("1.  Hunter 7"))
        #expect(text.contains("2:13"))
        #expect(text.contains("3:21"))
        // Hunter 7 found treasure one but walked away: the standings say so, its row does not.
        let row = text.split(separator: "\n").first { $0.contains("#7 ") }
        #expect(row.map { !$0.contains("found it") } == true)
    }

    func word(_ p: Proximity) -> String {
        switch p {
        case .immediate: return "right here"
        case .near: return "close"
        case .far: return "far away"
        case .unknown: return "in the fog"
        }
    }

    func headlineText(_ state: KioskState) -> String {
        guard let h = state.huntersNearestFirst.first else { return "No hunters near yet." }
        if h.foundAndNear { return "Hunter \(h.id) found it!" }
        switch h.proximity {
        case .immediate: return "Hunter \(h.id) is right here!"
        case .near: return "Hunter \(h.id) is close!"
        case .far: return "Hunter \(h.id) is far away."
        case .unknown: return "I hear a hunter..."
        }
    }
}

/// "~1.2 m" as the screen writes it.
func metresText(_ metres: Double) -> String? {
    guard metres.isFinite, metres >= 0 else { return nil }
    if metres < 9.95 {
        let tenths = Int((metres * 10).rounded())
        return "~\(tenths / 10).\(tenths % 10) m"
    }
    return "~\(Int(metres.rounded())) m"
}
