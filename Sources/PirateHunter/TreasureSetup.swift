import Bluetooth
import Game
import GameKey
import Hunt
import Radio
import Ranging

/// What the treasure box runs with, once configuration and flags are resolved.
struct TreasureSetup {
    var transport: TransportSpec = .kernel(adapter: nil)
    var treasure = HunterConfiguration.Treasure()
    /// The trail of the same file (`hunt.trail`): which chest of it this box is, and which
    /// treasures other hunters' announcements name (for the standings).
    var trail: [TrailStep] = []
    var ranging = RangingConfiguration.default
    var json = false
    var record: String?
    /// Draw the kiosk screen (stdout is a terminal); otherwise one log line per change.
    var kiosk = false
    /// Prefix of log lines (the demo runs a hunter and a box in one process).
    var logPrefix = ""
    /// The runtime's reload and resize are the box's (false in the demo: they are the hunter's).
    var ownsSignals = true
    /// Stop by itself after this many seconds; nil runs until a signal.
    var duration: Double?
    /// Reloads what SIGHUP reloads (ids, reward: advertised again); nil ignores SIGHUP.
    var reload: (() throws(CLIError) -> TreasureSetup)?
    /// The game key (`game.key`); nil: unpaired (no finder believed, no reward sent).
    var key: GameKey?
    /// `game.hunters`: the only hunter ids greeted; nil: any whose announcement verifies.
    var roster: Set<UInt16>?
    /// The box's page (`web`; off in the demo, where the hunter's is the page) and its file.
    var web = HunterConfiguration.Web()
    var file: String?

    /// The game's part: what `TreasureBoxCore` runs with.
    var game: TreasureBoxCore.Configuration {
        TreasureBoxCore.Configuration(
            beacon: treasure.beacon, intervalMilliseconds: treasure.intervalMilliseconds, reward: treasure.reward, trail: trail,
            ranging: ranging, roster: roster)
    }

    /// The treasure's advertisement: its iBeacon, and (paired, with a reward) a scan response
    /// that waits for a hunter's verified announcement, when the core seals the reward for it.
    /// Unpaired, the reward is never sent.
    func advertisement() throws(CLIError) -> Advertisement {
        let beacon = treasure.beacon
        var response: [UInt8] = []
        if let reward = treasure.reward {
            guard reward.utf8.count <= GameSignals.maximumSealedRewardBytes else {
                throw CLIError(.config, "treasure.reward: \(reward.utf8.count) bytes, at most \(GameSignals.maximumSealedRewardBytes) fit a sealed scan response")
            }
            if key != nil { response = GameSignals.waitingScanResponse }
        }
        return Advertisement(data: beacon.advertisingData, scanResponse: response, intervalUnits: treasure.intervalUnits)
    }
}

/// What both appliances open at start (the controller, the parent's page, the capture): a
/// reload (SIGHUP) applies the rest of a changed file and names these in its log line.
protocol OpenedAtStart {
    var transport: TransportSpec { get }
    var web: HunterConfiguration.Web { get }
    var record: String? { get }
}

extension OpenedAtStart {
    /// What of `next` waits for a restart, as the reload's log line names it.
    func waitingForRestart(in next: Self) -> [String] {
        [(next.transport != transport, "transport (the controller is opened at start)"),
         (next.web != web, "web (the parent's page is opened at start)"),
         (next.record != record, "record (the capture is opened at start)")].filter(\.0).map(\.1)
    }

    /// The reload's log line's end: "; not until a restart: ..." (nothing when all applied).
    static func notUntilRestart(_ waiting: [String]) -> String {
        waiting.isEmpty ? "" : "; not until a restart: " + waiting.joined(separator: ", ")
    }
}

extension TreasureSetup: OpenedAtStart {}
extension HunterSetup: OpenedAtStart {}
