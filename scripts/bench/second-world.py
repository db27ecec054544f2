#!/usr/bin/env python3
"""An independent second walking world for the appliance (pirate-hunter).

A child walks a yard to a treasure chest holding the hunter; a tag in the chest
advertises iBeacon frames; this script writes what a Pi's controller would have
reported (btsnoop, H4) with the truth beside it, replays each capture through the
appliance and judges what it said.

  second-world.py write DIR --seeds 1-200 [--rate R] [world options]
  second-world.py score DIR
  second-world.py run   DIR --seeds 1-200 [--rate R] [world options]

Written without reference to the project's own simulation (Sources/Simulation) or its
benchmark, so the appliance can be judged on a world its developers did not tune on.
Everything of a walk is drawn from its seed (numpy Generator seeded from a hash of it);
the path, the radio, the losses and the bystanders draw from separate streams, so the
same seed walks the same path whatever the radio options or the rate.
"""

import argparse
import hashlib
import json
import math
import os
import statistics
import struct
import subprocess
import sys
import time
from uuid import UUID

import numpy as np

# ---------------------------------------------------------------- constants

YARD_W, YARD_H = 24.0, 18.0
TREASURE_UUID = bytes.fromhex("50495241" "5445" "2D48" "554E" "544552000000")
TREASURE_MAJOR, TREASURE_MINOR, MEASURED_POWER = 1, 1, -59
BTSNOOP_EPOCH_DELTA = 0x00DCDDB30F2F8000
CAPTURE_START_UNIX = 1751364000  # 2025-07-01 10:00:00 UTC, fixed
SENSITIVITY = -100.0
SCAN_SWITCH = 0.010  # the receiver changes channel every 10 ms (interval == window)
TIMELINE_STEP = 0.25
RATES_BY_SEED = [10.0, 4.0, 2.0, 1.0]
STAND_AT_CHEST = 30.0

DEFAULTS = {
    "exponent": (1.8, 2.6),      # log-distance path loss exponent
    "power_error": 4.0,          # tag's true 1 m power = -59 + U(-x, x)
    "body": (6.0, 15.0),         # body loss directly behind, dB
    "body_sharp": (1.5, 3.0),    # raised-cosine exponent (loss concentrated behind)
    "shadow": (2.0, 4.0),        # shadowing sd, dB
    "decorr": (1.0, 3.0),        # shadowing decorrelation distance along the path, m
    "walls_max": 2,              # 0..walls_max walls
    "wall_loss": (5.0, 10.0),    # dB per wall crossed
    "channel": (3.0, 6.0),       # per-tag channel offset half-spread, dB
    "k": (0.0, 6.0),             # Rician K factor, dB (in the clear)
    "sd": (6.0, 8.0),            # per-packet sd at a standstill, dB (channels+fading+rest)
    "env_drift": (0.02, 0.10),   # m/s of "virtual motion" decorrelating fading when still
    "loss": (0.10, 0.30),        # Gilbert-Elliott mean loss
    "burst": (0.2, 0.8),         # mean dwell in the bad state, s
    "outage_every": (60.0, 120.0),
    "outage_len": (0.5, 4.0),
    "phones": (1, 3),            # bystander advertisers (plus a foreign iBeacon half the time)
}


def seed_rng(seed, stream):
    h = hashlib.sha256(f"second-world/{seed}/{stream}".encode()).digest()
    return np.random.Generator(np.random.PCG64(int.from_bytes(h[:16], "big")))


def smoothstep(x):
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def wrap(a):
    return (a + math.pi) % (2.0 * math.pi) - math.pi


def seg_point_dist(a, b, p):
    ab = b - a
    L2 = float(ab @ ab)
    if L2 == 0.0:
        return float(np.hypot(*(p - a)))
    u = max(0.0, min(1.0, float((p - a) @ ab) / L2))
    return float(np.hypot(*(a + u * ab - p)))


def segs_cross(p1, p2, q1, q2):
    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
    d1, d2 = cross(q1, q2, p1), cross(q1, q2, p2)
    d3, d4 = cross(p1, p2, q1), cross(p1, p2, q2)
    return (d1 * d2 < 0) and (d3 * d4 < 0)


# ---------------------------------------------------------------- the path

class Path:
    """Key frames of the body position and (unwrapped) heading, linear between them."""

    def __init__(self):
        self.pt, self.px, self.py = [], [], []
        self.ht, self.hv = [], []

    def pos(self, t, p):
        self.pt.append(t); self.px.append(float(p[0])); self.py.append(float(p[1]))

    def head(self, t, h):
        self.ht.append(t); self.hv.append(h)

    def turn(self, t0, dur, target):
        """Turn from the current heading to target (shortest way) with a smoothstep."""
        h0 = self.hv[-1]
        h1 = h0 + wrap(target - h0)
        if self.ht[-1] < t0:
            self.head(t0, h0)
        for k in range(1, 9):
            self.head(t0 + dur * k / 8.0, h0 + (h1 - h0) * float(smoothstep(k / 8.0)))
        return h1

    def look_around(self, rng, t0, dur):
        """Turning in place: holds and quick turns to random headings."""
        t = t0
        while True:
            hold = rng.uniform(0.5, 3.0)
            tdur = rng.uniform(0.3, 0.9)
            if t + hold + tdur > t0 + dur:
                break
            t += hold
            self.turn(t, tdur, self.hv[-1] + rng.uniform(-2.6, 2.6))
            t += tdur
        self.head(t0 + dur, self.hv[-1])


def make_walk(seed):
    rng = seed_rng(seed, "path")
    W = {}
    chest = np.array([rng.uniform(3.0, YARD_W - 3.0), rng.uniform(3.0, YARD_H - 3.0)])
    hand_h = rng.uniform(0.8, 1.2)       # hunter height above the beacon
    arm = rng.uniform(0.25, 0.40)        # hunter held this far in front of the body
    while True:
        r0, a0 = rng.uniform(7.0, 11.0), rng.uniform(-math.pi, math.pi)
        start = chest + r0 * np.array([math.cos(a0), math.sin(a0)])
        if 0.6 <= start[0] <= YARD_W - 0.6 and 0.6 <= start[1] <= YARD_H - 0.6:
            break
    # walls: segments 2.5-8 m from the chest, not within 2 m of it nor 1 m of the start
    walls = []
    n_walls = int(rng.choice([0, 1, 2], p=[0.3, 0.4, 0.3]))
    wall_draws = []
    for _ in range(n_walls):
        for _try in range(200):
            rc, ac = rng.uniform(2.5, 8.0), rng.uniform(-math.pi, math.pi)
            c = chest + rc * np.array([math.cos(ac), math.sin(ac)])
            L, o = rng.uniform(3.0, 8.0), rng.uniform(0, math.pi)
            e = 0.5 * L * np.array([math.cos(o), math.sin(o)])
            a, b = c - e, c + e
            if (0.0 <= c[0] <= YARD_W and 0.0 <= c[1] <= YARD_H
                    and seg_point_dist(a, b, chest) >= 2.0 and seg_point_dist(a, b, start) >= 1.0):
                walls.append((a, b))
                wall_draws.append(rng.uniform(0.0, 1.0))  # loss quantile, used by the radio
                break

    def clear(p, q):
        return not any(segs_cross(p, q, a, b) for a, b in walls)

    def inside(q):
        return 0.6 <= q[0] <= YARD_W - 0.6 and 0.6 <= q[1] <= YARD_H - 0.6

    total = rng.uniform(240.0, 540.0)
    path = Path()
    t = 0.0
    p = start.copy()
    h = rng.uniform(-math.pi, math.pi)
    path.pos(t, p); path.head(t, h)
    # the game starts: the child stands a moment and looks around
    d0 = rng.uniform(2.0, 5.0)
    path.look_around(rng, t, d0)
    t += d0; path.pos(t, p)
    legs = []
    n_pause = 0

    def walk_to(q, v, t):
        L = float(np.hypot(*(q - p)))
        hd = math.atan2(q[1] - p[1], q[0] - p[0])
        path.turn(t, rng.uniform(0.2, 0.4), hd)
        t1 = t + L / v
        path.pos(t1, q)
        return t1

    while t < total - STAND_AT_CHEST - 20.0:
        r = float(np.hypot(*(p - chest)))
        ang = math.atan2(p[1] - chest[1], p[0] - chest[0])
        q = None
        kind = "wander"
        for _try in range(300):
            if rng.uniform() < 0.65:
                if r > 8.5 or (r > 5.6 and rng.uniform() < 0.5):
                    kind, r2 = "approach", rng.uniform(3.6, r - 2.0)
                else:
                    kind, r2 = "retreat", min(14.0, rng.uniform(r + 2.0, r + 7.0))
                a2 = ang + rng.normal(0.0, 0.6)
                cand = chest + r2 * np.array([math.cos(a2), math.sin(a2)])
            else:
                kind = "wander"
                a2 = rng.uniform(-math.pi, math.pi)
                cand = p + rng.uniform(2.5, 8.0) * np.array([math.cos(a2), math.sin(a2)])
            if (inside(cand) and seg_point_dist(p, cand, chest) >= 3.4 and clear(p, cand)
                    and all(seg_point_dist(a, b, cand) >= 0.5 for a, b in walls)):
                q = cand
                break
        if q is None:
            break
        v = rng.uniform(0.5, 1.5)
        t = walk_to(q, v, t)
        legs.append({"kind": kind, "speed": round(v, 2), "end": round(t, 2)})
        p = q
        if rng.uniform() < 0.35:
            dp = rng.uniform(2.0, 15.0)
            path.look_around(rng, t, dp)
            t += dp; path.pos(t, p)
            n_pause += 1
    # the last leg: to a point 5-10 m out with a clear line to the chest, then to the chest
    for _try in range(400):
        a2 = rng.uniform(-math.pi, math.pi)
        cand = chest + rng.uniform(5.0, 10.0) * np.array([math.cos(a2), math.sin(a2)])
        if (inside(cand) and clear(p, cand) and clear(cand, chest)
                and seg_point_dist(p, cand, chest) >= 3.4):
            t = walk_to(cand, rng.uniform(0.5, 1.5), t)
            p = cand
            break
    v = rng.uniform(0.5, 1.2)
    slow = rng.uniform(0.4, 1.0)
    dirc = (chest - p) / np.hypot(*(chest - p))
    off = rng.uniform(0.0, 0.25) * np.array([math.cos(a2 := rng.uniform(-math.pi, math.pi)),
                                              math.sin(a2)])
    stop_body = chest + off - arm * dirc
    Lf = float(np.hypot(*(stop_body - p)))
    hd = math.atan2(stop_body[1] - p[1], stop_body[0] - p[0])
    path.turn(t, rng.uniform(0.2, 0.4), hd)
    if Lf > 1.0:
        mid = p + (stop_body - p) * (Lf - 1.0) / Lf
        t += (Lf - 1.0) / v; path.pos(t, mid)
        t += 1.0 / (v * slow); path.pos(t, stop_body)
    else:
        t += Lf / v; path.pos(t, stop_body)
    stop = t
    # standing over the chest: small slow sways of the body
    tt = stop
    base = path.hv[-1]
    path.head(tt, base)
    while tt < stop + STAND_AT_CHEST - 2.0:
        hold = rng.uniform(1.0, 4.0)
        tdur = rng.uniform(0.5, 1.5)
        if tt + hold + tdur > stop + STAND_AT_CHEST:
            break
        tt += hold
        path.turn(tt, tdur, base + rng.uniform(-0.35, 0.35))
        tt += tdur
    end = stop + STAND_AT_CHEST
    path.head(end, path.hv[-1]); path.pos(end, stop_body)
    W.update(chest=chest, hand_h=hand_h, arm=arm, start=start, walls=walls,
             wall_draws=wall_draws, path=path, stop=stop, end=end, legs=legs,
             n_pause=n_pause, planned=total)
    return W


def kinematics(W, t):
    """Hand position, heading, horizontal and 3-D distance to the beacon at times t."""
    P = W["path"]
    bx = np.interp(t, P.pt, P.px)
    by = np.interp(t, P.pt, P.py)
    hd = np.interp(t, P.ht, P.hv)
    hx = bx + W["arm"] * np.cos(hd)
    hy = by + W["arm"] * np.sin(hd)
    dx, dy = W["chest"][0] - hx, W["chest"][1] - hy
    hr = np.hypot(dx, dy)
    d3 = np.sqrt(hr * hr + W["hand_h"] ** 2)
    return hx, hy, hd, dx, dy, hr, d3


# ---------------------------------------------------------------- the radio

def rician_db_stats(K, rng, n=200000):
    """Mean and sd in dB of a unit-mean-power Rician fade with factor K (linear)."""
    los = math.sqrt(K / (K + 1.0))
    sc = math.sqrt(1.0 / (K + 1.0))
    g = (rng.normal(size=n) + 1j * rng.normal(size=n)) / math.sqrt(2.0)
    x = 10.0 * np.log10(np.abs(los + sc * g) ** 2)
    return float(np.mean(x)), float(np.std(x))


def ar1_complex(rng, n, rho):
    w = (rng.normal(size=n) + 1j * rng.normal(size=n)) / math.sqrt(2.0)
    c = math.sqrt(1.0 - rho * rho)
    out = np.empty(n, dtype=complex)
    g = w[0]
    wl = (w * c).tolist()
    vals = [0j] * n
    for k in range(n):
        if k:
            g = rho * g + wl[k]
        vals[k] = g
    out[:] = vals
    return out


def ar1_real(rng, n, rho, sd):
    w = rng.normal(size=n)
    c = math.sqrt(1.0 - rho * rho)
    wl = (w * c * sd).tolist()
    x = float(w[0] * sd)
    vals = [0.0] * n
    for k in range(n):
        if k:
            x = rho * x + wl[k]
        vals[k] = x
    return np.array(vals)


def U(rng, rg):
    return float(rng.uniform(rg[0], rg[1]))


def make_radio(seed, W, opts, rate):
    rng = seed_rng(seed, "radio")
    R = {}
    R["rate"] = rate
    R["power_error"] = U(rng, (-opts["power_error"], opts["power_error"]))
    R["exponent"] = U(rng, opts["exponent"])
    R["body_max"] = U(rng, opts["body"])
    R["body_sharp"] = U(rng, opts["body_sharp"])
    R["shadow_sd"] = U(rng, opts["shadow"])
    R["decorr"] = U(rng, opts["decorr"])
    nw = min(len(W["walls"]), opts["walls_max"])
    lo, hi = opts["wall_loss"]
    R["wall_losses"] = [lo + (hi - lo) * q for q in W["wall_draws"][:nw]]
    a = U(rng, opts["channel"])
    mid = rng.uniform(-1.0, 1.0)
    offs = a * rng.permutation(np.array([-1.0, mid, 1.0]))
    R["channel_offsets"] = (offs - offs.mean()).tolist()
    R["k_db"] = U(rng, opts["k"])
    R["sd_target"] = U(rng, opts["sd"])
    K = 10 ** (R["k_db"] / 10.0)
    ff_mean, ff_sd = rician_db_stats(K, seed_rng(seed, "ksd"))
    # measured power is what a phone reads at 1 m on average, in dB: the fade's dB mean in
    # the clear is part of it (it is taken out below); only the extra fade when the line of
    # sight is blocked (K falling behind the body or a wall) is a further loss
    R["fading_mean_clear"] = ff_mean
    ch_sd = float(np.std(R["channel_offsets"]))
    R["fading_sd_clear"] = ff_sd
    R["residual_sd"] = math.sqrt(max(R["sd_target"] ** 2 - ff_sd ** 2 - ch_sd ** 2, 1.0))
    R["env_drift"] = U(rng, opts["env_drift"])
    R["coherence"] = 0.05       # m, about lambda/2.5 at 2.4 GHz
    R["tx_gap"] = float(rng.uniform(0.00035, 0.00045))
    R["scan_phase"] = float(rng.uniform(0.0, 3 * SCAN_SWITCH))
    R["loss"] = U(rng, opts["loss"])
    R["burst"] = U(rng, opts["burst"])
    R["loss_good"] = float(rng.uniform(0.02, min(0.06, R["loss"] * 0.5)))
    R["loss_bad"] = float(rng.uniform(0.6, 0.95))
    return R


def tag_packets(seed, W, R, opts, draw=""):
    """Times (s, world clock, at the host) and RSSIs of the treasure's reports heard.
    `draw` names other draws of the packets' timing, fading, noise and loss (the same walk,
    radio and shadowing): another half minute at the same spots."""
    rng = seed_rng(seed, "air" + draw)
    end = W["end"]
    T = 1.0 / R["rate"]
    n_est = int(end / T) + 10
    gaps = T + rng.uniform(0.0, 0.010, size=n_est)
    ev = rng.uniform(0.0, T) + np.concatenate([[0.0], np.cumsum(gaps[:-1])])
    ev = ev[ev < end]
    # each event sends 37, 38, 39 tx_gap apart; the receiver hears the one on its channel
    times, chans = [], []
    for k in range(3):
        tau = ev + k * R["tx_gap"]
        rx = np.floor((tau + R["scan_phase"]) / SCAN_SWITCH).astype(np.int64) % 3
        heard = rx == k
        times.append(tau[heard]); chans.append(np.full(int(heard.sum()), k))
    t = np.concatenate(times)
    ch = np.concatenate(chans)
    o = np.argsort(t, kind="stable")
    t, ch = t[o], ch[o]
    n = len(t)
    hx, hy, hd, dx, dy, hr, d3 = kinematics(W, t)
    # path (hand) length and the "virtual" displacement that decorrelates the fading
    grid = np.arange(0.0, end + 0.02, 0.02)
    gx, gy, *_ = kinematics(W, grid)
    s_grid = np.concatenate([[0.0], np.cumsum(np.hypot(np.diff(gx), np.diff(gy)))])
    s = np.interp(t, grid, s_grid)
    u = s + R["env_drift"] * t
    # log-distance from the tag's true power at 1 m
    p1 = MEASURED_POWER + R["power_error"]
    level = p1 - 10.0 * R["exponent"] * np.log10(d3)
    # the body: raised cosine of the angle off the heading, sharpened; none over the chest
    cosang = (np.cos(hd) * dx + np.sin(hd) * dy) / np.maximum(hr, 1e-9)
    body_frac = ((1.0 - cosang) / 2.0) ** R["body_sharp"] * smoothstep((hr - 0.5) / 0.7)
    level -= R["body_max"] * body_frac
    # walls: a step when the line of sight crosses one
    nwall_crossed = np.zeros(n)
    for (a, b), loss in zip(W["walls"], R["wall_losses"]):
        cross = np.array([segs_cross(np.array([x, y]), W["chest"], a, b)
                          for x, y in zip(hx, hy)], dtype=bool) if n else np.zeros(0, bool)
        level -= loss * cross
        nwall_crossed += cross
    # shadowing: Gudmundson (exponentially correlated) along the hand's path
    ds = 0.05
    ns = int(s_grid[-1] / ds) + 3
    sh = ar1_real(seed_rng(seed, "shadow"), ns, math.exp(-ds / R["decorr"]), R["shadow_sd"])
    level += np.interp(s, np.arange(ns) * ds, sh)
    # channels: fixed per-tag offsets
    level += np.array(R["channel_offsets"])[ch]
    # fast fading: Rician per channel, the scattered part an AR(1) in the displacement u;
    # the line of sight weakens (K falls) behind the body and behind walls
    du = 0.01
    nu = int((u[-1] if n else 0.0) / du) + 3
    rho = math.exp(-du / R["coherence"])
    frng = seed_rng(seed, "fading" + draw)
    g = np.stack([ar1_complex(frng, nu, rho) for _ in range(3)])
    gi = g[ch, np.minimum((u / du).astype(np.int64), nu - 1)]
    K = 10 ** (R["k_db"] / 10.0) * (1.0 - body_frac) * (0.25 ** nwall_crossed)
    hpow = np.abs(np.sqrt(K / (K + 1.0)) + np.sqrt(1.0 / (K + 1.0)) * gi) ** 2
    level += 10.0 * np.log10(np.maximum(hpow, 1e-12)) - R["fading_mean_clear"]
    # the rest: receiver noise, AGC, moving bystanders (Gaussian, sized for the target sd)
    level += rng.normal(0.0, R["residual_sd"], size=n)
    rssi = np.round(level)
    keep = rssi >= SENSITIVITY
    # Gilbert-Elliott loss in continuous time, sampled at each packet
    piB = (R["loss"] - R["loss_good"]) / (R["loss_bad"] - R["loss_good"])
    piB = min(max(piB, 0.0), 0.95)
    b = 1.0 / R["burst"]
    a_ = b * piB / (1.0 - piB)
    lrng = seed_rng(seed, "loss" + draw)
    state = lrng.uniform() < piB
    prev = t[0] if n else 0.0
    lost = np.zeros(n, bool)
    ur = lrng.uniform(size=(n, 2))
    for i in range(n):
        dt = t[i] - prev
        prev = t[i]
        mix = math.exp(-(a_ + b) * dt)
        pB = piB + ((1.0 if state else 0.0) - piB) * mix
        state = ur[i, 0] < pB
        lost[i] = ur[i, 1] < (R["loss_bad"] if state else R["loss_good"])
    outage = in_outage(t, R["outages"])
    stats = {"events": int(len(ev)), "heard_on_air": int(n),
             "below_sensitivity": int((~keep).sum()), "lost_chain": int(lost.sum()),
             "lost_outage": int(outage.sum())}
    keep &= ~lost
    keep &= ~outage
    stats["reported"] = int(keep.sum())
    t_host = t + rng.uniform(0.0003, 0.0015, size=n)
    return t_host[keep], np.clip(rssi[keep], -100, -20).astype(int), stats


def make_outages(seed, end, opts):
    rng = seed_rng(seed, "outage")
    out = []
    t = rng.uniform(10.0, opts["outage_every"][1])
    while t < end:
        L = U(rng, opts["outage_len"])
        out.append((float(t), float(t + L)))
        t += L + U(rng, opts["outage_every"])
    return out


def in_outage(t, outages):
    m = np.zeros(len(t), bool)
    for a, b in outages:
        m |= (t >= a) & (t < b)
    return m


# ---------------------------------------------------------------- bystanders

def bystanders(seed, W, outages, opts):
    rng = seed_rng(seed, "phones")
    recs = []
    n = int(rng.integers(opts["phones"][0], opts["phones"][1] + 1))
    kinds = ["microsoft", "apple-nearby", "apple-nearby", "microsoft"]
    if rng.uniform() < 0.5:
        kinds = ["foreign-ibeacon"] + kinds
        n += 1
    info = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        addr = bytearray(rng.integers(0, 256, size=6, dtype=np.uint8).tobytes())
        addr[5] = (addr[5] & 0x3F) | 0x40  # resolvable private address (little-endian: MSB last)
        rate = rng.uniform(0.5, 2.0)
        dist = rng.uniform(2.0, 15.0)
        if kind == "microsoft":
            body = bytes([0x02, 0x01, 0x1A, 0x1B, 0xFF, 0x06, 0x00, 0x01, 0x09, 0x20, 0x02]) + \
                rng.integers(0, 256, size=22, dtype=np.uint8).tobytes()
            evt, at = 0x03, 1
        elif kind == "apple-nearby":
            body = bytes([0x02, 0x01, 0x1A, 0x0A, 0xFF, 0x4C, 0x00, 0x10, 0x05]) + \
                rng.integers(0, 256, size=5, dtype=np.uint8).tobytes()
            evt, at = 0x00, 1
        else:
            uuid = bytes.fromhex("E2C56DB5DFFB48D2B060D0F5A71096E0")
            body = bytes([0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]) + uuid + \
                struct.pack(">HHb", 100, 7, -59)
            evt, at = 0x03, 0
            addr[5] &= 0x3F
        period = 1.0 / rate
        t = rng.uniform(0.0, period)
        while t < W["end"]:
            if rng.uniform() > 0.15 and not in_outage(np.array([t]), outages)[0]:
                r = -62.0 - 20.0 * math.log10(dist) + rng.normal(0.0, 6.0)
                r = int(round(r))
                if r >= -100:
                    recs.append((t, adv_report(evt, at, bytes(addr), body, max(-100, min(-20, r)))))
            t += period + rng.uniform(0.0, 0.010)
        info.append({"kind": kind, "rate": round(rate, 2), "distance": round(dist, 1)})
    return recs, info


# ---------------------------------------------------------------- the capture

def ibeacon_data():
    return bytes([0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]) + TREASURE_UUID + \
        struct.pack(">HHb", TREASURE_MAJOR, TREASURE_MINOR, MEASURED_POWER)


def adv_report(evt_type, addr_type, addr_le, data, rssi):
    params = bytes([0x02, 0x01, evt_type, addr_type]) + addr_le + bytes([len(data)]) + data + \
        struct.pack("b", int(rssi))
    return bytes([0x04, 0x3E, len(params)]) + params


def write_btsnoop(path, records):
    with open(path, "wb") as f:
        f.write(b"btsnoop\x00" + struct.pack(">II", 1, 1002))
        for us, pkt in records:
            f.write(struct.pack(">IIIIq", len(pkt), len(pkt), 3, 0, us + BTSNOOP_EPOCH_DELTA))
            f.write(pkt)


def parse_opts(a):
    o = dict(DEFAULTS)
    for key in DEFAULTS:
        v = getattr(a, key, None)
        if v is None:
            continue
        if key in ("walls_max",):
            o[key] = int(v)
        elif key == "power_error":
            o[key] = float(v)
        elif key == "phones":
            lo, hi = v.split(":")
            o[key] = (int(lo), int(hi))
        else:
            lo, hi = v.split(":")
            o[key] = (float(lo), float(hi))
    return o


def calibration(seed, W, R, opts):
    """The set-up's calibration (docs/raspberry-pi.md, "Calibrate"): the parent holds the
    hunter over the hidden chest as the child will hold it (the walk's own stand: its spot,
    heading and shadowing) and reads the level after half a minute and at least 30 readings
    (the page's "Calibrate at 1 m"). Other draws of the fading, noise and loss than the
    walk's (another time); the mean of the readings in dB, rounded as the page writes it."""
    readings = []
    k = 0
    while len(readings) < 30 and k < 20:
        tt, rr, _ = tag_packets(seed, W, R, opts, draw=f"/calibration/{k}")
        readings += [int(r) for t, r in zip(tt, rr) if W["stop"] + 1.0 <= t <= W["end"]]
        k += 1
    return int(round(float(np.mean(readings)))) if readings else None


def calibrated_config(example_path, power):
    """The example configuration with the treasure's tag calibrated (`tags[].power`), as the
    parent's page writes it."""
    with open(example_path) as f:
        cfg = json.load(f)
    uuid = str(UUID(bytes=TREASURE_UUID)).upper()
    cfg["tags"] = [{"region": f"{uuid}:{TREASURE_MAJOR}:{TREASURE_MINOR}", "power": power}]
    return cfg


def write_walk(outdir, seed, opts, fixed_rate=None, calibrate_with=None):
    rate = fixed_rate if fixed_rate else RATES_BY_SEED[seed % 4]
    W = make_walk(seed)
    R = make_radio(seed, W, opts, rate)
    R["outages"] = make_outages(seed, W["end"], opts)
    tt, rr, stats = tag_packets(seed, W, R, opts)
    tag_addr = bytes(seed_rng(seed, "addr").integers(0, 256, size=6, dtype=np.uint8).tobytes())
    tag_addr = tag_addr[:5] + bytes([tag_addr[5] | 0xC0])  # static random address
    data = ibeacon_data()
    recs = [(float(t), adv_report(0x03, 1, tag_addr, data, int(r))) for t, r in zip(tt, rr)]
    prec, pinfo = bystanders(seed, W, R["outages"], opts)
    recs += prec
    recs.sort(key=lambda x: x[0])
    t0 = recs[0][0]
    base = CAPTURE_START_UNIX * 1_000_000
    write_btsnoop(os.path.join(outdir, f"walk-{seed}.btsnoop"),
                  [(base + int(round((t - t0) * 1e6)), p) for t, p in recs])
    n_tl = int((W["end"] - t0) / TIMELINE_STEP) + 1
    tl_t = t0 + TIMELINE_STEP * np.arange(n_tl)
    *_, d3 = kinematics(W, tl_t)
    # per-packet sd at a standstill (a check of the fading model): the same channel
    # mix, fading and rest as drawn, without the distance, body and shadow terms
    truth = {
        "seed": seed,
        "rate": rate,
        "stop": round(W["stop"] - t0, 3),
        "end": round(W["end"] - t0, 3),
        "step": TIMELINE_STEP,
        "distance": [round(float(x), 3) for x in d3],
        "world": {
            "yard": [YARD_W, YARD_H],
            "chest": [round(float(x), 2) for x in W["chest"]],
            "start": [round(float(x), 2) for x in W["start"]],
            "hand_height": round(W["hand_h"], 3),
            "arm": round(W["arm"], 3),
            "walls": [[[round(float(x), 2) for x in a], [round(float(x), 2) for x in b], round(l, 1)]
                      for (a, b), l in zip(W["walls"], R["wall_losses"])],
            "legs": len(W["legs"]),
            "pauses": W["n_pause"],
            "true_power_1m": round(MEASURED_POWER + R["power_error"], 2),
            "power_error": round(R["power_error"], 2),
            "exponent": round(R["exponent"], 3),
            "body_max_db": round(R["body_max"], 2),
            "body_sharpness": round(R["body_sharp"], 2),
            "shadow_sd": round(R["shadow_sd"], 2),
            "shadow_decorrelation_m": round(R["decorr"], 2),
            "channel_offsets_db": [round(x, 2) for x in R["channel_offsets"]],
            "rician_k_db": round(R["k_db"], 2),
            "fading_sd_clear": round(R["fading_sd_clear"], 2),
            "residual_sd": round(R["residual_sd"], 2),
            "per_packet_sd_target": round(R["sd_target"], 2),
            "env_drift_mps": round(R["env_drift"], 3),
            "loss_mean": round(R["loss"], 3),
            "loss_good": round(R["loss_good"], 3),
            "loss_bad": round(R["loss_bad"], 3),
            "burst_s": round(R["burst"], 3),
            "outages": [[round(a - t0, 2), round(b - t0, 2)] for a, b in R["outages"]],
            "bystanders": pinfo,
            "packets": stats,
            "options": {k: v for k, v in opts.items()},
        },
    }
    if calibrate_with:
        power = calibration(seed, W, R, opts)
        truth["world"]["calibrated_power"] = power
        if power is not None:
            with open(os.path.join(outdir, f"walk-{seed}.config.json"), "w") as f:
                json.dump(calibrated_config(calibrate_with, power), f, indent=1)
    with open(os.path.join(outdir, f"walk-{seed}.truth.json"), "w") as f:
        json.dump(truth, f)
    return truth


def seed_range(s):
    if "-" in s:
        a, b = s.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(x) for x in s.split(",")]


def cmd_write(a):
    os.makedirs(a.dir, exist_ok=True)
    opts = parse_opts(a)
    for seed in seed_range(a.seeds):
        tr = write_walk(a.dir, seed, opts, a.rate, a.config if a.calibrated else None)
        p = tr["world"]["packets"]
        print(f"walk-{seed}: {tr['rate']:g} Hz, {tr['end']:.0f} s, stop {tr['stop']:.1f} s, "
              f"{p['reported']}/{p['events']} reported", file=sys.stderr)


# ---------------------------------------------------------------- replay

def cmd_replay(a):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    # PIRATE_HUNTER=PATH: another build of the appliance (a before-and-after on the same walks)
    exe = os.environ.get("PIRATE_HUNTER") or os.path.join(root, ".build/release/pirate-hunter")
    if not os.path.exists(exe):
        subprocess.run(["swift", "build", "-c", "release", "--product", "pirate-hunter"],
                       cwd=root, check=True)
    outdir = os.path.abspath(a.dir)
    cache = os.path.join(outdir, "cache")
    t0 = time.time()
    for seed in seed_range(a.seeds):
        cap = os.path.join(outdir, f"walk-{seed}.btsnoop")
        # a walk calibrated at set-up (write --calibrated) has its own configuration
        own = os.path.join(outdir, f"walk-{seed}.config.json")
        cfg = own if os.path.exists(own) else os.path.abspath(a.config)
        with open(os.path.join(outdir, f"walk-{seed}.jsonl"), "w") as out, \
                open(os.devnull, "w") as err:
            subprocess.run([exe, "replay", cap, "--hunt", "--json", "--config",
                            cfg, "--voice-dir", "voices",
                            "--cache-dir", cache], cwd=root, stdout=out, stderr=err)
    print(f"replayed in {time.time() - t0:.0f} s", file=sys.stderr)


# ---------------------------------------------------------------- scoring

class Truth:
    def __init__(self, tr):
        self.d = np.array(tr["distance"])
        self.step = tr["step"]
        self.stop = tr["stop"]
        self.end = tr["end"]
        self.rate = tr["rate"]
        self.tt = self.step * np.arange(len(self.d))

    def at(self, t):
        return float(np.interp(t, self.tt, self.d))

    def window(self, t):
        ts = t - self.step * np.arange(0, 41)
        ts = ts[ts >= 0.0]
        return np.interp(ts, self.tt, self.d)


def approaches(tr):
    d = tr.d
    out = []
    i = 0
    n = len(d)
    while i < n - 1:
        j = i
        while j + 1 < n and d[j + 1] < d[j]:
            j += 1
        if j > i and d[i] - d[j] >= 3.0 and (j - i) * tr.step >= 6.0:
            out.append((i * tr.step, j * tr.step))
        i = j + 1 if j > i else i + 1
    return out


HEARD_KINDS = {"warmer", "proximity-near", "proximity-immediate", "treasure-found"}


def judge(name, t, tr, entered_before):
    d = tr.at(t)
    if name in ("region-left", "proximity-unknown"):
        return "always"
    if name == "region-entered":
        return "again" if entered_before else None
    if name == "warmer":
        w = tr.window(t)
        return "not 1 m closer in 10 s" if w.max() - d < 1.0 else None
    if name == "colder":
        w = tr.window(t)
        return "not 1 m farther in 10 s" if d - w.min() < 1.0 else None
    if name == "proximity-near":
        if t >= tr.stop:
            return "at the chest"
        return "d > 5 m" if d > 5.0 else None
    if name == "proximity-far":
        return "d < 2 m" if d < 2.0 else None
    if name in ("proximity-immediate", "treasure-found"):
        return "d >= 1.5 m" if d >= 1.5 else None
    return None


def rate_group(r):
    return "10 Hz" if r >= 10 else ("4 Hz" if r >= 4 else "1-2 Hz")


def cmd_score(a):
    d = a.dir
    seeds = sorted(int(f[5:-11]) for f in os.listdir(d)
                   if f.startswith("walk-") and f.endswith(".truth.json"))
    walks = []
    for seed in seeds:
        jp = os.path.join(d, f"walk-{seed}.jsonl")
        if not os.path.exists(jp):
            continue
        with open(os.path.join(d, f"walk-{seed}.truth.json")) as f:
            tj = json.load(f)
        tr = Truth(tj)
        says, ranges = [], []
        with open(jp) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                if e.get("event") == "say":
                    says.append((float(e["t"]), e.get("event_name")))
                elif e.get("event") == "range" and e.get("distance") is not None:
                    ranges.append((float(e["t"]), float(e["distance"]), float(e.get("sigma") or 0)))
        false = []
        entered = False
        kinds_said = {}
        for t, name in says:
            kinds_said[name] = kinds_said.get(name, 0) + 1
            why = judge(name, t, tr, entered)
            if name == "region-entered":
                entered = True
            if why:
                false.append({"seed": seed, "t": t, "kind": name, "why": why, "d": tr.at(t)})
        apps = approaches(tr)
        heard = 0
        for s0, s1 in apps:
            if any(name in HEARD_KINDS and s0 <= t <= s1 + 3.0 for t, name in says):
                heard += 1
        finds = [t for t, name in says if name == "treasure-found" and tr.at(t) < 1.5]
        lag = finds[0] - tr.stop if finds else None
        # The appliance's interval is log-normal: [D·e^-l, D·e^+l], its "sigma" the band's
        # half-width in metres, D·sinh(l) (Sources/Ranging/Types.swift); so l = asinh(S/D).
        cov_add = sum(1 for t, D, S in ranges if D - S <= tr.at(t) <= D + S)
        cov_mul = sum(1 for t, D, S in ranges
                      if D > 0 and D * math.exp(-math.asinh(S / D)) <= tr.at(t) <= D * math.exp(math.asinh(S / D)))
        ratio = [S / D for t, D, S in ranges if D > 0]
        walks.append({"seed": seed, "rate": tr.rate, "hours": tr.end / 3600.0, "false": false,
                      "approaches": len(apps), "heard": heard, "lag": lag, "ranges": len(ranges),
                      "cov_add": cov_add, "cov_mul": cov_mul, "ratio": ratio,
                      "says": len(says), "kinds_said": kinds_said,
                      "range_err": [math.log(D / max(tr.at(t), 0.1)) for t, D, S in ranges if D > 0]})
    if not walks:
        print("no replays scored in", d)
        return
    report(walks, d)


def summarize(ws):
    hours = sum(w["hours"] for w in ws)
    nf = sum(len(w["false"]) for w in ws)
    ap = sum(w["approaches"] for w in ws)
    he = sum(w["heard"] for w in ws)
    lags = [w["lag"] for w in ws if w["lag"] is not None]
    nr = sum(w["ranges"] for w in ws)
    ca = sum(w["cov_add"] for w in ws)
    cm = sum(w["cov_mul"] for w in ws)
    says = sum(w["says"] for w in ws)
    return {"n": len(ws), "hours": hours, "false": nf, "fph": nf / hours if hours else 0,
            "ap": ap, "heard": he, "recall": he / ap if ap else float("nan"),
            "finds": len(lags), "lag": statistics.median(lags) if lags else float("nan"),
            "lag_p90": float(np.percentile(lags, 90)) if lags else float("nan"),
            "ranges": nr, "cov": ca / nr if nr else float("nan"),
            "cov_mul": cm / nr if nr else float("nan"), "says_ph": says / hours if hours else 0}


def report(walks, d):
    s = summarize(walks)
    print(f"## Second world: {d}\n")
    print("| walks | hours | lines/h | false lines | false/h | approaches heard | finds | "
          "median find lag | p90 lag | range reports | interval covers |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print(f"| {s['n']} | {s['hours']:.2f} | {s['says_ph']:.0f} | {s['false']} | {s['fph']:.1f} | "
          f"{s['heard']}/{s['ap']} ({100 * s['recall']:.0f} %) | {s['finds']}/{s['n']} | "
          f"{s['lag']:.1f} s | {s['lag_p90']:.1f} s | {s['ranges']} | {100 * s['cov_mul']:.1f} % |")
    ratio = [r for w in walks for r in w["ratio"]]
    if ratio:
        med = statistics.median(ratio)
        print(f"\nsigma/distance: median {med:.2f}; the interval read as D ± S would cover "
              f"{100 * s['cov']:.1f} %")
    err = [e for w in walks for e in w["range_err"]]
    if err:
        print(f"range error ln(D/d): median {statistics.median(err):+.2f}, "
              f"mean |.| {np.mean(np.abs(err)):.2f}")
    print("\n### By rate\n")
    print("| rate | walks | hours | false/h | approaches heard | finds | median lag | coverage |")
    print("|---|---|---|---|---|---|---|---|")
    for g in ("10 Hz", "4 Hz", "1-2 Hz"):
        ws = [w for w in walks if rate_group(w["rate"]) == g]
        if not ws:
            continue
        t = summarize(ws)
        print(f"| {g} | {t['n']} | {t['hours']:.2f} | {t['fph']:.1f} ({t['false']}) | "
              f"{t['heard']}/{t['ap']} ({100 * t['recall']:.0f} %) | {t['finds']}/{t['n']} | "
              f"{t['lag']:.1f} s | {100 * t['cov_mul']:.1f} % |")
    rates = sorted({w["rate"] for w in walks}, reverse=True)
    if len(rates) > 1:
        print("\n| rate (exact) | walks | false/h | approaches heard | finds | median lag |")
        print("|---|---|---|---|---|---|")
        for r in rates:
            t = summarize([w for w in walks if w["rate"] == r])
            print(f"| {r:g} Hz | {t['n']} | {t['fph']:.1f} | {t['heard']}/{t['ap']} "
                  f"({100 * t['recall']:.0f} %) | {t['finds']}/{t['n']} | {t['lag']:.1f} s |")
    allf = [f for w in walks for f in w["false"]]
    said = {}
    for w in walks:
        for k, v in w["kinds_said"].items():
            said[k] = said.get(k, 0) + v
    print("\n### False lines by kind\n")
    print("| kind | why | count | per hour | of that kind said | examples (seed, t, d) |")
    print("|---|---|---|---|---|---|")
    groups = {}
    for f in allf:
        groups.setdefault((f["kind"], f["why"]), []).append(f)
    for (k, why), fs in sorted(groups.items(), key=lambda x: -len(x[1]))[:10]:
        ex = ", ".join(f"({f['seed']}, {f['t']:.1f}, {f['d']:.2f})" for f in fs[:3])
        print(f"| {k} | {why} | {len(fs)} | {len(fs) / s['hours']:.2f} | {said.get(k, 0)} | {ex} |")
    print("\nlines said by kind: " + ", ".join(f"{k} {v}" for k, v in
                                               sorted(said.items(), key=lambda x: -x[1])))
    with open(os.path.join(d, "false-lines.tsv"), "w") as f:
        f.write("seed\tt\tkind\twhy\ttrue_distance\n")
        for x in allf:
            f.write(f"{x['seed']}\t{x['t']:.2f}\t{x['kind']}\t{x['why']}\t{x['d']:.2f}\n")
    print(f"\n### False lines ({len(allf)}; also in {os.path.join(d, 'false-lines.tsv')})\n")
    print("seed | t | kind | true distance")
    for x in allf:
        print(f"{x['seed']} | {x['t']:.2f} | {x['kind']} | {x['d']:.2f}")


def cmd_run(a):
    cmd_write(a)
    cmd_replay(a)
    cmd_score(a)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    def world(p):
        p.add_argument("dir")
        p.add_argument("--seeds", required=True, help="A-B or a,b,c")
        p.add_argument("--rate", type=float, default=None, help="advertised rate, Hz (default: 10/4/2/1 by seed %% 4)")
        for key, v in DEFAULTS.items():
            flag = "--" + key.replace("_", "-")
            if isinstance(v, tuple):
                p.add_argument(flag, dest=key, default=None, help=f"LO:HI (default {v[0]:g}:{v[1]:g})")
            else:
                p.add_argument(flag, dest=key, default=None, help=f"(default {v:g})")

    def config(p):
        p.add_argument("--config", default="config/hunter.example.json",
                       help="the appliance's configuration for the replays (default: %(default)s)")

    def calibrated(p):
        p.add_argument("--calibrated", action="store_true",
                       help="the chest's tag calibrated at set-up over the hidden chest "
                            "(walk-SEED.config.json: the --config with tags[].power)")

    p = sub.add_parser("write", help="write captures and truths")
    world(p); config(p); calibrated(p)
    p = sub.add_parser("run", help="write, replay through the appliance, score")
    world(p); config(p); calibrated(p)
    p = sub.add_parser("replay", help="replay written captures through the appliance")
    p.add_argument("dir"); p.add_argument("--seeds", required=True); config(p)
    p = sub.add_parser("score", help="score the appliance's jsonl against the truths")
    p.add_argument("dir")
    a = ap.parse_args()
    {"write": cmd_write, "run": cmd_run, "replay": cmd_replay, "score": cmd_score}[a.cmd](a)


if __name__ == "__main__":
    main()
