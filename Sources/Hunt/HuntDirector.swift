import Ranging

/// The hunt events a line pack has lines for (the raw values are the pack's keys,
/// `voices/lines/<language>.json`).
public enum LineEvent: String, CaseIterable, Sendable, Codable {
    case regionEntered = "region-entered"
    case regionLeft = "region-left"
    case proximityImmediate = "proximity-immediate"
    case proximityNear = "proximity-near"
    case proximityFar = "proximity-far"
    case proximityUnknown = "proximity-unknown"
    case warmer
    case colder
    case treasureFound = "treasure-found"
    case startup
    case adapterMissing = "adapter-missing"
    case adapterBack = "adapter-back"
    case speakerTest = "speaker-test"
    /// Says the treasure's reward is coming; the reward itself (heard over the air) follows.
    case reward
    /// A trail step begins: the pack's lead-in ("On to treasure {treasure}!"), then the
    /// parent's clue (text or recording).
    case clue
    /// A child stuck on a step: the step's own hint, or one of the pack's.
    case hint
    /// At another treasure of the trail than the one to find now.
    case outOfOrder = "out-of-order"
    /// Another hunter found a treasure of the trail first (race mode).
    case rivalFound = "rival-found"
    /// Several other hunters' finds within `HuntDirector.rivalSpacing`, told as one (`{count}`).
    case rivalsFound = "rivals-found"
    /// The whole trail found, with the time it took.
    case finale
    /// A stuck child inside the treasure's region is asked to turn slowly in a circle...
    case spin
    /// ... and told to stop when the signal is strongest (facing the treasure).
    case spinStop = "spin-stop"
    // What a grown-up must fix, said at start in plain words (not pirate), once.
    /// Bluetooth is switched off (rfkill, or the adapter is down and cannot be brought up).
    case noticeBluetoothOff = "notice-bluetooth-off"
    /// No Bluetooth adapter at all.
    case noticeNoAdapter = "notice-no-adapter"
    /// Not allowed to use Bluetooth (a capability missing).
    case noticeNoPermission = "notice-no-permission"
    /// This kernel has no Bluetooth.
    case noticeNoBluetooth = "notice-no-bluetooth"
    /// The settings file has a mistake (`pirate-hunter check` names it).
    case noticeSettings = "notice-settings"
    /// ... in step `{treasure}` of the trail.
    case noticeSettingsStep = "notice-settings-step"
    /// The speaker was missing at start and is there now (the clue follows).
    case noticeSpeakerFound = "notice-speaker-found"
    /// No game key: nothing from the air is believed (rivals, the box's reward) until the
    /// hunter is paired with the box (`pirate-hunter pair`), issue #25.
    case noticeUnpaired = "notice-unpaired"
    /// Where the parent's page is and its setup code (`{host}`, `{port}`, `{code}`), once at
    /// start for the grown-up by the speaker (issue 26).
    case noticePage = "notice-page"

    public static func proximity(_ p: Proximity) -> LineEvent {
        switch p {
        case .immediate: return .proximityImmediate
        case .near: return .proximityNear
        case .far: return .proximityFar
        case .unknown: return .proximityUnknown
        }
    }

    /// How much a line matters: a newer line replaces one being spoken only when it matters
    /// at least as much; a lesser one waits (or is dropped when it has gone stale).
    ///   found > region entered/left, adapter > proximity > warmer/colder > start-up
    ///   (and for trails) clue, finale > found, out-of-order > rival > region > hint = proximity
    public var precedence: Int {
        switch self {
        case .clue, .finale: return 6
        case .noticeBluetoothOff, .noticeNoAdapter, .noticeNoPermission, .noticeNoBluetooth, .noticeSettings, .noticeSettingsStep,
             .noticeSpeakerFound, .noticeUnpaired: return 6
        case .treasureFound, .reward, .outOfOrder, .spinStop: return 5
        case .rivalFound, .rivalsFound: return 4
        case .regionEntered, .regionLeft, .adapterMissing, .adapterBack: return 4
        case .proximityImmediate, .proximityNear, .proximityFar, .proximityUnknown, .hint, .spin: return 3
        case .warmer, .colder: return 2
        case .startup, .speakerTest: return 1
        // The page's address is for the grown-up: any line of the child's cuts it (it is
        // said again at the next quiet moment, `HuntDirector.pageNoticeTries` in all).
        case .noticePage: return 0
        }
    }

    /// What a grown-up must fix (or has fixed), in plain words: one sentence in a pack.
    public var isNotice: Bool { rawValue.hasPrefix("notice-") }

    /// Lines made when they are said (their `{placeholders}` filled in, a parent's words
    /// added), not rendered at start-up.
    public var isComposed: Bool {
        switch self {
        case .clue, .hint, .outOfOrder, .rivalFound, .rivalsFound, .finale, .noticeSettingsStep, .noticePage: true
        default: false
        }
    }
}

/// The sound effects of the hunt (files in `voices/`, `NAME.wav`).
public enum Sound: String, Sendable, CaseIterable {
    /// Entering or leaving the treasure's region.
    case arrr
}

/// What the hunter does.
public enum HuntAction: Equatable, Sendable {
    /// Play a sound effect (it mixes over speech).
    case sound(Sound)
    /// Speak a line of this event, cutting the current line short (with a fade) if `interrupt`.
    case say(LineEvent, interrupt: Bool)
    /// As `say`, about something: a trail step, a treasure's number, a rival, the time taken.
    case tell(LineEvent, LineDetail, interrupt: Bool)
    /// A treasure was found: trail step `step` (0-based), or the one chest without a trail.
    /// It follows the found line's own actions.
    case found(step: Int?)
    /// The spin request is said: the child turns from now; watch for the strongest level.
    case watchSpin
}

/// Everything the director reacts to.
public enum HuntInput: Equatable, Sendable {
    case started
    /// The parent's page is up (`host`, `port`, `code` of the detail): said once, after the
    /// start-up line and what follows it, when nothing else is being said.
    case pageOpened(LineDetail)
    case ranging(RangingEvent)
    case adapterMissing
    case adapterBack
    /// The line started by the last `.say` has finished playing.
    case speechFinished
    /// The treasure's reward was read from its scan response: say it once the found line is over.
    case rewardHeard
    /// No reward is coming for the last find (none heard in time, or none asked for).
    case rewardAbsent
    /// Another hunter announced it found the treasure of trail step `step` (0-based).
    case rivalFound(hunter: UInt16, step: Int)
    /// The child asked to hear the clue again (the hunter's button).
    case clueAsked
    /// A problem a grown-up must fix, said now in plain words (`notice-…` events).
    case notice(LineEvent)
    /// The speaker missing at start is there now: said, then the current clue again (what
    /// was said before went nowhere).
    case speakerFound
    /// The spinning child faces the treasure (the level peaked): say stop.
    case spinPeaked
}

/// How long "immediate" holds before it is a find (`hold(rates:)`), for the director's own
/// find and a trail's other treasures (`TrailProgress.tick`) alike.
public struct FindHoldRule: Sendable, Equatable {
    /// Immediate proximity held this long (s) is "treasure found" (under
    /// `HuntDirector.immediateLineHold`, shortened for slow tags and lengthened for fast
    /// ones: `slowReadingRate`, `fastReadingRate`).
    /// (At hand, the engine's immediate, already needs ~3 s of readings at the treasure.)
    public var foundHold = 0.5
    /// A hold under `HuntDirector.immediateLineHold` is waived for a beacon heard fewer
    /// than this many times a second (`RangeReport.readingRate`; nil: never). At hand
    /// (the engine's immediate) waits for its arrival and then 2.5 s and 3 readings; at a
    /// fast tag it may come as the child takes the last step in, and the hold lets it take
    /// it; at 1-2 Hz the arrival itself comes as the child stops, at hand 3.5-6 s later, and
    /// the hold adds its own time and nothing else (walking benchmark, tuning walks 1-1000
    /// one rate at a time: 1 and 2 Hz finds 976 and 989 with the hold or without, lag 0.5 s
    /// shorter without; at 4 Hz 977 with, 970 without).
    public var slowReadingRate: Double? = 2.5
    /// A hold under `HuntDirector.immediateLineHold` is lengthened to `fastFoundHold`
    /// while a beacon at immediate is heard this many times a second or more (nil:
    /// never). The faster the readings, the sooner before the child stops at hand comes:
    /// a tag heard 7-9 times a second and loud by a few dB reads at hand while the child
    /// still takes the last steps in, 1.5-2.2 m out, and a find said there is said
    /// nowhere else (walking benchmark, tuning walks 1-1000 at 10 Hz alone: 976 finds
    /// with the 0.5 s hold, 985 with 1 s, lag 2.0 → 2.45 s; at 4 Hz 976 → 980).
    public var fastReadingRate: Double? = 5
    /// The hold of a find while a beacon at immediate is fast (`fastReadingRate`), at
    /// least `foundHold` and at most `HuntDirector.immediateLineHold`.
    public var fastFoundHold = 1.0
    public init() {}

    /// The hold of a find at beacons heard `rates` times a second (nil: not known), those of
    /// the treasure at immediate (none known: `foundHold`).
    public func hold(rates: [Double?]) -> Double {
        let hold = foundHold
        guard hold < HuntDirector.immediateLineHold, !rates.isEmpty else { return hold }
        if let slow = slowReadingRate, rates.allSatisfy({ ($0 ?? .infinity) < slow }) { return 0 }
        if let fast = fastReadingRate, rates.contains(where: { $0.map { $0 >= fast } ?? false }) {
            // Never under the configured hold, never longer than "immediate" would take to say.
            let fastHold = fastFoundHold.isNaN ? hold : fastFoundHold
            return min(max(hold, fastHold), HuntDirector.immediateLineHold)
        }
        return hold
    }
}

/// The rules of the hunt: which ranging facts become lines and sounds, in what order, and
/// how often. Pure: time comes in with every input, actions go out; nothing is spoken twice
/// for one change and the hunter never chatters.
public struct HuntDirector: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// The region being hunted (its name in the ranging engine).
        public var region: RegionID
        /// Name of the sound played on entering and leaving the region.
        public var regionSound = Sound.arrr
        /// How long "immediate" holds before it is a find (`FindHoldRule`: the four settings
        /// below).
        public var findHold = FindHoldRule()
        /// `FindHoldRule.foundHold` (`found_hold`).
        public var foundHold: Double {
            get { findHold.foundHold }
            set { findHold.foundHold = newValue }
        }
        /// `FindHoldRule.slowReadingRate`.
        public var slowReadingRate: Double? {
            get { findHold.slowReadingRate }
            set { findHold.slowReadingRate = newValue }
        }
        /// `FindHoldRule.fastReadingRate`.
        public var fastReadingRate: Double? {
            get { findHold.fastReadingRate }
            set { findHold.fastReadingRate = newValue }
        }
        /// `FindHoldRule.fastFoundHold`.
        public var fastFoundHold: Double {
            get { findHold.fastFoundHold }
            set { findHold.fastFoundHold = newValue }
        }
        /// Warmer/colder at most this often (s), and not this soon after another line.
        public var trendInterval = 6.0
        /// A region exit is said (the arrr and "region-left") only once the region has stayed
        /// left this long (s); a re-entry before then is said neither. A child walking with the
        /// beacon behind its body, far off or past a wall, loses every packet for a few seconds
        /// now and then: the engine's exit follows its silence model, the child hears only an
        /// exit that lasts (walking benchmark: 0.5 false left + entered pairs an hour at 0,
        /// 0.1 at 6 s).
        public var leftConfirmation = 6.0
        /// A move out to "far" (from a nearer class said) is said only once the class has
        /// stayed far this long (s); back before then, it is said neither way. A body (the
        /// child's own as it turns, another child) between hunter and beacon drops the level
        /// 10-20 dB for 1-10 s, which the engine's class reports within its 5 s step target;
        /// standing still, every such body was a "far" and a "near" (stationary sweeps with
        /// bodies: docs/hunt.md). "Far" is the least urgent news of the hunt: said late, it
        /// costs a child walking away nothing it needs.
        public var farConfirmation = 10.0
        /// A move out to "far" is said only when the nearest hunted beacon's last range is at
        /// least this (m; the ranging's `nearEdge`, filled in by whoever builds the director):
        /// after a body's shadow the classifier's hysteresis may hold "far" while the range is
        /// back inside the edge, and that "far" would be undone by a "near" (docs/hunt.md).
        /// nil: the class alone decides.
        public var farEdge: Double? = 3.0
        /// ... and at least this many times the nearest range before the move out (the median
        /// of the ranges heard 3-15 s before it; nil: not asked). A body that passed between
        /// hunter and beacon leaves the range where it was, though the classifier's hysteresis
        /// may still hold "far" where the level sits near the edge: that far would be undone by
        /// a "near" (stationary sweeps with bodies, docs/hunt.md). A child who walks away
        /// leaves it behind. 1.4: the classifier's 3 dB hysteresis at exponent 2.
        public var farReturnRatio: Double? = 1.4
        /// ... and the range past both for the last this many seconds without a break (0: at
        /// the moment): a body that passes takes the range out for 1-10 s, and the filter needs
        /// a few more (at 1 Hz) to see the level back; a walk away takes it out for good. 18 s:
        /// standing still with bodies, 8 s let a 10 s body through as "far" and "near" again,
        /// and 14 s bodies in close succession (15 seeds a row: 1.11 lines an hour on a tuning
        /// row, 0.93 at 18 s; a step out to 6-8 m is heard 4 s later, docs/ranging.md,
        /// "Eleventh round").
        public var farRangeHold = 18.0
        public var trendQuietAfterLine = 3.0
        /// A line waiting behind a more important one is dropped after this long (s).
        public var pendingLifetime = 4.0
        /// The trail (empty: the single chest of `region`, as before trails: no clue, no
        /// hint, no finale). When set, `region` is its first step's region name.
        public var trail: [TrailStep] = []
        /// A stuck child inside the hunted region is asked to spin like a compass, after
        /// the hint (`hunt.spin`).
        public var spin = true
        /// The treasure detector's clicks between lines (`hunt.detector`).
        public var detector = TreasureDetector.Configuration()
        /// Order, hints and race mode of the trail.
        public var trailRules = TrailProgress.Rules()
        /// After a find, the next clue waits this long at most for the box's reward (s).
        public var rewardWait = 12.0

        public init(region: RegionID) { self.region = region }
    }

    public let configuration: Configuration
    private var speaking: LineEvent?
    private var pending: (event: LineEvent, detail: LineDetail?, since: Double)?
    /// Other hunters' finds not told yet (how many, the latest) and the last rival line.
    private var rivalNews: (count: Int, latest: LineDetail)?
    private var lastRivalLineAt = -Double.infinity
    /// The region hunted now: the configured one, or the trail's current step's.
    public private(set) var region: RegionID
    /// The trail, when there is one.
    public private(set) var progress: TrailProgress?
    /// Lines said in order once nothing else is (the next clue, the finale).
    private var followUps: [FollowUp] = []

    /// A line said once the current one is over. A repeated clue (after a hint or an
    /// out-of-order find) is dropped when the child made progress since it was asked for:
    /// on the way already, the approach's lines matter more.
    private struct FollowUp: Sendable {
        var event: LineEvent
        /// nil: a line of the pack as it is (a find without a trail).
        var detail: LineDetail?
        var unlessProgressSince: Double?
    }
    /// A find without a trail, made behind a more important line, still to be said.
    private var findOwed: Bool { progress == nil && followUps.contains { $0.event == .treasureFound } }
    /// Since when the follow-ups wait for the last find's reward (nil: they do not).
    private var awaitingRewardSince: Double?
    /// Finds so far (each one also starts the reward handoff), and the step of the last.
    public private(set) var findCount = 0
    public private(set) var lastFoundStep: Int?
    private var lastLineAt = -Double.infinity
    private var lastTrendAt = -Double.infinity
    /// Since when the hunted region's exit waits for `leftConfirmation`.
    private var exitSince: Double?
    /// Since when a move out to "far" waits for `farConfirmation`, and the nearest range
    /// before it (`farReturnRatio`).
    private var farSince: Double?
    private var farFrom: Double?
    /// Since when the nearest range has been past the far's edges without a break.
    private var farBeyondSince: Double?
    /// The nearest range of the hunted region's beacons after each range report (time, m),
    /// the last `rangeMemorySpan` s of them, at most `rangeMemory`.
    private var nearestRanges: [(time: Double, meters: Double)] = []
    private static let rangeMemory = 256
    private static let rangeMemorySpan = 15.0
    /// The ranges just before a move out are the body's already (the class's dwell, the
    /// filter's lag): the reference ends this long (s) before it.
    private static let farReferenceGap = 3.0
    /// The page's address: since when it waits for a quiet moment (nil: not due, being or
    /// said), and how often it was begun (a line that cuts it makes it due again).
    private var pageNotice: (detail: LineDetail, dueSince: Double?, tries: Int)?
    public static let pageNoticeTries = 3
    /// Whether the start-up line was said.
    private var startedHunt = false
    /// The last notice for the grown-up (what to fix before the hunt can start): said again
    /// when a speaker turns up before the hunt has started, as it went to no speaker.
    private var lastNotice: LineEvent?
    /// Without a start-up line (the radio never came up) the page's address waits this long.
    public static let pageNoticeWait = 30.0
    private var inside = false
    private var saidProximity: Proximity = .unknown
    private var immediateSince: Double?
    /// "Immediate" committed with a find due under `immediateLineHold`: its line is the
    /// find's, said once it has held the find's hold (`pendingFindHold`; before, "immediate" was said and cut off
    /// by the find half a second later, and a kind spot that read at hand for a moment cost
    /// the child two false lines). The class said before it, which stands if the find does
    /// not come.
    private var immediateUnsaid: Proximity?
    private var foundAnnounced = false
    private var adapterMissing = false
    private var rewardWaiting = false
    /// Lines owed when the line being said is over, however long it was: grown-ups' notices
    /// that came while the child's find or reward was said, and the adapter's news behind a
    /// more important line.
    private var noticesWaiting: [LineEvent] = []
    /// The committed class of every beacon of the hunted region (at most `classMemory`, the
    /// farthest forgotten). The class said is the closest of them: the hunter is as close to
    /// the treasure as to its closest beacon, so a body in front of one beacon of a box is
    /// not "far", and a change of nearest never leaves the old nearest's class said. Also
    /// kept before the region is entered: the engine may commit a class in the same ingest
    /// that enters the region, before the region's state, and a hunter already at the
    /// treasure when the region is entered still finds it.
    /// With each class, the beacon's last range (m; nil until one is reported) and reading
    /// rate (`RangeReport.readingRate`).
    private var classes: [BeaconKey: (proximity: Proximity, since: Double, meters: Double?, rate: Double?)] = [:]
    private static let classMemory = 64

    public init(configuration: Configuration) {
        self.configuration = configuration
        region = configuration.trail.first?.region.name ?? configuration.region
        if !configuration.trail.isEmpty {
            var rules = configuration.trailRules
            rules.findHold = configuration.findHold
            progress = TrailProgress(steps: configuration.trail, rules: rules)
        }
    }

    public var isInside: Bool { inside }
    /// When a line waits on time alone next: a find, once "immediate" has held the find's
    /// hold (`pendingFindHold`; nil: none waits). Whoever ticks the director ticks it then too, not only on its
    /// period: a find said up to a period late is that much lag for the child at the chest.
    public var nextDeadline: Double? {
        guard inside, exitSince == nil, !foundAnnounced, let since = immediateSince else { return nil }
        return since + pendingFindHold
    }

    /// The first deadline after `time`: the hunted step's find (`nextDeadline`) or a trail's
    /// other treasure held at immediate (`TrailProgress.nextDeadline(after:)`). One gone by
    /// (the director was speaking then) is left to the period, and hides no later one.
    public func nextDeadline(after time: Double) -> Double? {
        let own = nextDeadline.flatMap { $0 > time ? $0 : nil }
        guard let others = progress?.nextDeadline(after: time) else { return own }
        return min(own ?? others, others)
    }
    public var treasureFound: Bool { foundAnnounced }
    /// Nothing more to find: the trail is done (or, without one, the chest is found).
    public var huntOver: Bool { progress?.isFinished ?? foundAnnounced }

    /// Feeds one input at `time`; returns what to do, in order.
    public mutating func handle(_ input: HuntInput, at time: Double) -> [HuntAction] {
        switch input {
        case let .pageOpened(detail):
            pageNotice = (detail, time, 0)
            return sayPageNotice(at: time)
        case .started:
            startedHunt = true
            if var p = progress {
                p.start(at: time)
                progress = p
                if let first = p.current { followUps.append(clue(first)) }
            }
            return say(.startup, at: time)
        case .rewardAbsent:
            awaitingRewardSince = nil
            return speaking == nil ? nextFollowUp(at: time) : []
        case let .rivalFound(hunter, step):
            guard var p = progress, p.rival(hunter, found: step) else { return [] }
            progress = p
            // Told at most once per `rivalSpacing`; finds meanwhile are counted and told as
            // one line. Behind a more important line (a clue can be long) the news waits.
            let detail = LineDetail(step: step, treasure: step + 1, hunter: hunter)
            rivalNews = (count: (rivalNews?.count ?? 0) + 1, latest: detail)
            return tellRivals(at: time)
        case .adapterMissing:
            guard !adapterMissing else { return [] }
            adapterMissing = true
            return sayAdapterNews(.adapterMissing, at: time)
        case .adapterBack:
            guard adapterMissing else { return [] }
            adapterMissing = false
            // "Back" for a "missing" never heard is no news.
            if let owed = noticesWaiting.firstIndex(of: .adapterMissing) {
                noticesWaiting.remove(at: owed)
                return []
            }
            return sayAdapterNews(.adapterBack, at: time)
        case .rewardHeard:
            // The reward never cuts the found line (or another reward, or a clue) short.
            if let current = speaking, [.treasureFound, .reward, .clue, .finale, .outOfOrder].contains(current) {
                rewardWaiting = true
                return []
            }
            return say(.reward, at: time)
        case .speechFinished:
            // The child turns from the end of the spin request on.
            let spinning: [HuntAction] = speaking == .spin ? [.watchSpin] : []
            speaking = nil
            // A found line that waited behind a clue comes before the reward it leads to.
            if let i = followUps.firstIndex(where: { $0.event == .treasureFound }) {
                let found = followUps.remove(at: i)
                return spinning + say(found.event, found.detail, at: time)
            }
            if rewardWaiting {
                rewardWaiting = false
                return spinning + say(.reward, at: time)
            }
            if !noticesWaiting.isEmpty {
                return spinning + say(noticesWaiting.removeFirst(), at: time)
            }
            let next = nextFollowUp(at: time)
            if !next.isEmpty { return spinning + next }
            let rivals = tellRivals(at: time)
            if !rivals.isEmpty { return spinning + rivals }
            guard let waiting = pending else { return spinning + sayPageNotice(at: time) }
            pending = nil
            guard time - waiting.since <= configuration.pendingLifetime else { return spinning + sayPageNotice(at: time) }
            return spinning + say(waiting.event, waiting.detail, at: time)
        case let .ranging(event):
            return ranging(event, at: time)
        case .spinPeaked:
            return say(.spinStop, at: time)
        case let .notice(event):
            lastNotice = event
            // For the grown-up: it never cuts the child's find or reward short (it comes
            // after them, as a reward comes after the found line).
            if let current = speaking, current == .treasureFound || current == .reward || findOwed || rewardWaiting {
                if !noticesWaiting.contains(event) { noticesWaiting.append(event) }
                return []
            }
            return say(event, at: time)
        case .speakerFound:
            let said = say(.noticeSpeakerFound, at: time)
            guard startedHunt else {
                // The radio is not up yet (Bluetooth off, no adapter): the hunt has not begun,
                // so no start-up line or clue, but what the grown-up must fix, which went to
                // no speaker. Once the hunt starts, it says its own start as ever.
                if let notice = lastNotice, !noticesWaiting.contains(notice) { noticesWaiting.append(notice) }
                return said
            }
            if let step = progress?.current {
                followUps.removeAll { $0.event == .clue }
                followUps.insert(clue(step), at: 0)
            } else if !foundAnnounced {
                // No trail: the start-up line the child missed, after it.
                pending = (.startup, nil, time)
            }
            return said
        case .clueAsked:
            // The current step's clue, now, unless a line as important is being said (then
            // after it); nothing when there is no trail or it is done.
            guard let step = progress?.current else { return [] }
            let again = clue(step)
            // A find, its reward (said or due: a code being spelled), an out-of-order line are
            // never cut by a press: the clue follows them (docs/hunt.md).
            if rewardWaiting || speaking.map({ $0.precedence >= LineEvent.treasureFound.precedence }) == true {
                if !followUps.contains(where: { $0.event == .clue }) { followUps.append(again) }
                return []
            }
            followUps.removeAll { $0.event == .clue }
            return say(again.event, again.detail, at: time)
        }
    }

    /// Checks timers (found hold, the trail's other treasures, hints) without a new event.
    public mutating func tick(at time: Double) -> [HuntAction] {
        var actions = confirmExit(at: time) + confirmFar(at: time) + checkFound(at: time)
        guard var p = progress else { return actions + sayPageNotice(at: time) }
        if let since = awaitingRewardSince, time - since >= configuration.rewardWait { awaitingRewardSince = nil }
        // Another chest is news only once the find, its reward and the next clue are over,
        // and never cuts them (it stays due until then).
        let busy = speaking.map { $0.precedence >= LineEvent.treasureFound.precedence } ?? false
        let findings = busy || !followUps.isEmpty || awaitingRewardSince != nil || rewardWaiting ? [] : p.tick(at: time)
        progress = p
        for finding in findings {
            switch finding {
            case let .found(step):
                actions += find(step, at: time)
            case let .outOfOrder(at, expected):
                actions += say(.outOfOrder, LineDetail(step: at, treasure: at + 1, next: expected + 1), at: time)
                // Then the clue of the chest to find first, again.
                if !followUps.contains(where: { $0.event == .clue }) { followUps.append(clue(expected, unlessProgressSince: time)) }
            }
        }
        if speaking == nil { actions += nextFollowUp(at: time) }
        if speaking == nil { actions += tellRivals(at: time) }
        if speaking == nil { actions += sayPageNotice(at: time) }
        if speaking == nil, followUps.isEmpty, awaitingRewardSince == nil, let step = progress?.current,
            progress?.hintDue(at: time) == true, time - lastLineAt >= configuration.trendQuietAfterLine {
            progress?.hintGiven(at: time)
            actions += say(.hint, LineDetail(step: step, treasure: step + 1, text: configuration.trail[step].hint), at: time)
            // The hint, then: inside the step's region (its signal heard), a compass spin;
            // else the step's clue again.
            if configuration.spin, inside {
                followUps.append(FollowUp(event: .spin, detail: LineDetail(step: step, treasure: step + 1), unlessProgressSince: time))
            } else {
                followUps.append(clue(step, unlessProgressSince: time))
            }
        }
        return actions
    }

    /// `key` is a beacon of the region hunted now (without a trail the hunter only passes those).
    private func hunts(_ key: BeaconKey) -> Bool {
        guard progress != nil else { return true }
        return configuration.trail.first { $0.region.name == region }?.region.contains(key) ?? false
    }

    /// The clue that begins step `step`.
    private func clue(_ step: Int, unlessProgressSince since: Double? = nil) -> FollowUp {
        var detail = LineDetail(step: step, treasure: step + 1)
        switch configuration.trail[step].clue {
        case let .text(text)?: detail.text = text
        case let .recording(path)?: detail.recording = path
        case nil: break
        }
        return FollowUp(event: .clue, detail: detail, unlessProgressSince: since)
    }

    /// Other hunters' finds not told yet: one line per `rivalSpacing` at most (a flood of
    /// announcements must not make the hunt chatter, nor delay its own lines).
    public static let rivalSpacing = 10.0

    /// The rivals' news, when it may be said now: one find by name, several as a count.
    private mutating func tellRivals(at time: Double) -> [HuntAction] {
        guard let news = rivalNews, time - lastRivalLineAt >= Self.rivalSpacing else { return [] }
        if let current = speaking, current.precedence > LineEvent.rivalFound.precedence { return [] }
        // Never ahead of the hunt's own next line (a clue, the finale).
        if speaking == nil, !followUps.isEmpty, awaitingRewardSince == nil, !rewardWaiting { return [] }
        rivalNews = nil
        lastRivalLineAt = time
        if news.count == 1 { return say(.rivalFound, news.latest, at: time) }
        return say(.rivalsFound, LineDetail(count: news.count), at: time)
    }

    /// The next follow-up, once the last find's reward is said (or not coming).
    private mutating func nextFollowUp(at time: Double) -> [HuntAction] {
        followUps.removeAll { up in up.unlessProgressSince.map { (progress?.lastProgress ?? -.infinity) > $0 } ?? false }
        // A clue is only ever for the step hunted now: never one for a chest already found.
        followUps.removeAll { $0.event == .clue && $0.detail?.step != progress?.current }
        // A found line that waited behind a clue goes first, whatever the reward does.
        if let i = followUps.firstIndex(where: { $0.event == .treasureFound }) {
            let found = followUps.remove(at: i)
            return say(found.event, found.detail, at: time)
        }
        guard awaitingRewardSince == nil, !rewardWaiting, !followUps.isEmpty else { return [] }
        let next = followUps.removeFirst()
        return say(next.event, next.detail, at: time)
    }

    /// Step `step` of the trail is found: its found line, then (after the reward) the next
    /// clue or the finale; the next step's region is hunted from now on.
    private mutating func find(_ step: Int, at time: Double) -> [HuntAction] {
        guard var p = progress else { return [] }
        let next = p.markFound(step, at: time)
        progress = p
        guard next != .alreadyFound else { return [] }
        findCount += 1
        lastFoundStep = step
        awaitingRewardSince = time
        let foundDetail = LineDetail(step: step, treasure: step + 1, text: configuration.trail[step].found)
        var actions: [HuntAction]
        if let current = speaking, current.precedence > LineEvent.treasureFound.precedence {
            // Behind a clue (a child at chest 1 while clue 1 is said): after it, never lost.
            pending = nil
            followUps.insert(FollowUp(event: .treasureFound, detail: foundDetail), at: 0)
            actions = [.found(step: step)]
        } else {
            actions = say(.treasureFound, foundDetail, at: time) + [.found(step: step)]
        }
        // What was still to be said for the step now found (its clue again, the compass spin
        // its hint asked for) is about nothing any more.
        followUps.removeAll { ($0.event == .clue || $0.event == .spin) && $0.detail?.step == step }
        switch next {
        case let .step(n):
            followUps.append(clue(n))
            if region != configuration.trail[n].region.name { retarget(n) }
        case let .finished(seconds):
            followUps.append(FollowUp(event: .finale, detail: LineDetail(seconds: seconds)))
        case .alreadyFound:
            break
        }
        return actions
    }

    /// The director hunts step `step`'s region from now on, starting from what the trail
    /// already knows of it.
    private mutating func retarget(_ step: Int) {
        guard let known = progress?.region(of: step) else { return }
        region = configuration.trail[step].region.name
        inside = known.inside
        exitSince = nil
        farSince = nil
        saidProximity = known.proximity
        immediateUnsaid = nil
        immediateSince = known.proximity == .immediate ? known.immediateSince : nil
        foundAnnounced = false
        classes = [:]
        nearestRanges = []
        // What the trail knew of the step's region: its nearest beacon's class (since when
        // it is immediate; otherwise the time only orders the memory).
        if let key = known.nearest {
            remember(key, known.proximity, at: known.immediateSince ?? 0)
            classes[key]?.rate = known.rate
        }
    }

    /// The trail is done (its finale said or due): its last chest is news no more (no region,
    /// class or trend line; a child walking off heard "still far away" and "walk back the way
    /// you came" about it).
    private var trailDone: Bool { progress?.isFinished == true }

    private mutating func ranging(_ event: RangingEvent, at time: Double) -> [HuntAction] {
        progress?.observe(event, at: time)
        if trailDone { return [] }
        let region = self.region
        switch event {
        case let .regionState(_, name, state) where name == region:
            if state == .inside { return inRegion(at: time) }
            // An engine started over (a reload of its thresholds) that hears nothing of the
            // region says so as its first state: an exit like any other (it says no exit for a
            // region it never saw inside), or the hunt stayed inside for good.
            guard state == .outside, inside, exitSince == nil else { return [] }
            exitSince = time
            return confirmExit(at: time)
        case let .regionEnter(_, name) where name == region:
            return inRegion(at: time)
        case let .regionExit(_, name) where name == region:
            guard inside, exitSince == nil else { return [] }
            // No find while the region is left (`checkFound`); the rest waits for the
            // confirmation. Undone, the classes the engine still holds stand (it says no new
            // class for a beacon it did not lose: a child at the chest is found after all).
            exitSince = time
            return confirmExit(at: time)
        case let .range(report) where hunts(report.key):
            // The range of a beacon with a class, for the far confirmation's edge.
            if classes[report.key] != nil {
                classes[report.key]?.meters = report.distance?.meters
                classes[report.key]?.rate = report.readingRate
            }
            let nearest = nearestRange
            if let nearest { noteNearestRange(nearest, at: time) }
            guard farSince != nil else { return [] }
            if isBeyondFarEdges(nearest) {
                if farBeyondSince == nil { farBeyondSince = time }
            } else {
                farBeyondSince = nil
            }
            return confirmFar(at: time)
        case .closerArrival where progress == nil && inside && foundAnnounced && saidProximity == .immediate:
            // Found, and since then much nearer still: the find was short of the chest (a
            // tag advertising low, heard at a kind spot metres out). Said again here, where the
            // child now is, once it holds as a find does. (Without a trail every beacon of the
            // region is hunted; on a trail a find has moved the hunt on.)
            foundAnnounced = false
            immediateSince = time
            return checkFound(at: time)
        case let .proximity(_, key, _, _) where !hunts(key):
            // Another treasure of the trail: the trail watches it.
            return []
        case let .proximity(_, key, _, to) where !inside:
            remember(key, to, at: time)
            return []
        case let .proximity(_, key, _, to):
            remember(key, to, at: time)
            let closest = closestClass()
            if let before = immediateUnsaid, closest.proximity != .immediate {
                // Out of "immediate" before the find: the child heard the class before it.
                immediateUnsaid = nil
                immediateSince = nil
                saidProximity = before
            }
            guard closest.proximity != saidProximity else {
                // Back to the class said before a far was: neither is said.
                farSince = nil
                return []
            }
            if closest.proximity == .far, saidProximity == .near || saidProximity == .immediate {
                if farSince == nil {
                    farSince = time
                    farFrom = rangeBefore(time - Self.farReferenceGap)
                    farBeyondSince = isBeyondFarEdges(nearestRange) ? time : nil
                }
                return confirmFar(at: time)
            }
            farSince = nil
            return announce(closest.proximity, since: closest.since, at: time)
        case let .trend(_, name, trend) where name == region:
            guard inside, !foundAnnounced, speaking == nil, time - lastTrendAt >= configuration.trendInterval,
                time - lastLineAt >= configuration.trendQuietAfterLine
            else { return [] }
            lastTrendAt = time
            return say(trend == .warmer ? .warmer : .colder, at: time)
        default:
            return []
        }
    }

    /// The page's address, once: after the start-up line (or `pageNoticeWait` s without one),
    /// never over a line nor before the follow-ups (the first clue) or a waiting line.
    private mutating func sayPageNotice(at time: Double) -> [HuntAction] {
        guard let notice = pageNotice, let since = notice.dueSince, speaking == nil, pending == nil, followUps.isEmpty,
              startedHunt || time - since >= Self.pageNoticeWait else { return [] }
        pageNotice = (notice.detail, nil, notice.tries + 1)
        return say(.noticePage, notice.detail, at: time)
    }

    /// The region is inside (its state, or entered): back before an exit was said, neither
    /// is; else, when it was left, entered.
    private mutating func inRegion(at time: Double) -> [HuntAction] {
        if exitSince != nil {
            exitSince = nil
            return []
        }
        guard !inside else { return [] }
        return entered(at: time)
    }

    /// The exit, said once the region has stayed left `leftConfirmation` s.
    private mutating func confirmExit(at time: Double) -> [HuntAction] {
        if trailDone { return [] }
        guard let since = exitSince, time - since >= configuration.leftConfirmation else { return [] }
        exitSince = nil
        farSince = nil
        inside = false
        immediateSince = nil
        saidProximity = .unknown
        immediateUnsaid = nil
        classes = [:]
        nearestRanges = []
        // A proximity line still waiting is stale news now.
        if let p = pending, p.event.precedence <= LineEvent.proximityUnknown.precedence { pending = nil }
        return [.sound(configuration.regionSound)] + say(.regionLeft, at: time)
    }

    /// A move out to "far", said once the class has stayed far `farConfirmation` s.
    private mutating func confirmFar(at time: Double) -> [HuntAction] {
        if trailDone { return [] }
        guard let since = farSince, time - since >= configuration.farConfirmation else { return [] }
        // Still inside the edge, or back where it was before the move out: wait (the
        // confirmation stands) for the range to leave it, and to stay out.
        let nearest = nearestRange
        guard isBeyondFarEdges(nearest) else { return [] }
        if configuration.farRangeHold > 0, nearest != nil {
            guard let beyond = farBeyondSince, time - beyond >= configuration.farRangeHold else { return [] }
        }
        farSince = nil
        let closest = closestClass()
        guard inside, exitSince == nil, closest.proximity == .far, saidProximity != .far else { return [] }
        return announce(.far, since: closest.since, at: time)
    }

    /// The last range of the closest of the hunted region's beacons with one (m).
    private var nearestRange: Double? { classes.values.compactMap(\.meters).min() }

    /// Whether a nearest range is past the far's edges: the near edge, and the range before
    /// the move out times `farReturnRatio` (no range known: it is).
    private func isBeyondFarEdges(_ range: Double?) -> Bool {
        let nearest = range ?? .infinity
        if let edge = configuration.farEdge, nearest < edge { return false }
        if let ratio = configuration.farReturnRatio, let from = farFrom, nearest < from * ratio { return false }
        return true
    }

    private mutating func noteNearestRange(_ meters: Double, at time: Double) {
        var drop = 0
        while drop < nearestRanges.count
                && (time - nearestRanges[drop].time > Self.rangeMemorySpan || nearestRanges.count - drop >= Self.rangeMemory) {
            drop += 1
        }
        nearestRanges.removeFirst(drop)
        nearestRanges.append((time, meters))
    }

    /// The median nearest range heard up to `time` (within the memory); nil when none was.
    private func rangeBefore(_ time: Double) -> Double? {
        let ranges = nearestRanges.filter { $0.time <= time }.map(\.meters).sorted()
        guard !ranges.isEmpty else { return nil }
        return ranges[ranges.count / 2]
    }

    /// The closest class of the region's beacons (unknown when none has one), and since when
    /// a beacon has held it (the earliest of those holding it: "immediate" held is a find).
    private func closestClass() -> (proximity: Proximity, since: Double) {
        for p in Proximity.allCases where p != .unknown {
            let holding = classes.values.filter { $0.proximity == p }
            if let since = holding.map(\.since).min() { return (p, since) }
        }
        return (.unknown, 0)
    }

    /// The class said is now `to` (held since `since`): said, unless it is unknown.
    private mutating func announce(_ to: Proximity, since: Double, at time: Double) -> [HuntAction] {
        // With a find due, "immediate" has no line of its own: the find is its line.
        let findIsTheLine = to == .immediate && findIsDue
        if findIsTheLine { immediateUnsaid = saidProximity }
        // After the find "near" is no news: the child was told it is at the treasure, and a
        // child still standing there (the level in a fade, at hand released) would hear
        // "near" about the treasure just found. It still re-arms the find; "far" is said.
        let foundAlready = to == .near && foundAnnounced
        saidProximity = to
        if to == .immediate {
            immediateSince = since
        } else {
            immediateSince = nil
            if to != .unknown { foundAnnounced = false }
        }
        // "unknown" on its way out of the region is said by the exit line instead.
        if to == .unknown { return [] }
        return (findIsTheLine || foundAlready ? [] : say(.proximity(to), at: time)) + checkFound(at: time)
    }

    private mutating func remember(_ key: BeaconKey, _ proximity: Proximity, at time: Double) {
        guard proximity != .unknown else {
            classes[key] = nil
            return
        }
        // Full (made-up beacons of the region's UUID can fill it): the farthest class goes,
        // the one held longest among them. The one held longest of all is usually the
        // treasure's own, and with it gone the class said followed the made-up ones.
        if classes[key] == nil, classes.count >= Self.classMemory,
           let farthest = classes.max(by: { a, b in
               a.value.proximity != b.value.proximity ? a.value.proximity < b.value.proximity : a.value.since > b.value.since
           }) {
            classes[farthest.key] = nil
        }
        classes[key] = (proximity, time, classes[key]?.meters, classes[key]?.rate)
    }

    /// The region entered: the arrr and its line, then (when it is "immediate") the class
    /// the hunter already had.
    private mutating func entered(at time: Double) -> [HuntAction] {
        inside = true
        var actions = [HuntAction.sound(configuration.regionSound)] + say(.regionEntered, at: time)
        let early = closestClass()
        if early.proximity != .unknown {
            // The class is known from now on (its next change is said); only "at the
            // treasure" is news worth a line right after the enter line.
            saidProximity = early.proximity
            if early.proximity == .immediate {
                immediateSince = early.since
                // With a find due, the find is the line (`immediateUnsaid`).
                if findIsDue {
                    immediateUnsaid = .unknown
                } else {
                    actions += say(.proximityImmediate, at: time)
                }
            }
        }
        return actions
    }

    /// Whether "immediate" held would be a find now (inside, not leaving, not found yet,
    /// and on a trail a step left to find) and sooner than its line would end.
    private var findIsDue: Bool {
        configuration.foundHold < Self.immediateLineHold && inside && exitSince == nil && !foundAnnounced
            && (progress.map { $0.current != nil } ?? true)
    }

    /// A find held shorter than this (s, about the time a line takes) would cut the
    /// "immediate" line off: the find is the line. A longer hold keeps it ("Stop right
    /// there!", the child waits for the find).
    public static let immediateLineHold = 2.0

    /// How long "immediate" holds before it is a find: `foundHold`, or, when that is a short
    /// hold (under `immediateLineHold`), none while every beacon at immediate is slow
    /// (`slowReadingRate`) and `fastFoundHold` while one is fast (`fastReadingRate`).
    private var pendingFindHold: Double {
        configuration.findHold.hold(rates: classes.values.filter { $0.proximity == .immediate }.map(\.rate))
    }

    private mutating func checkFound(at time: Double) -> [HuntAction] {
        // `since + pendingFindHold`, as `nextDeadline` says it: `time - since` can round under the hold
        // at the very deadline (13.4 + 3 - 13.4 < 3), and the find would wait a tick more.
        guard inside, exitSince == nil, !foundAnnounced, let since = immediateSince, time >= since + pendingFindHold else { return [] }
        foundAnnounced = true
        immediateUnsaid = nil
        if let p = progress {
            // The trail's steps are found once each; a finished trail has nothing left.
            return p.current.map { find($0, at: time) } ?? []
        }
        findCount += 1
        if let current = speaking, current.precedence > LineEvent.treasureFound.precedence {
            // Behind a grown-ups' notice: after it, never lost (a waiting line goes stale
            // after `pendingLifetime`; the find is what the child came for), as a trail's.
            followUps.insert(FollowUp(event: .treasureFound, detail: nil), at: 0)
            return [.found(step: nil)]
        }
        return say(.treasureFound, at: time) + [.found(step: nil)]
    }

    /// The adapter gone or back: now, or owed until the more important line being said is
    /// over (as a waiting line it went stale after `pendingLifetime`, or a newer waiter took
    /// its place, and the child never heard the radio was gone, then heard it was back).
    private mutating func sayAdapterNews(_ event: LineEvent, at time: Double) -> [HuntAction] {
        noticesWaiting.removeAll { $0 == .adapterMissing || $0 == .adapterBack }
        if let current = speaking, event.precedence < current.precedence {
            noticesWaiting.append(event)
            return []
        }
        return say(event, at: time)
    }

    private mutating func say(_ event: LineEvent, _ detail: LineDetail? = nil, at time: Double) -> [HuntAction] {
        // A repeated find never cuts the reward short: the reward is what the child came for.
        if speaking == .reward, event == .treasureFound { return [] }
        if let current = speaking, event.precedence < current.precedence {
            // Wait behind the more important line (only the newest waiter is kept).
            if event.precedence > LineEvent.warmer.precedence { pending = (event, detail, time) }
            return []
        }
        let interrupt = speaking != nil
        if speaking == .noticePage, let cut = pageNotice, cut.tries < Self.pageNoticeTries {
            // The page's address cut short: again at the next quiet moment.
            pageNotice?.dueSince = time
        }
        speaking = event
        lastLineAt = time
        if event == .reward { awaitingRewardSince = nil }
        if let p = pending, p.event.precedence <= event.precedence { pending = nil }
        if let detail { return [.tell(event, detail, interrupt: interrupt)] }
        return [.say(event, interrupt: interrupt)]
    }
}
