#!/usr/bin/env python3
"""A stand-in controller speaking H4 on a unix socket, for benchmarks of the whole hunter.

It answers every command with a successful Command Complete (legacy command set), notes
when the first LE Set Scan Enable (on) arrives (--stamp) and when the first LE Set
Advertising Enable (on) arrives (--adv-stamp), and, with --beacon-hz, sends an iBeacon
advertising report at that rate while scanning is on. A crowded street and a flaky line:
--crowd-hz N adds N reports a second from ever-new random addresses (iBeacons of random
UUIDs, or with --crowd-hunted the hunted UUID with random major/minor, as anyone can
advertise it), --stray-every S writes one random byte every S seconds, --close-every S
drops the connection every S seconds. --twin sends the beacon's report from a second address
too, with another measured power (two transmitters sharing one iBeacon identity).
--rssi DBM sets the beacon's level (default -65, +-6).

Attacks without the game key (issue #25, docs/security.md), each at --attack-hz reports a
second while scanning: --fake-rivals N made-up hunters announcing they found the beacon
(ids 1000..1000+N-1, half in the authenticated layout with a guessed MAC, half plain),
--fake-finders N the same at -45 dBm (at a box, "immediate"), --fake-reward TEXT scan
responses from the beacon's own address holding TEXT plain and in a sealed layout with a
guessed MAC (a louder copy of the treasure answering scan requests).

usage: fake-controller.py SOCKET [--beacon-hz N] [--uuid UUID] [--rssi DBM] [--stamp FILE] [--adv-stamp FILE]
                          [--crowd-hz N] [--crowd-hunted] [--stray-every S] [--close-every S] [--twin]
                          [--attack-hz N] [--fake-rivals N | --fake-finders N] [--fake-reward TEXT]
"""
import argparse, os, socket, struct, time, uuid, random, select

def complete(opcode, extra=b""):
    params = bytes([1]) + struct.pack("<H", opcode) + b"\x00" + extra
    return bytes([0x04, 0x0E, len(params)]) + params

def report(beacon_uuid, rssi, major=1, minor=1, address=bytes([1, 2, 3, 4, 5, 6]), power=-59):
    data = bytes([0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]) + beacon_uuid.bytes + struct.pack(">HHb", major, minor, power)
    params = bytes([0x02, 1, 0x03, 0x01]) + address + bytes([len(data)]) + data + struct.pack("b", rssi)
    return bytes([0x04, 0x3E, len(params)]) + params

def tag(beacon_uuid, major=1, minor=1):
    """TreasureSignals.tag: FNV-1a over the UUID, major and minor, folded to 16 bits (public)."""
    h = 2166136261
    for b in beacon_uuid.bytes + struct.pack(">HH", major, minor):
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return ((h >> 16) ^ h) & 0xFFFF

HUNTERS = uuid.UUID("50697261-7465-4875-6E74-657243726577")  # "PirateHunterCrew"

def fake_announcement(beacon_uuid, hunter, rssi, signed_layout):
    """A made-up hunter's find: the authenticated layout with a guessed MAC, or the plain one."""
    u = uuid.UUID(bytes=b"PHKEY1" + random.randbytes(10)) if signed_layout else HUNTERS
    address = bytes([hunter & 0xFF, hunter >> 8, 0x7E, 0xA7, 0x00, 0xC2])
    return report(u, rssi, hunter, tag(beacon_uuid), address)

def fake_reward(text, signed_layout, address=bytes([1, 2, 3, 4, 5, 6]), rssi=-40):
    """A scan response from the treasure's address: TEXT plain, or 'S' + TEXT + a guessed MAC."""
    body = text.encode()[:20]
    data = b"\xff\xff" + (b"S" + body + random.randbytes(6) if signed_layout else body)
    ad = bytes([len(data) + 1, 0xFF]) + data
    params = bytes([0x02, 1, 0x04, 0x01]) + address + bytes([len(ad)]) + ad + struct.pack("b", rssi)
    return bytes([0x04, 0x3E, len(params)]) + params

def stranger(hunted):
    """A phone on the street: a new random address, a random beacon (or the hunted UUID)."""
    u = hunted if hunted else uuid.UUID(bytes=random.randbytes(16))
    return report(u, random.randint(-95, -55), random.randint(0, 65535), random.randint(0, 65535), random.randbytes(6))

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("socket")
    ap.add_argument("--beacon-hz", type=float, default=0)
    ap.add_argument("--uuid", default="50697261-7465-4875-6E74-547265617375")
    ap.add_argument("--stamp", help="write the CLOCK_MONOTONIC time of the first scan enable here")
    ap.add_argument("--adv-stamp", help="write the CLOCK_MONOTONIC time of the first advertising enable here")
    ap.add_argument("--crowd-hz", type=float, default=0)
    ap.add_argument("--crowd-hunted", action="store_true")
    ap.add_argument("--stray-every", type=float, default=0)
    ap.add_argument("--close-every", type=float, default=0)
    ap.add_argument("--twin", action="store_true")
    ap.add_argument("--rssi", type=int, default=-65)
    ap.add_argument("--attack-hz", type=float, default=50)
    ap.add_argument("--fake-rivals", type=int, default=0)
    ap.add_argument("--fake-finders", type=int, default=0)
    ap.add_argument("--fake-reward")
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
        opened = time.monotonic()
        next_crowd = opened
        next_stray = opened + a.stray_every
        next_attack = opened
        attacks = 0
        attacking = a.fake_rivals > 0 or a.fake_finders > 0 or a.fake_reward
        while True:
            if a.close_every > 0 and time.monotonic() - opened >= a.close_every:
                break
            timeout = None
            if scanning and (a.beacon_hz > 0 or a.crowd_hz > 0 or a.stray_every > 0 or attacking):
                timeout = 0.01
            elif a.close_every > 0:
                timeout = 0.05
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
                    conn.sendall(report(beacon_uuid, a.rssi + random.randint(-6, 6)))
                    if a.twin:
                        conn.sendall(report(beacon_uuid, -80 + random.randint(-6, 6), address=bytes([6, 5, 4, 3, 2, 1]), power=-62))
                except (BrokenPipeError, ConnectionResetError):
                    break
                next_report += 1.0 / a.beacon_hz
            now = time.monotonic()
            if scanning and a.crowd_hz > 0 and now >= next_crowd:
                # Every report due by now, in one write (a busy controller batches too).
                n = int((now - next_crowd) * a.crowd_hz) + 1
                hunted = beacon_uuid if a.crowd_hunted else None
                try:
                    conn.sendall(b"".join(stranger(hunted) for _ in range(n)))
                except (BrokenPipeError, ConnectionResetError):
                    break
                next_crowd += n / a.crowd_hz
            if scanning and attacking and now >= next_attack:
                n = int((now - next_attack) * a.attack_hz) + 1
                out = b""
                for _ in range(n):
                    attacks += 1
                    if a.fake_rivals > 0:
                        out += fake_announcement(beacon_uuid, 1000 + attacks % a.fake_rivals, -60, attacks % 2 == 0)
                    if a.fake_finders > 0:
                        out += fake_announcement(beacon_uuid, 1000 + attacks % a.fake_finders, -45, attacks % 2 == 0)
                    if a.fake_reward:
                        out += fake_reward(a.fake_reward, attacks % 2 == 0)
                try:
                    conn.sendall(out)
                except (BrokenPipeError, ConnectionResetError):
                    break
                next_attack += n / a.attack_hz
            if scanning and a.stray_every > 0 and now >= next_stray:
                try:
                    conn.sendall(bytes([random.randint(0, 255)]))
                except (BrokenPipeError, ConnectionResetError):
                    break
                next_stray += a.stray_every
        conn.close()

if __name__ == "__main__":
    main()
