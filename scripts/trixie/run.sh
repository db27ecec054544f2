#!/usr/bin/env bash
# Runs a shell command in a copy of this repository inside a fresh Debian 13 (trixie) root
# that has Debian's own Swift (swiftlang 6.0.3) from apt and no other: as on a Raspberry Pi
# running Raspberry Pi OS. The root is unpacked from a cached tarball (scripts/lib/
# debian-root.sh, in /var/cache/pirate-hunter-ci as the package test's bookworm root is),
# under a mktemp directory; its mounts live in a private mount namespace (unshare), so
# nothing stays mounted whatever happens, and the whole root is deleted at the end.
# Usage: scripts/trixie/run.sh [--out DIR] COMMAND   (needs root; re-runs itself with sudo)
#   --out DIR   the .deb files the command left in the copy's top directory are copied there
# The copy is the repository's files (tracked and untracked, not ignored: no .build), at
# /src; the command runs there as root with a plain environment, SOURCE_DATE_EPOCH set to
# the last commit's time (the copy has no history).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || exec sudo -E "$0" "$@"
out=""
if [ "${1:-}" = --out ]; then out=$(realpath -m "$2"); shift 2; fi
[ $# -eq 1 ] || { echo "usage: scripts/trixie/run.sh [--out DIR] COMMAND" >&2; exit 64; }
command=$1
scripts/deb/deps.sh --mmdebstrap
# shellcheck source=../lib/debian-root.sh
. scripts/lib/debian-root.sh
cache=$(root_cache_dir)
tarball=$(trixie_swift_root "$cache")

work=$(mktemp -d /tmp/ph-trixie.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT
root=$work/root
mkdir "$root"
tar -C "$root" -xf "$tarball"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mkdir "$root/src"
git ls-files -z --cached --others --exclude-standard \
    | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
    | tar -c --null -T - | tar -C "$root/src" -x
epoch=$(git log -1 --format=%ct 2>/dev/null || date +%s)

export root command cache epoch
set +e
unshare --mount --propagation private bash -euo pipefail -c '
    mount -t proc proc "$root/proc"
    # Pseudo-terminals of its own (the kiosk test draws on one through script(1)).
    mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$root/dev/pts"
    mount --bind "$root/dev/pts/ptmx" "$root/dev/ptmx"
    mount --bind "$cache/archives" "$root/var/cache/apt/archives"
    # LD_LIBRARY_PATH: in a chroot, swiftlang 6.0.3 finds its own runtime only so (field guide).
    chroot "$root" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb \
        LD_LIBRARY_PATH=/usr/libexec/swift/lib/swift/linux SOURCE_DATE_EPOCH="$epoch" \
        DEBIAN_FRONTEND=noninteractive bash -euo pipefail -c "cd /src && $command"
'
status=$?
set -e
if [ -n "$out" ]; then
    mkdir -p "$out"
    find "$root/src" -maxdepth 1 -name '*.deb' -exec cp {} "$out/" \;
fi
exit "$status"
