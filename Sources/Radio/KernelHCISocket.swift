#if canImport(Glibc)
import Glibc
#endif
import Bluetooth
import CBlueZ
import CLinux

/// The kernel's raw HCI channel on one adapter (AF_BLUETOOTH, BTPROTO_HCI, HCI_CHANNEL_RAW).
/// It coexists with a running bluetoothd. LE commands need CAP_NET_RAW (without it the
/// kernel's socket filter silently drops LE Meta events); bringing an adapter up needs
/// CAP_NET_ADMIN. Never sends Reset or event masks: the adapter may be shared.
public final class KernelHCISocket: HCITransport {
    // Constants from libbluetooth-dev 5.66 (function-like macros do not import into Swift).
    static let afBluetooth: Int32 = 31
    static let btprotoHCI: Int32 = 1
    static let solHCI: Int32 = 0
    static let hciFilterOption: Int32 = 2
    static let hciChannelRaw: UInt16 = 0
    static let ioctlDeviceUp: UInt = 0x4004_48C9  // _IOW('H', 201, int)
    static let ioctlDeviceList: UInt = 0x8004_48D2  // _IOR('H', 210, int)
    static let ioctlDeviceInfo: UInt = 0x8004_48D3  // _IOR('H', 211, int)
    static let setcapFix =
        "run 'sudo setcap cap_net_raw,cap_net_admin+ep $(command -v pirate-hunter)' or use the systemd unit (AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN)"

    /// An epoll fd: readable when the adapter's socket or the device-events socket is.
    public let fileDescriptor: Int32
    public let deviceID: UInt16
    /// The raw socket bound to the adapter: commands out, events in.
    private let socketFD: Int32
    /// A raw socket bound to no adapter, for the kernel's device events (see `saysDown`).
    private let eventsFD: Int32
    public var name: String { "hci\(deviceID)" }
    private var closed = false

    /// Adapter state as HCIGETDEVINFO reports it.
    public struct DeviceInfo: Sendable {
        public var id: UInt16
        public var name: String
        public var isUp: Bool
        public var address: [UInt8]
    }

    static func controlSocket() throws(TransportError) -> Int32 {
        let fd = socket(afBluetooth, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), btprotoHCI)
        guard fd >= 0 else {
            let code = errno
            if code == EAFNOSUPPORT || code == EPROTONOSUPPORT {
                throw .unsupported("this kernel has no Bluetooth sockets (AF_BLUETOOTH)")
            }
            if code == EPERM || code == EACCES { throw .permission("raw HCI socket", fix: setcapFix) }
            throw .system(SystemError("socket(AF_BLUETOOTH)", errno: code))
        }
        return fd
    }

    /// Every adapter the kernel knows, up or down.
    public static func adapters() throws(TransportError) -> [DeviceInfo] {
        let fd = try controlSocket()
        defer { Glibc.close(fd) }
        // struct hci_dev_list_req { uint16_t dev_num; struct hci_dev_req dev_req[16]; } (8 bytes each)
        var request = [UInt8](repeating: 0, count: 4 + 16 * 8)
        request[0] = 16
        let result = request.withUnsafeMutableBytes { ph_ioctl_pointer(fd, ioctlDeviceList, $0.baseAddress) }
        guard result >= 0 else { throw .system(SystemError("HCIGETDEVLIST", errno: errno)) }
        let count = Int(request[0]) | Int(request[1]) << 8
        var out: [DeviceInfo] = []
        for i in 0..<min(count, 16) {
            let offset = 4 + i * 8
            let id = UInt16(request[offset]) | UInt16(request[offset + 1]) << 8
            if let info = try? info(fd: fd, id: id) { out.append(info) }
        }
        return out
    }

    static func info(fd: Int32, id: UInt16) throws(TransportError) -> DeviceInfo {
        var info = hci_dev_info()
        info.dev_id = id
        guard ph_ioctl_pointer(fd, ioctlDeviceInfo, &info) >= 0 else {
            let code = errno
            if code == ENODEV { throw .notFound("hci\(id)") }
            throw .system(SystemError("HCIGETDEVINFO hci\(id)", errno: code))
        }
        let name = withUnsafeBytes(of: info.name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let address = withUnsafeBytes(of: info.bdaddr) { Array($0) }
        return DeviceInfo(id: id, name: name, isUp: info.flags & 1 != 0, address: address)
    }

    /// Brings an adapter up (needs CAP_NET_ADMIN). Already up is fine.
    public static func bringUp(_ id: UInt16) throws(TransportError) {
        let fd = try controlSocket()
        defer { Glibc.close(fd) }
        if ph_ioctl_value(fd, ioctlDeviceUp, Int(id)) < 0 {
            let code = errno
            switch code {
            case EALREADY: return
            case EPERM, EACCES: throw .permission("bringing hci\(id) up", fix: setcapFix)
            case ENODEV: throw .notFound("hci\(id)")
            case ERFKILL: throw .adapterDown("hci\(id) is blocked by rfkill (rfkill unblock bluetooth)")
            default: throw .system(SystemError("HCIDEVUP hci\(id)", errno: code))
            }
        }
    }

    /// Opens the raw channel of adapter `id` (nil: the first adapter that is up), bringing it up
    /// first when it is down and `bringUp` allows.
    public init(adapter id: UInt16?, bringUp: Bool = true) throws(TransportError) {
        let chosen: UInt16
        if let id {
            chosen = id
        } else {
            let all = try Self.adapters()
            guard let first = all.first(where: \.isUp) ?? all.first else { throw .notFound("no Bluetooth adapter") }
            chosen = first.id
        }
        let control = try Self.controlSocket()
        let info: DeviceInfo
        do {
            info = try Self.info(fd: control, id: chosen)
        } catch {
            Glibc.close(control)
            throw error
        }
        Glibc.close(control)
        if !info.isUp {
            guard bringUp else { throw .adapterDown("hci\(chosen) is down") }
            try Self.bringUp(chosen)
        }

        let fd = try Self.controlSocket()
        // Events we act on, and command packets (to notice another program switching scanning off).
        var filter = hci_filter()
        filter.type_mask = (1 << 1) | (1 << 4)  // HCI_COMMAND_PKT, HCI_EVENT_PKT
        for code: UInt32 in [0x0E, 0x0F, 0x10, 0x3E] {
            withUnsafeMutableBytes(of: &filter.event_mask) { raw in
                let words = raw.bindMemory(to: UInt32.self)
                words[Int(code >> 5)] |= 1 << (code & 31)
            }
        }
        if setsockopt(fd, Self.solHCI, Self.hciFilterOption, &filter, socklen_t(MemoryLayout<hci_filter>.size)) < 0 {
            let code = errno
            Glibc.close(fd)
            throw .system(SystemError("setsockopt HCI_FILTER", errno: code))
        }
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(Self.afBluetooth)
        address.hci_dev = chosen
        address.hci_channel = Self.hciChannelRaw
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size)) }
        }
        if bound < 0 {
            let code = errno
            Glibc.close(fd)
            switch code {
            case ENODEV: throw .notFound("hci\(chosen)")
            case EPERM, EACCES: throw .permission("binding hci\(chosen)", fix: Self.setcapFix)
            default: throw .system(SystemError("bind hci\(chosen)", errno: code))
            }
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let events: Int32
        let poller: Int32
        do {
            (events, poller) = try Self.deviceEventsSocket(pollingWith: fd)
        } catch {
            Glibc.close(fd)
            throw error
        }
        socketFD = fd
        eventsFD = events
        fileDescriptor = poller
        deviceID = chosen
    }

    /// The kernel sends its "stack internal" device events (0xFD: an adapter went down) only
    /// to raw sockets bound to no adapter (HCI_DEV_NONE), never to one bound to the adapter,
    /// so without this second socket an advertiser, which reads nothing, does not notice
    /// `hciconfig hci1 down` (the VM test `treasure.sh` step 2). Returns that socket and an
    /// epoll fd watching it and `fd`, for the event loop.
    static func deviceEventsSocket(pollingWith fd: Int32) throws(TransportError) -> (Int32, Int32) {
        let events = try controlSocket()
        var filter = hci_filter()
        filter.type_mask = 1 << 4  // HCI_EVENT_PKT
        withUnsafeMutableBytes(of: &filter.event_mask) { raw in
            raw.bindMemory(to: UInt32.self)[1] |= 1 << ((0xFD & 63) - 32)  // the kernel tests bit (code & 63)
        }
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(afBluetooth)
        address.hci_dev = 0xFFFF  // HCI_DEV_NONE
        address.hci_channel = hciChannelRaw
        let poller = epoll_create1(Int32(EPOLL_CLOEXEC))
        var ok =
            setsockopt(events, solHCI, hciFilterOption, &filter, socklen_t(MemoryLayout<hci_filter>.size)) == 0
            && withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(events, $0, socklen_t(MemoryLayout<sockaddr_hci>.size)) }
            } == 0
            && fcntl(events, F_SETFL, fcntl(events, F_GETFL) | O_NONBLOCK) == 0
            && poller >= 0
        for watched in [fd, events] where ok {
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            ok = epoll_ctl(poller, EPOLL_CTL_ADD, watched, &event) == 0
        }
        guard ok else {
            let code = errno
            Glibc.close(events)
            if poller >= 0 { Glibc.close(poller) }
            throw .system(SystemError("device events socket", errno: code))
        }
        return (events, poller)
    }

    /// Whether the kernel still lists the adapter (up or down).
    func isListed() -> Bool {
        guard let fd = try? Self.controlSocket() else { return false }
        defer { Glibc.close(fd) }
        return (try? Self.info(fd: fd, id: deviceID)) != nil
    }

    public func send(_ packet: HCIPacket) throws(TransportError) {
        let bytes = packet.h4Bytes
        while true {
            let n = bytes.withUnsafeBytes { raw in Glibc.write(socketFD, raw.baseAddress, raw.count) }
            if n >= 0 { return }
            let code = errno
            if code == EINTR || code == EAGAIN { continue }
            throw mapped(code)
        }
    }

    public func receive() throws(TransportError) -> [HCIPacket] {
        var packets: [HCIPacket] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        // The device events first: "down" ends the session, whatever else is queued. An
        // adapter that went away (unplugged, btvirt killed) is unlisted before its DOWN is
        // sent: that is "lost", as the EPIPE that follows would say, not "down".
        while true {
            let n = buffer.withUnsafeMutableBytes { raw in Glibc.read(eventsFD, raw.baseAddress, raw.count) }
            if n > 0, let p = try? HCIPacket(h4: buffer[0..<n]), Self.saysDown(p, device: deviceID) {
                throw isListed() ? .adapterDown(name) : .adapterGone(name)
            }
            if n > 0 || n < 0 && errno == EINTR { continue }
            break  // EAGAIN: none waiting
        }
        while true {
            let n = buffer.withUnsafeMutableBytes { raw in Glibc.read(socketFD, raw.baseAddress, raw.count) }
            if n > 0 {
                // One packet per read on a raw socket; a malformed one is dropped, not fatal.
                if let p = try? HCIPacket(h4: buffer[0..<n]) { packets.append(p) }
                continue
            }
            if n == 0 { throw .adapterGone(name) }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN { return packets }
            throw mapped(code)
        }
    }

    /// The kernel's HCI_EV_STACK_INTERNAL (0xFD) / HCI_EV_SI_DEVICE: u16 type 1, then u16
    /// event (2 unregistered, 4 down) and u16 device id. A raw socket bound to an adapter that
    /// goes down gets no error and not even this event (only sockets bound to no adapter do,
    /// hence `eventsFD`): nothing else would tell an advertiser, which reads nothing, that its
    /// adapter is gone until it next sends a command.
    static func saysDown(_ packet: HCIPacket, device: UInt16) -> Bool {
        let b = packet.bytes
        guard packet.type == .event, b.count >= 8, b[0] == 0xFD, b[1] >= 6 else { return false }
        let type = UInt16(b[2]) | UInt16(b[3]) << 8
        let event = UInt16(b[4]) | UInt16(b[5]) << 8
        let id = UInt16(b[6]) | UInt16(b[7]) << 8
        return type == 0x0001 && (event == 2 || event == 4) && id == device
    }

    func mapped(_ code: Int32) -> TransportError {
        switch code {
        case ENETDOWN: return .adapterDown(name)
        case EPIPE, ENODEV, EBADFD, ENXIO: return .adapterGone(name)
        case EPERM, EACCES: return .permission(name, fix: Self.setcapFix)
        default: return .system(SystemError(name, errno: code))
        }
    }

    public func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fileDescriptor)
        Glibc.close(socketFD)
        Glibc.close(eventsFD)
    }

    deinit { close() }
}
