import Bluetooth
import CBlueZ
import Glibc
import Testing

@testable import Radio

/// SOCK_STREAM for the tests of this target, named where Glibc's enum is seen reliably (a
/// clean build once lost it in another file of the same compile batch).
let streamSocketType = Int32(SOCK_STREAM.rawValue)

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
