#!/usr/bin/env python3
"""Makes voices/arrr.wav: a short pirate "arrr" from eSpeak NG plus signal processing.

Usage: python3 scripts/make-arrr.py [OUT.wav]   (default: voices/arrr.wav next to this script)
Needs python3 and libespeak-ng (scripts/deps.sh); standard library only, deterministic.

Steps: eSpeak NG speaks "Arrrrr!" with our pirate voice (voices/pirate) at a low pitch and a
slow rate; leading/trailing silence is trimmed; the pitch bends down ~20 % across the sound
(variable-rate resampling); a 31 Hz amplitude growl and a soft tanh saturation add gravel;
a 5 ms fade-in and 80 ms fade-out avoid clicks; the peak is normalised to -3 dBFS.
Output: 22050 Hz, mono, 16-bit PCM (the mixer's own format: no resampling at run time).
"""
import ctypes
import math
import os
import struct
import sys
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
VOICES = os.path.join(os.path.dirname(HERE), "voices")
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(VOICES, "arrr.wav")
RATE = 22050

lib = ctypes.CDLL("libespeak-ng.so.1")
CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)
samples = []


def collect(wav, count, events):
    if count > 0:
        samples.extend(wav[i] for i in range(count))
    return 0


callback = CALLBACK(collect)
AUDIO_OUTPUT_SYNCHRONOUS, INITIALIZE_DONT_EXIT = 2, 0x8000
if lib.espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, None, INITIALIZE_DONT_EXIT) != RATE:
    sys.exit("make-arrr: eSpeak NG did not start at 22050 Hz (is espeak-ng-data installed?)")
lib.espeak_SetSynthCallback(callback)
# espeak_SetVoiceByFile lowercases and truncates paths at 59 bytes: use a short copy.
voice_copy = "/tmp/ph-arrr-voice-%d" % os.getpid()
with open(os.path.join(VOICES, "pirate"), "rb") as src, open(voice_copy, "wb") as dst:
    dst.write(src.read())
if lib.espeak_SetVoiceByFile(voice_copy.encode()) != 0:
    sys.exit("make-arrr: eSpeak NG refused voices/pirate")
os.unlink(voice_copy)
ESPEAK_RATE, ESPEAK_PITCH, ESPEAK_RANGE = 1, 3, 4
lib.espeak_SetParameter(ESPEAK_RATE, 120, 0)
lib.espeak_SetParameter(ESPEAK_PITCH, 35, 0)
lib.espeak_SetParameter(ESPEAK_RANGE, 70, 0)
text = b"Arrrrr!\0"
lib.espeak_Synth(text, len(text), 0, 1, 0, 1, None, None)  # POS_CHARACTER, espeakCHARS_UTF8
if not samples:
    sys.exit("make-arrr: eSpeak NG produced no sound")

# Trim silence (below -40 dB of the peak).
peak = max(abs(s) for s in samples)
limit = peak * 0.01
first = next(i for i, s in enumerate(samples) if abs(s) > limit)
last = len(samples) - next(i for i, s in enumerate(reversed(samples)) if abs(s) > limit)
x = [s / 32768.0 for s in samples[first:last]]

# Pitch bend: read the source faster at the start (1.05x) and slower at the end (0.85x).
out = []
position = 0.0
n = len(x)
while position < n - 1:
    progress = position / n
    step = 1.05 - 0.20 * progress
    i = int(position)
    frac = position - i
    out.append(x[i] + (x[i + 1] - x[i]) * frac)
    position += step

# Growl and grit.
for i in range(len(out)):
    t = i / RATE
    growl = 1.0 - 0.35 * (0.5 + 0.5 * math.sin(2 * math.pi * 31 * t))
    out[i] = math.tanh(2.2 * out[i] * growl) / math.tanh(2.2)

# Fades and -3 dBFS peak.
fade_in, fade_out = int(0.005 * RATE), int(0.080 * RATE)
for i in range(min(fade_in, len(out))):
    out[i] *= i / fade_in
for i in range(min(fade_out, len(out))):
    out[len(out) - 1 - i] *= i / fade_out
top = max(abs(v) for v in out) or 1.0
gain = (10 ** (-3 / 20)) / top
pcm = b"".join(struct.pack("<h", int(round(max(-1.0, min(1.0, v * gain)) * 32767))) for v in out)

with wave.open(OUT, "wb") as w:
    w.setnchannels(1)
    w.setsampwidth(2)
    w.setframerate(RATE)
    w.writeframes(pcm)
print("%s: %.2f s, %d frames at %d Hz" % (OUT, len(out) / RATE, len(out), RATE))
