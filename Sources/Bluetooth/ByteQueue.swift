/// Bytes that arrive in pieces and leave from the front in whole units (packets, records).
/// Consumed bytes are dropped lazily, when they are at least half the storage, so each byte
/// is moved at most about once.
struct ByteQueue: Sendable {
    private var storage: [UInt8] = []
    private var start = 0

    /// The bytes not yet consumed.
    var pending: ArraySlice<UInt8> { storage[start...] }
    var count: Int { storage.count - start }

    mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        if start > 0 && start >= storage.count / 2 {
            storage.removeFirst(start)
            start = 0
        }
        storage.append(contentsOf: bytes)
    }

    /// Drops `n` bytes from the front (n <= count).
    mutating func consume(_ n: Int) {
        start += n
        if start >= storage.count { removeAll() }
    }

    mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
        start = 0
    }
}
