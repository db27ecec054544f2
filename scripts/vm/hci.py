#!/usr/bin/env python3
"""Raw HCI helper for the VM guest tests: an oracle independent of pirate-hunter.

  hci.py listen DEV [--expect HEX] [--timeout S]
      Opens a RAW HCI socket on DEV (e.g. hci0), prints READY, then one line per LE
      advertising report (legacy subevent 0x02 and extended 0x0D):
        ADV dev=hci0 sub=02 type=03 addrtype=00 addr=00:AA:01:01:00:01 rssi=127 data=<hex>
      and, for an iBeacon, an IBEACON line decoded from the raw bytes (UUID as written,
      major/minor big-endian, power signed). With --expect it exits 0 at the first report
      whose data equals HEX, 1 at the timeout; without, it runs until the timeout (0).
  hci.py watch DEV [--timeout S]
      Prints READY, then how the socket ends: "ERROR errno=<n> <name>" when the adapter
      goes away, "TIMEOUT" otherwise. Exits 0 on an error seen, 1 on timeout.
  hci.py commands DEV [--timeout S]
      Prints READY, then every HCI command that others (hcitool, the kernel, pirate-hunter)
      send to DEV and every Command Complete/Status, until the timeout or SIGTERM:
        CMD dev=hci0 opcode=0x200c params=0100
        CC dev=hci0 opcode=0x200c status=0x00        (CS for Command Status)
      e.g. to prove that a program switched scanning (0x200c/0x2042) or advertising
      (0x200a/0x2039) off on exit: the last such CMD line has enable 00.
  hci.py devevents [--timeout S]
      A RAW socket bound to no adapter (HCI_DEV_NONE) gets the kernel's stack-internal
      device events: prints READY, then "DEVEVENT dev=hci0 event=REG|UNREG|UP|DOWN" as
      adapters come, go, go up or down, until the timeout or SIGTERM. This is how a
      program can wait for an adapter to return without polling.
  hci.py devinfo DEV
      HCIGETDEVINFO: prints "DEVINFO dev=hci0 up=1 addr=..." (exit 1 when absent).
Needs CAP_NET_RAW (LE Meta events are filtered out without it).
"""
import errno, fcntl, select, signal, socket, struct, sys, time

AF_BLUETOOTH, BTPROTO_HCI, SOL_HCI, HCI_FILTER = 31, 1, 0, 2
HCI_COMMAND_PKT = 0x01
HCI_EVENT_PKT, EVT_CMD_COMPLETE, EVT_CMD_STATUS, EVT_LE_META = 0x04, 0x0E, 0x0F, 0x3E
HCIGETDEVINFO = 0x800448D3  # _IOR('H', 211, int)


def dev_index(name):
    if not name.startswith("hci") or not name[3:].isdigit():
        print(f"hci.py: adapter must look like hci0, got {name!r}", file=sys.stderr)
        sys.exit(64)
    return int(name[3:])


HCI_DEV_NONE, EVT_STACK_INTERNAL, EVT_SI_DEVICE = 0xFFFF, 0xFD, 0x0001
SI_EVENTS = {1: "REG", 2: "UNREG", 3: "UP", 4: "DOWN"}


def open_raw(dev, commands=False):
    s = socket.socket(AF_BLUETOOTH, socket.SOCK_RAW, BTPROTO_HCI)
    # struct hci_filter { u32 type_mask; u32 event_mask[2]; u16 opcode; } (padded to 16)
    type_mask = 1 << HCI_EVENT_PKT | (1 << HCI_COMMAND_PKT if commands else 0)
    ev = [0, 0]
    # 0x10 hardware error; 0xFD stack internal. The kernel tests bit (event & 63).
    for e in (EVT_CMD_COMPLETE, EVT_CMD_STATUS, EVT_LE_META, 0x10, EVT_STACK_INTERNAL):
        b = e & 63
        ev[b >> 5] |= 1 << (b & 31)
    s.setsockopt(SOL_HCI, HCI_FILTER, struct.pack("<IIIH2x", type_mask, ev[0], ev[1], 0))
    s.bind((HCI_DEV_NONE if dev is None else dev_index(dev),))
    return s


def addr_str(b):
    return ":".join(f"{x:02X}" for x in reversed(b))


def ibeacon(data):
    """Walks the AD structures; returns (uuid, major, minor, power) or None."""
    i = 0
    while i < len(data):
        ln = data[i]
        if ln == 0 or i + 1 + ln > len(data):
            return None
        ad = data[i + 1:i + 1 + ln]
        if ad[0] == 0xFF and len(ad) == 26 and ad[1:5] == bytes([0x4C, 0x00, 0x02, 0x15]):
            u = ad[5:21].hex().upper()
            uuid = f"{u[0:8]}-{u[8:12]}-{u[12:16]}-{u[16:20]}-{u[20:32]}"
            major, minor = struct.unpack(">HH", ad[21:25])
            power = struct.unpack("b", ad[25:26])[0]
            return uuid, major, minor, power
        i += 1 + ln
    return None


def reports(pkt):
    """Yields (subevent, type, addrtype, addr, rssi, data) from an H4 LE Meta event."""
    if len(pkt) < 4 or pkt[0] != HCI_EVENT_PKT or pkt[1] != EVT_LE_META:
        return
    plen = pkt[2]
    p = pkt[3:3 + plen]
    if len(p) != plen or plen < 2:
        return
    sub, n, off = p[0], p[1], 2
    for _ in range(n):
        if sub == 0x02:
            if off + 9 > len(p):
                return
            typ, at, addr, dl = p[off], p[off + 1], p[off + 2:off + 8], p[off + 8]
            if off + 9 + dl + 1 > len(p):
                return
            data = p[off + 9:off + 9 + dl]
            rssi = struct.unpack("b", p[off + 9 + dl:off + 10 + dl])[0]
            off += 10 + dl
            yield sub, typ, at, addr, rssi, data
        elif sub == 0x0D:
            if off + 24 > len(p):
                return
            typ = struct.unpack("<H", p[off:off + 2])[0]
            at, addr = p[off + 2], p[off + 3:off + 9]
            rssi = struct.unpack("b", p[off + 13:off + 14])[0]
            dl = p[off + 23]
            if off + 24 + dl > len(p):
                return
            data = p[off + 24:off + 24 + dl]
            off += 24 + dl
            yield sub, typ, at, addr, rssi, data
        else:
            return


def arg(args, name, default):
    if name in args:
        i = args.index(name)
        if i + 1 >= len(args):
            print(f"hci.py: {name} needs a value", file=sys.stderr)
            sys.exit(64)
        return args[i + 1]
    return default


def listen(dev, args):
    expect = arg(args, "--expect", None)
    expect = bytes.fromhex(expect) if expect else None
    deadline = time.monotonic() + float(arg(args, "--timeout", "10"))
    s = open_raw(dev)
    print("READY", flush=True)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            print("TIMEOUT", flush=True)
            return 1 if expect is not None else 0
        r, _, _ = select.select([s], [], [], left)
        if not r:
            continue
        pkt = s.recv(300)
        for sub, typ, at, addr, rssi, data in reports(pkt):
            print(f"ADV dev={dev} sub={sub:02X} type={typ:02X} addrtype={at:02X} "
                  f"addr={addr_str(addr)} rssi={rssi} data={data.hex()}", flush=True)
            b = ibeacon(data)
            if b:
                print(f"IBEACON dev={dev} addr={addr_str(addr)} uuid={b[0]} major={b[1]} "
                      f"minor={b[2]} power={b[3]} rssi={rssi}", flush=True)
            if expect is not None and data == expect:
                print("MATCH", flush=True)
                return 0


def watch(dev, args):
    deadline = time.monotonic() + float(arg(args, "--timeout", "30"))
    s = open_raw(dev)
    print("READY", flush=True)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            print("TIMEOUT", flush=True)
            return 1
        try:
            r, _, _ = select.select([s], [], [], left)
            if r:
                s.recv(300)
        except OSError as e:
            print(f"ERROR errno={e.errno} {errno.errorcode.get(e.errno, '?')}", flush=True)
            return 0


def commands(dev, args):
    deadline = time.monotonic() + float(arg(args, "--timeout", "60"))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    s = open_raw(dev, commands=True)
    print("READY", flush=True)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return 0
        r, _, _ = select.select([s], [], [], left)
        if not r:
            continue
        p = s.recv(300)
        if len(p) >= 4 and p[0] == HCI_COMMAND_PKT:
            op = struct.unpack("<H", p[1:3])[0]
            print(f"CMD dev={dev} opcode=0x{op:04x} params={p[4:4 + p[3]].hex()}", flush=True)
        elif len(p) >= 7 and p[0] == HCI_EVENT_PKT and p[1] == EVT_CMD_COMPLETE:
            op = struct.unpack("<H", p[4:6])[0]
            st = p[6] if len(p) > 6 else -1
            print(f"CC dev={dev} opcode=0x{op:04x} status=0x{st:02x}", flush=True)
        elif len(p) >= 7 and p[0] == HCI_EVENT_PKT and p[1] == EVT_CMD_STATUS:
            op = struct.unpack("<H", p[5:7])[0]
            print(f"CS dev={dev} opcode=0x{op:04x} status=0x{p[3]:02x}", flush=True)


def devevents(args):
    deadline = time.monotonic() + float(arg(args, "--timeout", "60"))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    s = open_raw(None)
    print("READY", flush=True)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return 0
        r, _, _ = select.select([s], [], [], left)
        if not r:
            continue
        p = s.recv(300)
        # H4 event: 04 FD plen, then u16 SI type (0x0001 device), u16 event, u16 dev_id
        if len(p) >= 9 and p[0] == HCI_EVENT_PKT and p[1] == EVT_STACK_INTERNAL:
            typ, event, dev_id = struct.unpack("<HHH", p[3:9])
            if typ == EVT_SI_DEVICE:
                name = SI_EVENTS.get(event, str(event))
                print(f"DEVEVENT dev=hci{dev_id} event={name}", flush=True)


def devinfo(dev):
    s = socket.socket(AF_BLUETOOTH, socket.SOCK_RAW, BTPROTO_HCI)
    # struct hci_dev_info: u16 dev_id; char name[8]; bdaddr[6]; u32 flags; u8 type; ... (92 bytes)
    buf = bytearray(struct.pack("<H", dev_index(dev)) + bytes(90))
    try:
        fcntl.ioctl(s.fileno(), HCIGETDEVINFO, buf)
    except OSError as e:
        print(f"DEVINFO dev={dev} absent errno={e.errno} {errno.errorcode.get(e.errno, '?')}")
        return 1
    flags = struct.unpack("<I", buf[16:20])[0]
    print(f"DEVINFO dev={dev} up={flags & 1} addr={addr_str(buf[10:16])} flags=0x{flags:x}")
    return 0


def main(argv):
    if len(argv) >= 2 and argv[1] == "devevents":
        return devevents(argv[2:])
    if len(argv) < 3 or argv[1] not in ("listen", "watch", "commands", "devinfo"):
        print(__doc__, file=sys.stderr)
        return 64
    cmd, dev, rest = argv[1], argv[2], argv[3:]
    if cmd == "listen":
        return listen(dev, rest)
    if cmd == "watch":
        return watch(dev, rest)
    if cmd == "commands":
        return commands(dev, rest)
    return devinfo(dev)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
