#!/usr/bin/env bash
# Installs the Debian packages the build and tests need, only when one is missing.
#   scripts/deps.sh [PACKAGE...]   those packages instead (scripts/deb/deps.sh)
#   scripts/deps.sh --list         prints the packages it would check, one a line
#   scripts/deps.sh --web          also the browser test's packages (make web-test: chromium & co.)
# With no Swift on PATH ($SWIFT, else swift) and a system that has Debian's own `swiftlang`
# (Debian 13 trixie, Raspberry Pi OS), that is installed too: Swift 6.0.3 builds the project.
set -euo pipefail
pkgs=(libespeak-ng-dev espeak-ng-data libbluetooth-dev libasound2-dev libqrencode-dev libgpiod-dev libsodium-dev libmicrohttpd-dev qrencode zbar-tools pkg-config python3)
# The parent's page's browser test (make web-test, scripts/web): the venv Selenium goes
# into, and Debian's headless Chromium with its WebDriver. Only with --web: `make demo` on a
# Pi installs no browser.
if [ "${1:-}" = --web ]; then
    pkgs+=(python3-venv chromium chromium-driver)
    shift
fi
# Programs the tests run, from the package that has them here: `script` is in bsdutils
# (essential) on Debian 12 but in bsdextrautils on Debian 13; mount and groff (the man
# page's test) are not in a minimal Debian 13.
for tool in script:bsdextrautils mount:mount groff:groff-base; do
    command -v "${tool%%:*}" >/dev/null || pkgs+=("${tool#*:}")
done
if ! command -v "${SWIFT:-swift}" >/dev/null && apt-cache show swiftlang >/dev/null 2>&1; then
    pkgs+=(swiftlang)
fi
if [ "${1:-}" = --list ]; then printf '%s\n' "${pkgs[@]}"; exit 0; fi
[ $# -eq 0 ] || pkgs=("$@")
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}" >&2
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
