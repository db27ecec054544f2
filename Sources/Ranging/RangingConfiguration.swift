/// Every threshold of the ranging engine, in one value. Defaults and the reason for each
/// are documented in docs/ranging.md; change them here and there together.
public struct RangingConfiguration: Sendable, Equatable {
    // MARK: RSSI filter (KalmanRSSIFilter)
    /// Random-walk process noise of the RSSI level, dB² per second of real time.
    /// Small: the level averages long while it is steady; real changes are found by the
    /// change-point test below, which re-centres the level within about a second.
    public var processNoise: Double = 0.05
    /// Variance of one RSSI reading around the level, dB²: 5.7 dB Gaussian spread plus the
    /// ±5 dB spread of the three advertising channels (5.7² + 5²·2/3 ≈ 49).
    public var measurementNoise: Double = 49.0
    /// Innovations beyond this many standard deviations are clipped (one wild packet moves
    /// the level by a bounded amount).
    public var innovationGate: Double = 3.0
    /// RSSI readings outside this range are impossible and dropped (127 = not available,
    /// 0 and above are not real scanner readings).
    public var plausibleRSSI: ClosedRange<Int> = -110 ... -1

    // MARK: Distance (LogDistanceModel)
    /// Path-loss exponent. Leave-one-position-out on the shared lcav real data
    /// (`swift run -c release RangingBenchmark --real`, docs/ranging.md): an exponent fitted
    /// on four positions scores worse on the fifth (median |ln| 0.975) than 2.0 (0.916), so
    /// the textbook value is kept.
    public var pathLossExponent: Double = 2.0
    /// Spread of real rooms around the model (shadowing, bodies, calibration), dB: the 68th
    /// percentile of the |error| on the same data at exponent 2, so the 68 % interval covers
    /// 68 % (68.3 % out of sample).
    public var environmentSigma: Double = 13.3
    /// The same spread for a beacon whose power was measured in this room at 1 m (the
    /// set-up's calibration: `RangingEngine.calibratedBeacons`), dB: on the same data, each
    /// beacon calibrated at one position and scored at another, the 68 % half-width from the
    /// other positions' pairs (67.9 % out of sample; docs/ranging.md, "Calibrated at one place").
    public var calibratedEnvironmentSigma: Double = 6.3
    /// Measured power (RSSI at 1 m) outside this range gives no distance.
    public var plausibleMeasuredPower: ClosedRange<Int> = -100 ... -20

    // MARK: Proximity (ProximityClassifier)
    /// immediate < `immediateEdge` <= near < `nearEdge` <= far (metres).
    public var immediateEdge: Double = 0.5
    public var nearEdge: Double = 3.0
    /// Leaving a class needs the path loss beyond its edge by this much, dB.
    public var proximityHysteresis: Double = 3.0
    /// A new class must hold this long (seconds) before it is committed.
    public var proximityDwell: Double = 1.5
    /// Packets needed before a newly seen beacon gets its first class.
    public var proximityMinimumPackets: Int = 3
    /// At hand (AtHandDetector: a child standing at the treasure, the hunter at chest height
    /// over it, ~1 m) is immediate: the mean path loss of the last `atHandWindow` s below the
    /// model's loss at `atHandEdge` m (room for a tag's power error) ...
    public var atHandEdge: Double = 2.0
    public var atHandWindow: Double = 2.0
    /// ... and at least this much (dB) below the least loss of the last minute (an arrival).
    public var arrivalMargin: Double = 8.0
    /// While at hand, a level this much (dB) below the one at hand was found at, held as long
    /// as a find's confirmation, is a new arrival (`AtHandDetector.renewals`): the first was
    /// short of the treasure (a tag advertising low, read at a kind spot metres out) and the
    /// find is said again where the child now stands. 0: never.
    public var atHandRenewal: Double = 8.0

    // MARK: Silence (beacon lost, region exit; see ArrivalStatistics)
    /// The silence limits are set so that a source still present, losing packets the way it
    /// was seen to lose them, is declared gone at most this often: a region exit (fast) ...
    public var falseExitsPerHour: Double = 0.5
    /// ... and a beacon lost, proximity "unknown" (same model, a stricter budget).
    public var falseUnknownsPerHour: Double = 0.1
    /// Bounds of the adaptive silence limit, seconds.
    public var minimumSilence: Double = 3.0
    public var maximumSilence: Double = 60.0

    // MARK: Regions (RegionMonitor)
    /// Enter needs `enterPackets` within `enterWindow` seconds ...
    public var enterPackets: Int = 2
    public var enterWindow: Double = 1.5
    /// ... and `confirmPackets` within `confirmWindow` (3 in 3 s: a 1 Hz beacon still
    /// enters in ~2 s, two stray packets do not).
    public var confirmPackets: Int = 3
    public var confirmWindow: Double = 3.0
    /// Without an enter by this long after start, the initial state is "outside".
    public var initialStateTimeout: Double = 4.0

    // MARK: Nearest (NearestBeaconSelector)
    /// A challenger must have this much less path loss (dB) ...
    public var nearestMargin: Double = 2.0
    /// ... for this long (s) before it becomes the nearest.
    public var nearestDwell: Double = 2.0

    // MARK: Trend (TrendDetector)
    /// Slope of the nearest beacon's filtered RSSI over this window (s) ...
    public var trendWindow: Double = 15.0
    /// ... must be significant (slope / its standard error >= `TrendDetector.significance`,
    /// 4: two-sided false-alarm probability 6e-5 per look) ...
    /// ... and at least this many standard errors from flat (`TrendDetector.significance`;
    /// docs/ranging.md, "Warmer and colder from motion": lower buys recall with false lines) ...
    public var trendSignificance: Double = 4.0
    /// ... and not a step: one jump between two flat levels must not fit the window better than
    /// the line by this many reading variances of squared residual (0: refused as soon as it
    /// fits as well) ...
    public var trendStepMargin: Double = 3.0
    /// ... in full from this many readings in the window, in proportion below.
    public var trendStepMarginReadings: Int = 30
    /// "Colder"'s own z and step margin (a body turning in front makes the level fall at once).
    public var trendColderSignificance: Double = 6.0
    public var trendColderStepMargin: Double = 0
    /// "Warmer" also at this z when the slope is at least `trendSteepSlope` (dB/s): a 1-2 Hz
    /// beacon's 10-20 packets seldom reach z 4, and a walk close by is steep.
    public var trendSteepSignificance: Double = 3.5
    public var trendSteepSlope: Double = 1.5
    /// ... and at least this steep (dB/s) ...
    public var trendSlope: Double = 0.75
    /// The trend tests and at hand count at most this many readings a second as independent
    /// evidence (a window's readings beyond it widen its standard errors instead of
    /// narrowing them).
    /// Packets a few tens of milliseconds apart share the body, the wall and the spot of the
    /// field they were heard through: a 20 Hz tag (a Bluetooth 5 advertiser) heard 6.0 false
    /// lines an hour on the held-out walks against 4.6 at 10 Hz, its tests twice as sure of
    /// the same walk. 10: every tag of the rates (1-10 Hz) is judged as before.
    public var independentReadingRate: Double = 10
    /// Beacons of one region whose path losses lie within this many dB of each other share
    /// their evidence (0: never): each one's at hand hears the others' packets too (their
    /// power errors averaged, not one chance per beacon to be fooled), and the region's trend
    /// hears them mapped onto the followed beacon's level. Two or three tags in one chest
    /// lie within their power errors (±4 dB each); tags at different spots a child walks
    /// between differ by more wherever one of them is near.
    public var regionPoolingGate: Double = 8
    /// ... and a beacon's readings join the trend only while its level lies within this many
    /// dB of the followed one's by their usual offset (a body or a wall in front of one of
    /// them only, or beacons that do not lie together after all).
    public var regionPoolingDeviation: Double = 4
    /// "Warmer" also from the rise test (`RiseTest`): the last 3 s this many standard errors
    /// above 10-20 s ago (infinity: the test is off) ...
    public var trendRiseSignificance: Double = 3.5
    /// ... and `trendRiseRecentSignificance` above 3-13 s ago, on a 15 s climb of at least
    /// `trendRiseSlope` dB/s.
    public var trendRiseRecentSignificance: Double = 2.5
    public var trendRiseSlope: Double = 0.9
    /// ... and above 20-30 s ago by this many (-infinity: not asked; a body that passed).
    public var trendRiseOldSignificance: Double = 2.0
    public var trendSlopeOldSignificance: Double = 2.0
    /// No "warmer" for this long (s) after the filter saw a fall of the level undone (a body
    /// that passed, a turn away and back: `KalmanRSSIFilter.lastDipUndone`); 0: no such wait.
    public var trendDipMemory: Double = 10.0
    /// No "colder" across a silence longer than this many of the readings' median intervals
    /// (and a second) in the trend's window (infinity: never refused): a body stepping
    /// between in a loss burst is a step nobody heard. Standing still with bodies and loss
    /// bursts (tuning family) the 10 Hz rows' colder lines went 0.33 and 0.53 an hour → 0.07
    /// and 0, the walks' true "colder" lines 125 → 122.
    public var trendColderGapFactor: Double = 30
    /// ... and a reversal (warmer after colder or back) this many times steeper.
    public var trendReversalFactor: Double = 1.5
    /// At most one trend event per this many seconds per region.
    public var trendMinimumInterval: Double = 4.0

    // MARK: Output
    /// At most one range event per beacon per this many seconds.
    public var rangeInterval: Double = 1.0

    public init() {}

    public static let `default` = RangingConfiguration()
}
