#!/usr/bin/env python3
"""What a learned warmer detector can hear on the walks (docs/ranging.md, "Fifth round").

Not part of the appliance or CI: a ceiling for the hand-written tests. Gradient-boosted
trees (LightGBM, from PyPI) learn from the tuning walks when "warmer" would be true (the
child now at least 1 m closer than at some moment of the last 10 s), from causal statistics
of the readings (window means, least-squares slopes and their z, block differences); on
the held-out walks a warmer is said when the score passes a threshold (at most one per
6 s, until the child stops at the chest) and scored like the engine's own warmers:
false warmers an hour and the approach legs heard at 10 / 4 / 1-2 Hz.

    WALK_EXPORT=DIR:1:1000 .build/release/RangingBenchmark
    WALK_EXPORT=DIR:10001:200 .build/release/RangingBenchmark
    python3 -m venv V && V/bin/pip install numpy lightgbm
    V/bin/python scripts/bench/learned-ceiling.py DIR [--relative]

--relative leaves out the absolute level, the rate and the noise (the model then cannot
learn where in the yard or how loud a tag the walks favour).
"""
import sys
import numpy as np
import lightgbm as lgb

WINDOWS = [1, 2, 3, 4, 6, 8, 10, 15, 20, 30]
BLOCKS = [(0, 1), (1, 2), (2, 3), (3, 5), (5, 8), (8, 12), (12, 18), (18, 30)]
STEP = 0.25


def load(path):
    with open(path) as f:
        head = f.readline().split()
        walk = dict(seed=int(head[0]), rate=float(head[1]), stop=float(head[2]), duration=float(head[3]))
        reports, truth, engine = [], [], []
        for line in f:
            a = line.split()
            if a[0] == 'r':
                reports.append((float(a[1]), float(a[2])))
            elif a[0] == 'p':
                truth.append((float(a[1]), float(a[2])))
            elif a[0] == 'w':
                engine.append(float(a[1]))
    walk.update(reports=np.array(reports), truth=np.array(truth), engine=np.array(engine))
    return walk


def features(walk):
    t, v = walk['reports'][:, 0], walk['reports'][:, 1]
    g = walk['truth'][:, 0]
    sums = [np.concatenate([[0], np.cumsum(x)]) for x in (np.ones_like(t), t, v, t * t, t * v, v * v)]

    def stats(lo, hi):
        a, b = np.searchsorted(t, lo, side='right'), np.searchsorted(t, hi, side='right')
        n, st, sv, stt, stv, svv = (s[b] - s[a] for s in sums)
        with np.errstate(invalid='ignore', divide='ignore'):
            m = sv / n
            sxx = stt - st * st / n
            sxy = stv - st * m
            syy = svv - sv * m
            slope = sxy / sxx
            residual = (syy - slope * sxy) / np.maximum(n - 2, 1)
        return n, m, slope, sxx, residual

    n30, _, _, _, r30 = stats(g - 30, g)
    noise = np.maximum(np.nan_to_num(np.sqrt(np.where(n30 > 4, r30, 49.0)), nan=7.0), 2.0)
    out = {'rate': np.full(len(g), walk['rate']), 'noise': noise}
    for w in WINDOWS:
        n, m, slope, sxx, residual = stats(g - w, g)
        out[f'n{w}'] = n
        out[f'b{w}'] = np.nan_to_num(slope)
        with np.errstate(invalid='ignore', divide='ignore'):
            out[f'z{w}'] = np.nan_to_num(slope / (noise / np.sqrt(np.maximum(sxx, 1e-9))))
            out[f'r{w}'] = np.nan_to_num(np.sqrt(np.maximum(residual, 0)) / noise)
    blocks = {b: stats(g - b[1], g - b[0])[:2] for b in BLOCKS}

    def difference(a, b, name):
        (na, ma), (nb, mb) = a, b
        ok = (na > 0) & (nb > 0)
        with np.errstate(invalid='ignore', divide='ignore'):
            d = ma - mb
            out['d' + name] = np.where(ok, d, 0)
            out['dz' + name] = np.where(ok, d / (noise * np.sqrt(1 / np.maximum(na, 1) + 1 / np.maximum(nb, 1))), 0)

    for i, a in enumerate(BLOCKS):
        for b in BLOCKS[i + 1:]:
            difference(blocks[a], blocks[b], f'{a[0]}_{a[1]}v{b[0]}_{b[1]}')
    for w in (2, 3, 5):
        for lo, hi in ((5, 10), (10, 20), (3, 13)):
            difference(stats(g - w, g)[:2], stats(g - hi, g - lo)[:2], f'last{w}v{lo}_{hi}')
    n60, m60 = stats(g - 60, g)[:2]
    n3, m3 = stats(g - 3, g)[:2]
    out['lvl60'] = np.nan_to_num(m3 - m60)
    out['lvlabs'] = np.nan_to_num(m3, nan=-90)
    return out


def labels(walk):
    d = walk['truth'][:, 1]
    k = int(round(10 / STEP))
    farthest = np.array([d[max(0, i - k):i + 1].max() for i in range(len(d))])
    return (farthest - d >= 1.0).astype(np.int8)


def legs(walk):
    g, d = walk['truth'][:, 0], walk['truth'][:, 1]
    out, start, start_d, previous = [], 0, d[0], d[0]
    for i in range(1, len(d)):
        if d[i] >= previous - 0.01:
            if start_d - previous >= 3 and g[i - 1] - g[start] >= 6:
                out.append((g[start], g[i - 1]))
            start, start_d = i, d[i]
        previous = d[i]
    if start_d - previous >= 3 and walk['duration'] - g[start] >= 6:
        out.append((g[start], walk['duration']))
    return out


def said(walk, times, fire, spacing=6.0):
    out, last = [], -1e9
    for i in np.nonzero(fire)[0]:
        if times[i] - last >= spacing and times[i] < walk['stop']:
            out.append(times[i])
            last = times[i]
    return np.array(out)


def score(walks, lines):
    hours, false = 0.0, 0
    heard = {10: [0, 0], 4: [0, 0], 1: [0, 0]}
    for (walk, truth, legs_), told in zip(walks, lines):
        hours += walk['duration'] / 3600
        false += sum(truth[min(int(round(t / STEP)), len(truth) - 1)] == 0 for t in told)
        rate = 1 if walk['rate'] <= 2 else int(walk['rate'])
        for a, b in legs_:
            heard[rate][1] += 1
            heard[rate][0] += int(len(told) > 0 and bool(np.any((told >= a) & (told <= b + 3))))
    return f'{false / hours:.2f} false warmers/h, heard ' + ' / '.join(f'{h / max(n, 1):.2f}' for h, n in heard.values())


def matrix(walk, names):
    f = features(walk)
    return np.nan_to_num(np.stack([f[k] for k in names], 1).astype(np.float64), nan=0, posinf=1e4, neginf=-1e4)


def main():
    directory = sys.argv[1]
    relative = '--relative' in sys.argv
    names = sorted(features(load(f'{directory}/walk-1.txt')))
    if relative:
        names = [n for n in names if n not in ('lvlabs', 'lvl60', 'noise', 'rate') and not n.startswith('n')]
    x, y = [], []
    for seed in range(1, 1001):
        walk = load(f'{directory}/walk-{seed}.txt')
        keep = walk['truth'][:, 0] < walk['stop']
        x.append(matrix(walk, names)[keep])
        y.append(labels(walk)[keep])
    model = lgb.LGBMClassifier(n_estimators=400, learning_rate=0.05, num_leaves=63, min_child_samples=200,
                               subsample=0.5, subsample_freq=1, colsample_bytree=0.5, random_state=7, verbose=-1)
    model.fit(np.concatenate(x), np.concatenate(y))
    walks, scores = [], []
    for seed in range(10001, 10201):
        walk = load(f'{directory}/walk-{seed}.txt')
        walks.append((walk, labels(walk), legs(walk)))
        scores.append(model.predict_proba(matrix(walk, names))[:, 1])
    print('engine (its own warmers, one per 6 s):', score(walks, [said(w, w['engine'], np.ones(len(w['engine']), bool)) for w, _, _ in walks]))
    for threshold in (0.93, 0.94, 0.95, 0.96, 0.97):
        lines = [said(w, w['truth'][:, 0], p >= threshold) for (w, _, _), p in zip(walks, scores)]
        print(f'learned, score >= {threshold}:', score(walks, lines))


if __name__ == '__main__':
    main()
