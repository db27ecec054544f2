import Bluetooth
import CBlueZ
import Foundation
import Glibc
import Synchronization
import Testing

@testable import Radio

/// SOCK_STREAM for the tests of this target, named where Glibc's enum is seen reliably (a
/// clean build once lost it in another file of the same compile batch).
let streamSocketType = Int32(SOCK_STREAM.rawValue)

/// A connected pair of non-blocking unix stream sockets, closed at the end of the test.
private final class SocketPair {
    let a: FileDescriptor
    let b: FileDescriptor
    init() throws {
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        a = FileDescriptor(rawValue: fds[0])
        b = FileDescriptor(rawValue: fds[1])
        try a.setNonBlocking()
        try b.setNonBlocking()
    }
    deinit {
        a.close()
        b.close()
    }
}

private func threadCPUSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

@Suite struct FileDescriptorTests {
    @Test func aReadWithNothingWaitingIsNilAndTheEndOfTheStreamIsZero() throws {
        let pair = try SocketPair()
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(try pair.a.read(into: &buffer) == nil)
        try pair.b.writeAll([1, 2, 3])
        #expect(try pair.a.read(into: &buffer) == 3)
        #expect(buffer.prefix(3) == [1, 2, 3])
        #expect(shutdown(pair.b.rawValue, Int32(SHUT_WR)) == 0)
        #expect(try pair.a.read(into: &buffer) == 0)
    }

    /// The kernel socket's `send` used to spin on EAGAIN; now a full buffer is waited out
    /// in poll (no CPU) and reported when it stays full.
    @Test func aFullSocketIsWaitedOutInPollThenReported() throws {
        let pair = try SocketPair()
        let chunk = [UInt8](repeating: 0xAB, count: 65_536)
        var filled = 0
        while true {
            let n = chunk.withUnsafeBytes { Glibc.write(pair.a.rawValue, $0.baseAddress, $0.count) }
            if n < 0 { break }
            filled += n
        }
        try #require(errno == EAGAIN && filled > 0)
        let cpu = threadCPUSeconds()
        let start = ContinuousClock.now
        do {
            try pair.a.writeAll([1, 2, 3, 4], timeoutMilliseconds: 300)
            Issue.record("wrote into a full socket")
        } catch {
            #expect(error.errno == EAGAIN)
        }
        let waited = ContinuousClock.now - start
        #expect(waited >= .milliseconds(290) && waited < .seconds(3))
        #expect(threadCPUSeconds() - cpu < 0.1, "waiting for room must not spin")
    }

    @Test func aFullSocketThatDrainsTakesTheWholeWrite() throws {
        let pair = try SocketPair()
        let chunk = [UInt8](repeating: 0xAB, count: 65_536)
        var filled = 0
        while true {
            let n = chunk.withUnsafeBytes { Glibc.write(pair.a.rawValue, $0.baseAddress, $0.count) }
            if n < 0 { break }
            filled += n
        }
        // A thread of its own (not a task: the cooperative pool may be busy with other tests).
        let reader = pair.b
        let expected = filled + 4
        let total = Mutex(0)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            usleep(50_000)
            var buffer = [UInt8](repeating: 0, count: 65_536)
            var got = 0
            let deadline = ContinuousClock.now + .seconds(10)
            while got < expected, ContinuousClock.now < deadline {
                if let n = try? reader.read(into: &buffer), n > 0 { got += n } else { usleep(1000) }
            }
            total.withLock { $0 = got }
            done.signal()
        }
        try pair.a.writeAll([1, 2, 3, 4], timeoutMilliseconds: 5000)
        done.wait()
        #expect(total.withLock { $0 } == expected)
    }
}

@Suite struct BlueZConstantTests {
    /// The ioctl numbers come from the header's _IOW/_IOR through the shim; these are their
    /// values on every Linux the appliance runs on (x86_64, arm64, armhf).
    @Test func theIoctlNumbersAreTheHeadersOwn() {
        #expect(ph_HCIDEVUP == 0x4004_48C9)  // _IOW('H', 201, int)
        #expect(ph_HCIGETDEVLIST == 0x8004_48D2)  // _IOR('H', 210, int)
        #expect(ph_HCIGETDEVINFO == 0x8004_48D3)  // _IOR('H', 211, int)
        #expect(AF_BLUETOOTH == 31 && BTPROTO_HCI == 1 && SOL_HCI == 0 && HCI_FILTER == 2 && HCI_CHANNEL_RAW == 0)
        #expect(MemoryLayout<ph_hci_dev_list>.size == 4 + Int(HCI_MAX_DEV) * 8)
    }

    /// The filter helpers set the bits the kernel tests: (type & 31) in type_mask, and
    /// (event & 63) in the two event words.
    @Test func theFilterHelpersSetTheKernelsBits() {
        var filter = hci_filter()
        hci_filter_set_ptype(HCI_COMMAND_PKT, &filter)
        hci_filter_set_ptype(HCI_EVENT_PKT, &filter)
        hci_filter_set_event(EVT_CMD_COMPLETE, &filter)
        hci_filter_set_event(EVT_LE_META_EVENT, &filter)
        hci_filter_set_event(EVT_STACK_INTERNAL, &filter)
        #expect(filter.type_mask == 1 << 1 | 1 << 4)
        #expect(filter.event_mask.0 == 1 << 0x0E)
        #expect(filter.event_mask.1 == 1 << (0x3E - 32) | 1 << ((0xFD & 63) - 32))
    }

    /// HCI_EV_STACK_INTERNAL / HCI_EV_SI_DEVICE, as the kernel sends it (hci_si_event).
    private func deviceEvent(_ event: Int32, device: UInt8) -> HCIPacket {
        HCIPacket(type: .event, bytes: [0xFD, 6, 0x01, 0x00, UInt8(event), 0, device, 0])
    }

    @Test func theStackInternalDownEventIsRecognised() {
        #expect(KernelHCISocket.saysDown(deviceEvent(HCI_DEV_DOWN, device: 3), device: 3))
        #expect(!KernelHCISocket.saysDown(deviceEvent(HCI_DEV_DOWN, device: 3), device: 4))
        #expect(KernelHCISocket.saysDown(deviceEvent(HCI_DEV_UNREG, device: 3), device: 3))
        #expect(!KernelHCISocket.saysDown(deviceEvent(HCI_DEV_UP, device: 3), device: 3))
    }
}
