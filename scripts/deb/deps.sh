#!/usr/bin/env bash
# The Debian tools make deb uses, installed only when one is missing (as scripts/deps.sh
# does for the build): dpkg-dev (dpkg-shlibdeps), binutils (strip), lintian; with
# --mmdebstrap also mmdebstrap, for the tests in fresh Debian roots (scripts/deb/test.sh,
# scripts/trixie/). A Raspberry Pi running make deb needs no mmdebstrap.
set -euo pipefail
pkgs=(dpkg-dev binutils lintian)
[ "${1:-}" != --mmdebstrap ] || pkgs+=(mmdebstrap)
exec "$(dirname "$0")/../deps.sh" "${pkgs[@]}"
