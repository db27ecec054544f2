#!/usr/bin/env bash
# The Debian tools make deb and make deb-test use, installed only when one is missing
# (as scripts/deps.sh does for the build): dpkg-dev (dpkg-shlibdeps), lintian, mmdebstrap.
set -euo pipefail
pkgs=(dpkg-dev binutils lintian mmdebstrap)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}" >&2
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
