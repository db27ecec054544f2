import Game
import Testing

/// `fixed`, the tables' numbers (`scan`'s distance and ±, `replay`'s times).
@Suite struct FixedNumberTests {
    @Test func placesSignAndRounding() {
        #expect(fixed(2.66, decimals: 3) == "2.660")
        #expect(fixed(-0.5, decimals: 3) == "-0.500")
        #expect(fixed(-0.04, decimals: 1) == "0.0")
        #expect(fixed(12.96, decimals: 1) == "13.0")
        #expect(fixed(7, decimals: 0) == "7")
        #expect(fixed(.nan, decimals: 1) == "-")
    }

    /// A path-loss exponent of 0.5 (the settings allow 0.5-10) and a beacon advertising
    /// -20 dBm heard at -110: a range of 1e18 m, whose tenths an Int cannot hold (it trapped).
    @Test func aRangeAnIntCannotHoldIsPrintedNotTrappedOn() {
        #expect(fixed(1e18, decimals: 1) == ">1e12")
        #expect(fixed(-3e19, decimals: 1) == "<-1e12")
        #expect(fixed(999_999_999_999, decimals: 1) == "999999999999.0")
        #expect(fixed(1.5, decimals: 40) == "1.500000")
        #expect(fixed(123_456.5, decimals: 9) == "123456.500000")
        #expect(fixed(999_999_999_999, decimals: 9).hasPrefix("999999999999."))
        #expect(fixed(1.5, decimals: -2) == "2")
    }
}
