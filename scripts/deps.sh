#!/usr/bin/env bash
# Installs the Debian packages the build and tests need, only when one is missing.
#   scripts/deps.sh [PACKAGE...]   those packages instead (scripts/deb/deps.sh)
set -euo pipefail
pkgs=(libespeak-ng-dev espeak-ng-data libbluetooth-dev libasound2-dev libqrencode-dev libgpiod-dev libsodium-dev qrencode zbar-tools pkg-config python3)
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
