/// One beacon heard in one advertising report, at a time given by the caller.
public struct BeaconSighting: Equatable, Sendable {
    /// Seconds on the caller's clock (monotonic, or a capture's own timestamps).
    public var time: Double
    public var address: BDAddress
    public var addressType: UInt8
    /// dBm; nil when the controller reported "not available" (127).
    public var rssi: Int8?
    public var beacon: Beacon
    public var report: AdvertisingReport.Format

    public init(time: Double, address: BDAddress, addressType: UInt8, rssi: Int8?, beacon: Beacon, report: AdvertisingReport.Format) {
        self.time = time
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.beacon = beacon
        self.report = report
    }

    /// Every beacon in every report of an event (none for anything but advertising reports:
    /// a command whose bytes happen to contain a beacon prefix is never a sighting).
    public static func all(in event: HCIEvent, at time: Double) -> [BeaconSighting] {
        guard case let .advertisingReports(reports) = event else { return [] }
        var out: [BeaconSighting] = []
        for report in reports {
            for beacon in report.beacons {
                out.append(
                    BeaconSighting(
                        time: time, address: report.address, addressType: report.addressType, rssi: report.rssi,
                        beacon: beacon, report: report.format))
            }
        }
        return out
    }
}
