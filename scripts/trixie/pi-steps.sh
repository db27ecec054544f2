#!/usr/bin/env bash
# docs/raspberry-pi.md's steps, timed one by one, in a fresh Debian 13 (trixie) root that
# has only what `mmdebstrap --variant=apt` gives (as a fresh Raspberry Pi OS Lite has no
# Swift either): apt install swiftlang git make; git clone; make deb; apt install the
# package; pirate-hunter check (--json, as the service user, as the package test does).
# The clone is of this repository's last commit (a git bundle), not over the network.
# Not part of CI (scripts/trixie/test.sh and scripts/deb/test.sh --dist trixie test the
# same things from a cached root); it is how the times in docs/raspberry-pi.md were taken.
# Usage: scripts/trixie/pi-steps.sh   (needs root; re-runs itself with sudo)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || exec sudo -E "$0" "$@"
scripts/deb/deps.sh --mmdebstrap
# shellcheck source=../lib/debian-root.sh
. scripts/lib/debian-root.sh
cache=$(root_cache_dir)
t=$SECONDS
tarball=$(cached_root "$cache" trixie-apt trixie apt)
echo "== the root: $((SECONDS - t)) s"

work=$(mktemp -d /tmp/ph-pi-steps.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT
root=$work/root
mkdir "$root"
tar -C "$root" -xf "$tarball"
cp /etc/resolv.conf "$root/etc/resolv.conf"
git bundle create "$root/tmp/pirate-hunter.bundle" HEAD 2>/dev/null
export root
unshare --mount --propagation private bash -euo pipefail -c '
    mount -t proc proc "$root/proc"
    # apt logs through a pseudo-terminal.
    mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$root/dev/pts"
    mount --bind "$root/dev/pts/ptmx" "$root/dev/ptmx"
    chroot "$root" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb \
        LD_LIBRARY_PATH=/usr/libexec/swift/lib/swift/linux DEBIAN_FRONTEND=noninteractive bash -euo pipefail -c "
        step() { local t=\$SECONDS; echo \"== \$*\"; \"\$@\"; echo \"== took \$((SECONDS - t)) s: \$*\"; }
        quiet() { \"\$@\" >/dev/null; }
        step apt-get update -qq
        step quiet apt-get install -y -qq --no-install-recommends swiftlang git make
        cd /root
        step git clone -q /tmp/pirate-hunter.bundle pirate-hunter
        cd pirate-hunter
        step make deb
        step quiet apt-get install -y -qq --no-install-recommends ./pirate-hunter_*.deb
        mkdir -p /var/cache/pirate-hunter && chown pirate-hunter:pirate-hunter /var/cache/pirate-hunter
        step setpriv --reuid=pirate-hunter --regid=pirate-hunter --init-groups env -i PATH=/usr/bin:/bin \
            HOME=/nonexistent LANG=C.UTF-8 CACHE_DIRECTORY=/var/cache/pirate-hunter pirate-hunter check --json --silent || true
        step pirate-hunter check --silent || true
    "
'
