import Bluetooth
import FoundationEssentials
import ParentPage
import Ranging
import Testing

struct TagsInViewTests {
    static let uuid = UUID(uuidString: "50495241-5445-2D48-554E-544552000000") ?? UUID()

    static func sighting(minor: UInt16, rssi: Int, at t: Double, power: Int8 = -59) -> BeaconSighting {
        let beacon = IBeacon(uuid: uuid, major: 1, minor: minor, measuredPower: power)
        return BeaconSighting(time: t, address: BDAddress(bytes: (UInt8(truncatingIfNeeded: minor), 1, 2, 3, 4, 5)), addressType: 0, rssi: Int8(rssi), beacon: .iBeacon(beacon), report: .legacy)
    }

    @Test func strongestFirstAndTheOneHeldAgainstThePi() {
        var tags = TagsInView()
        for i in 0..<40 {
            let t = Double(i) * 0.1
            tags.heard(Self.sighting(minor: 1, rssi: -75, at: t))
            tags.heard(Self.sighting(minor: 2, rssi: -40, at: t + 0.01))
            tags.heard(Self.sighting(minor: 3, rssi: -60, at: t + 0.02))
        }
        tags.advance(to: 4.5)
        #expect(tags.strongestFirst().map { $0.key.minor } == [2, 3, 1])
        guard case let .tag(nearest) = tags.nearest() else { Issue.record("no nearest"); return }
        #expect(nearest.key.minor == 2)
        #expect(tags.calibration("50495241-5445-2D48-554E-544552000000:1:3").map { abs(Int($0) + 60) <= 2 } == true)
    }

    @Test func twoAsLoudAreNotClearAndFewPacketsDoNotCalibrate() {
        var tags = TagsInView()
        for i in 0..<10 {
            tags.heard(Self.sighting(minor: 1, rssi: -45, at: Double(i) * 0.1))
            tags.heard(Self.sighting(minor: 2, rssi: -48, at: Double(i) * 0.1 + 0.01))
        }
        tags.advance(to: 1.5)
        #expect(tags.nearest() == .unclear)
        #expect(tags.calibration("50495241-5445-2D48-554E-544552000000:1:1") == nil)
        // A tag 1 m away is not "against the Pi".
        var far = TagsInView()
        for i in 0..<30 { far.heard(Self.sighting(minor: 1, rssi: -62, at: Double(i) * 0.1)) }
        far.advance(to: 3.5)
        #expect(far.nearest() == .unclear)
    }

    @Test func aStreetOfPhonesIsBoundedAndForgotten() {
        var tags = TagsInView()
        for i in 0..<500 { tags.heard(Self.sighting(minor: UInt16(i), rssi: -70, at: Double(i) * 0.01)) }
        #expect(tags.strongestFirst().count == TagsInView.capacity)
        tags.advance(to: 5 + TagsInView.forgetAfter + 1)
        #expect(tags.strongestFirst().isEmpty)
    }

    @Test func aCalibrationIsUsedForDistanceAndShown() {
        let key = BeaconKey(uuid: Self.uuid, major: 1, minor: 1)
        var tags = TagsInView(calibrations: [key: -70])
        for i in 0..<30 { tags.heard(Self.sighting(minor: 1, rssi: -70, at: Double(i) * 0.1)) }
        tags.advance(to: 3.5)
        let tag = tags.strongestFirst().first
        #expect(tag?.calibratedPower == -70)
        #expect(tag?.distance.map { abs($0.meters - 1) < 0.5 } == true)
        // Its ± is the calibrated room's: narrower than an uncalibrated tag's at the same level.
        var plain = TagsInView()
        for i in 0..<30 { plain.heard(Self.sighting(minor: 1, rssi: -70, at: Double(i) * 0.1)) }
        plain.advance(to: 3.5)
        let calibratedSigma = tag?.distance?.logSigma ?? .infinity, plainSigma = plain.strongestFirst().first?.distance?.logSigma ?? 0
        #expect(calibratedSigma < plainSigma * 0.6)
        // Calibrated on the page later: the next packets' ± narrows too.
        plain.calibrations[key] = -59
        for i in 30..<60 { plain.heard(Self.sighting(minor: 1, rssi: -70, at: Double(i) * 0.1)) }
        plain.advance(to: 6.5)
        #expect(plain.strongestFirst().first.map { abs(($0.distance?.logSigma ?? 0) - calibratedSigma) < 0.05 } == true)
    }

    @Test func theLiveViewsJSONParses() throws {
        var tags = TagsInView(names: [BeaconKey(uuid: Self.uuid, major: 1, minor: 1): "Kitchen \"<b>\""])
        for i in 0..<25 { tags.heard(Self.sighting(minor: 1, rssi: -60, at: Double(i) * 0.1)) }
        tags.advance(to: 3)
        let text = tags.strongestFirst().map { $0.json(now: 3) }.joined()
        let doc = try JSONDocument(parsing: Array(text.utf8))
        #expect(doc["name"]?.stringValue == "Kitchen \"<b>\"" && !text.contains("<"))
        #expect(doc["id"]?.stringValue == "50495241-5445-2D48-554E-544552000000:1:1")
        #expect(doc["rssi"]?.numberValue == -60 && doc["power"]?.numberValue == -59 && doc["level"]?.numberValue != nil)
    }

    @Test func textFromTheAirIsEscapedOnThePage() {
        var tags = TagsInView(names: [BeaconKey(uuid: Self.uuid, major: 1, minor: 1): "<script>alert(1)</script>"])
        tags.heard(Self.sighting(minor: 1, rssi: -60, at: 0))
        let page = Pages.tags(tags.strongestFirst(), nearest: nil, message: "\"><img src=x>", now: 1, Pages.Chrome(csrf: "t\"x"))
        #expect(!page.contains("<script>alert") && page.contains("&lt;script&gt;"))
        #expect(!page.contains("<img src=x>") && !page.contains("value=\"t\"x\""))
    }
}
