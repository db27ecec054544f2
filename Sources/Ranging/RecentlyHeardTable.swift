/// A table that radio input grows (scan rows, names, rewards, beacons heard, hunters seen),
/// bounded: at most `capacity` entries. A new key beyond that evicts the least recently heard
/// entry, skipping protected keys (the hunted beacons) among the oldest few, and
/// `removeHeard(before:)` drops what has not been heard since a time. Every operation is O(1)
/// (eviction looks at no more than `protectionSearch` entries), so a street of phones with
/// random addresses costs the same per report as one beacon. Pure: time is passed in.
///
/// Its operations are `@inlinable` so that the client's `Key`/`Value` specialize them: through
/// the module boundary unspecialized, every call paid for generic metadata lookups and
/// witness calls (a third of `scan`'s CPU in a crowd, measured with perf).
public struct RecentlyHeardTable<Key: Hashable, Value> {
    @usableFromInline
    struct Node {
        @usableFromInline var key: Key
        @usableFromInline var value: Value
        @usableFromInline var heard: Double
        @usableFromInline var older: Int
        @usableFromInline var newer: Int

        @inlinable
        init(key: Key, value: Value, heard: Double, older: Int, newer: Int) {
            self.key = key
            self.value = value
            self.heard = heard
            self.older = older
            self.newer = newer
        }
    }

    public let capacity: Int
    /// A new key evicts the oldest entry that `protecting` (given with the new key) does not
    /// name, among the oldest `protectionSearch`.
    public static var protectionSearch: Int { 16 }
    /// Entries evicted for room so far (strangers crowding in).
    @inlinable public var evictions: Int { evictionCount }
    @usableFromInline var evictionCount = 0

    @usableFromInline var nodes: [Node] = []
    @usableFromInline var freeSlots: [Int] = []
    @usableFromInline var slots: [Key: Int] = [:]
    @usableFromInline var oldest = -1
    @usableFromInline var newest = -1

    @inlinable
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        slots.reserveCapacity(self.capacity)
    }

    @inlinable
    public var count: Int { slots.count }
    @inlinable
    public var isEmpty: Bool { slots.isEmpty }

    @inlinable
    public subscript(key: Key) -> Value? {
        slots[key].map { nodes[$0].value }
    }

    /// The least recently heard key.
    @inlinable
    public var oldestKey: Key? { oldest >= 0 ? nodes[oldest].key : nil }

    /// When `key` was last heard.
    @inlinable
    public func heard(_ key: Key) -> Double? {
        slots[key].map { nodes[$0].heard }
    }

    /// Sets `key` to `value`, heard at `time` (it becomes the most recent); when that needs
    /// room, the keys `protecting` names are passed over (the hunted beacons).
    @inlinable
    public mutating func set(_ key: Key, _ value: Value, at time: Double, protecting: (Key) -> Bool = { _ in false }) {
        if let slot = slots[key] {
            nodes[slot].value = value
            nodes[slot].heard = time
            moveToNewest(slot)
            return
        }
        if slots.count >= capacity { evictOne(protecting) }
        let node = Node(key: key, value: value, heard: time, older: newest, newer: -1)
        let slot: Int
        if let reused = freeSlots.popLast() {
            nodes[reused] = node
            slot = reused
        } else {
            nodes.append(node)
            slot = nodes.count - 1
        }
        if newest >= 0 { nodes[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
        slots[key] = slot
    }

    /// Changes the value of `key` in place (heard again at `time`), inserting `make()` first
    /// when it is new.
    @inlinable
    public mutating func update(
        _ key: Key, at time: Double, protecting: (Key) -> Bool = { _ in false }, default make: () -> Value, _ change: (inout Value) -> Void
    ) {
        if let slot = slots[key] {
            change(&nodes[slot].value)
            nodes[slot].heard = time
            moveToNewest(slot)
            return
        }
        var value = make()
        change(&value)
        set(key, value, at: time, protecting: protecting)
    }

    /// Changes the value of `key` without counting it as heard; nothing when it is absent.
    @inlinable
    public mutating func modify(_ key: Key, _ change: (inout Value) -> Void) {
        guard let slot = slots[key] else { return }
        change(&nodes[slot].value)
    }

    @inlinable @discardableResult
    public mutating func remove(_ key: Key) -> Value? {
        guard let slot = slots.removeValue(forKey: key) else { return nil }
        unlink(slot)
        freeSlots.append(slot)
        return nodes[slot].value
    }

    /// Drops every entry not heard since `time`, oldest first; O(what is dropped).
    @inlinable
    public mutating func removeHeard(before time: Double) {
        while oldest >= 0, nodes[oldest].heard < time {
            remove(nodes[oldest].key)
        }
    }

    /// The entries, most recently heard first.
    @inlinable
    public var entries: [(key: Key, value: Value, heard: Double)] {
        var out: [(key: Key, value: Value, heard: Double)] = []
        out.reserveCapacity(count)
        var slot = newest
        while slot >= 0 {
            out.append((nodes[slot].key, nodes[slot].value, nodes[slot].heard))
            slot = nodes[slot].older
        }
        return out
    }

    @inlinable
    mutating func evictOne(_ isProtected: (Key) -> Bool) {
        var slot = oldest
        var looked = 0
        while slot >= 0, looked < Self.protectionSearch, isProtected(nodes[slot].key) {
            slot = nodes[slot].newer
            looked += 1
        }
        // Only protected keys among the oldest: protection cannot hold the bound, the oldest goes.
        if slot < 0 || looked == Self.protectionSearch { slot = oldest }
        guard slot >= 0 else { return }
        evictionCount += 1
        remove(nodes[slot].key)
    }

    @inlinable
    mutating func unlink(_ slot: Int) {
        let older = nodes[slot].older, newer = nodes[slot].newer
        if older >= 0 { nodes[older].newer = newer } else { oldest = newer }
        if newer >= 0 { nodes[newer].older = older } else { newest = older }
        nodes[slot].older = -1
        nodes[slot].newer = -1
    }

    @inlinable
    mutating func moveToNewest(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        nodes[slot].older = newest
        if newest >= 0 { nodes[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }
}

extension RecentlyHeardTable: Sendable where Key: Sendable, Value: Sendable {}
extension RecentlyHeardTable.Node: Sendable where Key: Sendable, Value: Sendable {}
