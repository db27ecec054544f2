#if canImport(Glibc)
import Glibc
#endif
import Bluetooth
import CBlueZ
import CLinux
import POSIX

/// The kernel's raw HCI channel on one adapter (AF_BLUETOOTH, BTPROTO_HCI, HCI_CHANNEL_RAW).
/// It coexists with a running bluetoothd. LE commands need CAP_NET_RAW (without it the
/// kernel's socket filter silently drops LE Meta events); bringing an adapter up needs
/// CAP_NET_ADMIN. Never sends Reset or event masks: the adapter may be shared.
public final class KernelHCISocket: HCITransport {
    // Every constant comes from the BlueZ headers through CBlueZ (the ioctl numbers through
    // the shim's constants, since _IOW/_IOR do not import).
    static let setcapFix =
        "run 'sudo setcap cap_net_raw,cap_net_admin+ep $(command -v pirate-hunter)' or use the systemd unit (AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN)"
    /// How long `send` waits for room in the socket's buffer before it reports the adapter stuck.
    static let sendTimeoutMilliseconds = 1000

    /// An epoll fd: readable when the adapter's socket or the device-events socket is.
    public var fileDescriptor: Int32 { poller.rawValue }
    public let deviceID: UInt16
    /// The raw socket bound to the adapter: commands out, events in.
    private let socket: FileDescriptor
    /// A raw socket bound to no adapter, for the kernel's device events (see `saysDown`).
    private let events: FileDescriptor
    private let poller: FileDescriptor
    public var name: String { "hci\(deviceID)" }
    private var closed = false

    /// Adapter state as HCIGETDEVINFO reports it.
    public struct DeviceInfo: Sendable {
        public var id: UInt16
        public var name: String
        public var isUp: Bool
        public var address: [UInt8]
        /// LMP features page 0 (8 octets).
        public var features: [UInt8] = []
        /// LMP features octet 4 bit 6: LE Supported (Controller).
        public var lowEnergy: Bool { features.count > 4 && features[4] & 0x40 != 0 }
    }

    static func controlSocket() throws(TransportError) -> FileDescriptor {
        do {
            return try FileDescriptor.socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue), BTPROTO_HCI, name: "AF_BLUETOOTH")
        } catch {
            switch error.errno {
            case EAFNOSUPPORT, EPROTONOSUPPORT: throw .unsupported("this kernel has no Bluetooth sockets (AF_BLUETOOTH)")
            case EPERM, EACCES: throw .permission("raw HCI socket", fix: setcapFix)
            default: throw .system(error)
            }
        }
    }

    /// Every adapter the kernel knows, up or down.
    public static func adapters() throws(TransportError) -> [DeviceInfo] {
        let fd = try controlSocket()
        defer { fd.close() }
        var list = ph_hci_dev_list()
        list.dev_num = UInt16(HCI_MAX_DEV)
        do {
            _ = try retryingOnInterrupt("HCIGETDEVLIST") { ph_ioctl_pointer(fd.rawValue, ph_HCIGETDEVLIST, &list) }
        } catch {
            throw .system(error)
        }
        let ids = withUnsafeBytes(of: list.dev_req) { raw in
            raw.bindMemory(to: hci_dev_req.self).prefix(min(Int(list.dev_num), Int(HCI_MAX_DEV))).map(\.dev_id)
        }
        return ids.compactMap { id in try? info(fd: fd, id: id) }
    }

    static func info(fd: FileDescriptor, id: UInt16) throws(TransportError) -> DeviceInfo {
        var info = hci_dev_info()
        info.dev_id = id
        do {
            _ = try retryingOnInterrupt("HCIGETDEVINFO hci\(id)") { ph_ioctl_pointer(fd.rawValue, ph_HCIGETDEVINFO, &info) }
        } catch {
            if error.errno == ENODEV { throw .notFound("hci\(id)") }
            throw .system(error)
        }
        let name = withUnsafeBytes(of: info.name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let address = withUnsafeBytes(of: info.bdaddr) { Array($0) }
        let features = withUnsafeBytes(of: info.features) { Array($0) }
        return DeviceInfo(id: id, name: name, isUp: info.flags & (1 << UInt32(HCI_UP)) != 0, address: address, features: features)
    }

    /// Brings an adapter up (needs CAP_NET_ADMIN). Already up is fine.
    public static func bringUp(_ id: UInt16) throws(TransportError) {
        let fd = try controlSocket()
        defer { fd.close() }
        do {
            _ = try retryingOnInterrupt("HCIDEVUP hci\(id)") { ph_ioctl_value(fd.rawValue, ph_HCIDEVUP, Int(id)) }
        } catch {
            switch error.errno {
            case EALREADY: return
            case EPERM, EACCES: throw .permission("bringing hci\(id) up", fix: setcapFix)
            case ENODEV: throw .notFound("hci\(id)")
            case ERFKILL: throw .blocked("hci\(id) is blocked by rfkill (rfkill unblock bluetooth)")
            default: throw .system(error)
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
            control.close()
            throw error
        }
        control.close()
        if !info.isUp {
            guard bringUp else { throw .adapterDown("hci\(chosen) is down") }
            try Self.bringUp(chosen)
        }

        let fd = try Self.controlSocket()
        // Events we act on, and command packets (to notice another program switching scanning off).
        var filter = hci_filter()
        hci_filter_set_ptype(HCI_COMMAND_PKT, &filter)
        hci_filter_set_ptype(HCI_EVENT_PKT, &filter)
        for event in [EVT_CMD_COMPLETE, EVT_CMD_STATUS, EVT_HARDWARE_ERROR, EVT_LE_META_EVENT] {
            hci_filter_set_event(event, &filter)
        }
        do {
            try Self.bind(fd, to: chosen, filter: filter)
        } catch {
            fd.close()
            switch error.errno {
            case ENODEV: throw .notFound("hci\(chosen)")
            case EPERM, EACCES: throw .permission("binding hci\(chosen)", fix: Self.setcapFix)
            default: throw .system(error)
            }
        }
        let events: FileDescriptor
        let poller: FileDescriptor
        do {
            (events, poller) = try Self.deviceEventsSocket(pollingWith: fd)
        } catch {
            fd.close()
            throw error
        }
        socket = fd
        self.events = events
        self.poller = poller
        deviceID = chosen
    }

    /// Sets the socket's filter, binds it to the raw channel of `device`, makes it non-blocking.
    private static func bind(_ fd: FileDescriptor, to device: UInt16, filter: hci_filter) throws(SystemError) {
        var filter = filter
        _ = try retryingOnInterrupt("setsockopt HCI_FILTER") {
            setsockopt(fd.rawValue, SOL_HCI, HCI_FILTER, &filter, socklen_t(MemoryLayout<hci_filter>.size))
        }
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = device
        address.hci_channel = UInt16(HCI_CHANNEL_RAW)
        _ = try retryingOnInterrupt("bind hci\(device)") {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd.rawValue, $0, socklen_t(MemoryLayout<sockaddr_hci>.size)) }
            }
        }
        try fd.setNonBlocking()
    }

    /// The kernel sends its "stack internal" device events (0xFD: an adapter went down) only
    /// to raw sockets bound to no adapter (HCI_DEV_NONE), never to one bound to the adapter,
    /// so without this second socket an advertiser, which reads nothing, does not notice
    /// `hciconfig hci1 down` (the VM test `treasure.sh` step 2). Returns that socket and an
    /// epoll fd watching it and `fd`, for the event loop.
    static func deviceEventsSocket(pollingWith fd: FileDescriptor) throws(TransportError) -> (FileDescriptor, FileDescriptor) {
        let events = try controlSocket()
        var filter = hci_filter()
        hci_filter_set_ptype(HCI_EVENT_PKT, &filter)
        hci_filter_set_event(EVT_STACK_INTERNAL, &filter)  // the kernel tests bit (code & 63), as this sets
        var poller: FileDescriptor?
        do {
            try bind(events, to: UInt16(HCI_DEV_NONE), filter: filter)
            let epoll = FileDescriptor(rawValue: try retryingOnInterrupt("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) })
            poller = epoll
            for watched in [fd, events] {
                var event = epoll_event()
                event.events = EPOLLIN.rawValue
                _ = try retryingOnInterrupt("epoll_ctl") { epoll_ctl(epoll.rawValue, EPOLL_CTL_ADD, watched.rawValue, &event) }
            }
            return (events, epoll)
        } catch {
            events.close()
            poller?.close()
            throw .system(SystemError("device events socket: \(error.call)", errno: error.errno))
        }
    }

    /// Whether the kernel still lists the adapter (up or down).
    func isListed() -> Bool {
        guard let fd = try? Self.controlSocket() else { return false }
        defer { fd.close() }
        return (try? Self.info(fd: fd, id: deviceID)) != nil
    }

    /// One packet, one write (the raw socket keeps packets whole). A full socket buffer is
    /// waited out for at most `sendTimeoutMilliseconds`, then reported.
    public func send(_ packet: HCIPacket) throws(TransportError) {
        do {
            try socket.writeAll(packet.h4Bytes, timeoutMilliseconds: Self.sendTimeoutMilliseconds)
        } catch {
            throw mapped(error)
        }
    }

    public func receive() throws(TransportError) -> [HCIPacket] {
        var packets: [HCIPacket] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        // The device events first: "down" ends the session, whatever else is queued. An
        // adapter that went away (unplugged, btvirt killed) is unlisted before its DOWN is
        // sent: that is "lost", as the EPIPE that follows would say, not "down". This socket
        // only adds news: its own errors are left to the adapter's socket below to report.
        while let n = try? events.read(into: &buffer), n > 0 {
            if let p = try? HCIPacket(h4: buffer[0..<n]), Self.saysDown(p, device: deviceID) {
                throw isListed() ? .adapterDown(name) : .adapterGone(name)
            }
        }
        while true {
            let read: Int?
            do {
                read = try socket.read(into: &buffer)
            } catch {
                throw mapped(error)
            }
            guard let n = read else { return packets }  // EAGAIN: none waiting
            if n == 0 { throw .adapterGone(name) }
            // One packet per read on a raw socket; a malformed one is dropped, not fatal.
            if let p = try? HCIPacket(h4: buffer[0..<n]) { packets.append(p) }
        }
    }

    /// The kernel's HCI_EV_STACK_INTERNAL (0xFD) / HCI_EV_SI_DEVICE: u16 type 1, then u16
    /// event (2 unregistered, 4 down) and u16 device id. A raw socket bound to an adapter that
    /// goes down gets no error and not even this event (only sockets bound to no adapter do,
    /// hence `events`): nothing else would tell an advertiser, which reads nothing, that its
    /// adapter is gone until it next sends a command.
    static func saysDown(_ packet: HCIPacket, device: UInt16) -> Bool {
        let b = packet.bytes
        guard packet.type == .event, b.count >= 8, b[0] == EVT_STACK_INTERNAL, b[1] >= 6 else { return false }
        let type = Int32(b[2]) | Int32(b[3]) << 8
        let event = Int32(b[4]) | Int32(b[5]) << 8
        let id = UInt16(b[6]) | UInt16(b[7]) << 8
        return type == EVT_SI_DEVICE && (event == HCI_DEV_UNREG || event == HCI_DEV_DOWN) && id == device
    }

    func mapped(_ error: SystemError) -> TransportError {
        switch error.errno {
        case ENETDOWN: return .adapterDown(name)
        case EPIPE, ENODEV, EBADFD, ENXIO: return .adapterGone(name)
        case EPERM, EACCES: return .permission(name, fix: Self.setcapFix)
        default: return .system(SystemError("\(name): \(error.call)", errno: error.errno))
        }
    }

    public func close() {
        guard !closed else { return }
        closed = true
        poller.close()
        socket.close()
        events.close()
    }

    deinit { close() }
}
