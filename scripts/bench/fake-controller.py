#!/usr/bin/env python3
"""A stand-in controller speaking H4 on a unix socket, for benchmarks of the whole hunter.

It answers every command with a successful Command Complete (legacy command set), notes
when the first LE Set Scan Enable (on) arrives (--stamp) and when the first LE Set
Advertising Enable (on) arrives (--adv-stamp), and, with --beacon-hz, sends an iBeacon
advertising report at that rate while scanning is on.

usage: fake-controller.py SOCKET [--beacon-hz N] [--uuid UUID] [--stamp FILE] [--adv-stamp FILE]
"""
import argparse, os, socket, struct, time, uuid, random, select

def complete(opcode, extra=b""):
    params = bytes([1]) + struct.pack("<H", opcode) + b"\x00" + extra
    return bytes([0x04, 0x0E, len(params)]) + params

def report(beacon_uuid, rssi):
    data = bytes([0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]) + beacon_uuid.bytes + struct.pack(">HHb", 1, 1, -59)
    params = bytes([0x02, 1, 0x03, 0x00]) + bytes([1, 2, 3, 4, 5, 6]) + bytes([len(data)]) + data + struct.pack("b", rssi)
    return bytes([0x04, 0x3E, len(params)]) + params

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("socket")
    ap.add_argument("--beacon-hz", type=float, default=0)
    ap.add_argument("--uuid", default="50697261-7465-4875-6E74-547265617375")
    ap.add_argument("--stamp", help="write the CLOCK_MONOTONIC time of the first scan enable here")
    ap.add_argument("--adv-stamp", help="write the CLOCK_MONOTONIC time of the first advertising enable here")
    a = ap.parse_args()
    beacon_uuid = uuid.UUID(a.uuid)
    try:
        os.unlink(a.socket)
    except FileNotFoundError:
        pass
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(a.socket)
    server.listen(1)
    # Only now can a client connect: say so (the socket file exists from bind() on).
    with open(a.socket + ".ready", "w") as f:
        f.write("ready\n")
    while True:
        conn, _ = server.accept()
        scanning = False
        buf = b""
        next_report = time.monotonic()
        stamped = False
        adv_stamped = False
        while True:
            timeout = None
            if scanning and a.beacon_hz > 0:
                timeout = max(0, next_report - time.monotonic())
            r, _, _ = select.select([conn], [], [], timeout)
            if r:
                try:
                    chunk = conn.recv(4096)
                except ConnectionResetError:
                    break
                if not chunk:
                    break
                buf += chunk
                while len(buf) >= 4 and buf[0] == 0x01 and len(buf) >= 4 + buf[3]:
                    opcode = struct.unpack("<H", buf[1:3])[0]
                    params = buf[4:4 + buf[3]]
                    buf = buf[4 + buf[3]:]
                    extra = bytes(64) if opcode == 0x1002 else b""
                    try:
                        conn.sendall(complete(opcode, extra))
                    except (BrokenPipeError, ConnectionResetError):
                        break
                    if opcode == 0x200C:
                        scanning = params[:1] == b"\x01"
                        if scanning and a.stamp and not stamped:
                            with open(a.stamp, "w") as f:
                                f.write("%.6f\n" % time.clock_gettime(time.CLOCK_MONOTONIC))
                            stamped = True
                    if opcode == 0x200A and params[:1] == b"\x01" and a.adv_stamp and not adv_stamped:
                        with open(a.adv_stamp, "w") as f:
                            f.write("%.6f\n" % time.clock_gettime(time.CLOCK_MONOTONIC))
                        adv_stamped = True
            if scanning and a.beacon_hz > 0 and time.monotonic() >= next_report:
                try:
                    conn.sendall(report(beacon_uuid, -65 + random.randint(-6, 6)))
                except (BrokenPipeError, ConnectionResetError):
                    break
                next_report += 1.0 / a.beacon_hz
        conn.close()

if __name__ == "__main__":
    main()
