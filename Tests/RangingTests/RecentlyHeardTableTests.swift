import Ranging
import Testing

@Suite struct RecentlyHeardTableTests {
    @Test func aStreetOfNewAddressesKeepsTheTableBoundedAndTheHuntedBeaconIn() {
        var table = RecentlyHeardTable<Int, String>(capacity: 100)
        table.set(7, "treasure", at: 0)
        for n in 1000..<201_000 { table.set(n, "stranger", at: Double(n) / 2000) { $0 == 7 } }
        #expect(table.count == 100)
        #expect(table[7] == "treasure", "the hunted beacon survives 200,000 strangers")
        #expect(table.evictions == 200_000 - 99)
        #expect(table[200_999] == "stranger" && table[1000] == nil)
    }

    @Test func leastRecentlyHeardGoesFirstAndHearingAgainRenews() {
        var table = RecentlyHeardTable<String, Int>(capacity: 3)
        table.set("a", 1, at: 0)
        table.set("b", 2, at: 1)
        table.set("c", 3, at: 2)
        table.update("a", at: 3, default: { 0 }) { $0 += 10 }
        table.set("d", 4, at: 4)
        #expect(table["b"] == nil, "b was heard least recently")
        #expect(table.entries.map(\.key) == ["d", "a", "c"])
        #expect(table["a"] == 11)
        #expect(table.heard("a") == 3)
    }

    @Test func staleEntriesAgeOut() {
        var table = RecentlyHeardTable<Int, Int>(capacity: 10)
        for n in 0..<10 { table.set(n, n, at: Double(n)) }
        table.set(3, 30, at: 20)
        table.removeHeard(before: 5)
        #expect(table.entries.map(\.key).sorted() == [3, 5, 6, 7, 8, 9])
        table.modify(9) { $0 = 99 }
        #expect(table[9] == 99 && table.heard(9) == 9, "modify does not count as heard")
        #expect(table.remove(9) == 99 && table.count == 5)
        // Slots are reused: the table stays bounded after churn.
        for n in 100..<1000 { table.set(n, n, at: Double(n)) }
        #expect(table.count == 10)
    }

    @Test func onlyProtectedKeysCannotHoldTheBound() {
        var table = RecentlyHeardTable<Int, Int>(capacity: 20)
        for n in 0..<1000 { table.set(n, n, at: Double(n)) { _ in true } }
        #expect(table.count == 20)
    }
}
