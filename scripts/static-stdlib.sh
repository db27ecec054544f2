#!/usr/bin/env bash
# Prints --static-swift-stdlib when this Swift links a program with its runtime inside
# (swift.org's toolchains), else nothing (Debian 13's swiftlang 6.0.3: the static link
# fails, so the binary links Debian's libswiftlang and the package depends on it).
# Usage: scripts/static-stdlib.sh [SWIFTC]   (default: swiftc next to $SWIFT, else on PATH)
# The answer is kept beside the build (.build/static-stdlib.<hash of both below>).
set -euo pipefail
cd "$(dirname "$0")/.."
swiftc=${1:-}
if [ -z "$swiftc" ]; then
    swift=$(command -v "${SWIFT:-swift}" || true)
    if [ -n "$swift" ] && [ -x "$(dirname "$swift")/swiftc" ]; then swiftc=$(dirname "$swift")/swiftc; else swiftc=swiftc; fi
fi
# The compiler and the static C++ library its static link needs (libstdc++-*-dev): the
# answer changes when either does.
key=$({ "$swiftc" --version 2>&1; ls /usr/lib/gcc/*/*/libstdc++.a 2>/dev/null; } | sha256sum | cut -c1-12)
memo=.build/static-stdlib.$key
if [ -f "$memo" ]; then cat "$memo"; exit 0; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo 'print("ahoy")' > "$work/main.swift"
answer=""
if "$swiftc" -static-stdlib "$work/main.swift" -o "$work/main" >"$work/log" 2>&1 \
    && ! ldd "$work/main" 2>/dev/null | grep -q libswiftCore \
    && [ "$("$work/main")" = ahoy ]; then
    answer=--static-swift-stdlib
fi
mkdir -p .build
echo "$answer" > "$memo"
echo "$answer"
