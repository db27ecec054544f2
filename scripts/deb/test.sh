#!/usr/bin/env bash
# The Debian package tested for real: installed with apt-get into a fresh Debian root
# (mmdebstrap --variant=minbase, chroot), run there as the service user, reinstalled over
# itself keeping an edited conffile, purged, and the root checked for leftovers.
# Usage: scripts/deb/test.sh [--dist bookworm|trixie] [PACKAGE.deb]   (needs root)
#   bookworm (the default): the package make deb built here (make deb-test builds it first),
#     with the Swift runtime linked in;
#   trixie: the package built with Debian 13's own swiftlang in a fresh trixie root (.build/
#     trixie/, as scripts/trixie/test.sh leaves it; built there first with
#     scripts/trixie/run.sh 'make deb' when no PACKAGE is given), its runtime libswiftlang
#     from apt, installed into a second fresh trixie root that has no Swift at all.
#
# The bootstrapped roots are cached as tarballs (a fresh root is made from one each run):
# scripts/lib/debian-root.sh says where (/var/cache/pirate-hunter-ci when it can be
# written). The same directory keeps the .debs apt downloads into the root (libespeak-ng1,
# espeak-ng-data, ...). Delete it to start over; it is refreshed by itself after 30 days.
set -euo pipefail
cd "$(dirname "$0")/../.."
started=$(date +%s)
log() { printf '[deb-test %4ss] %s\n' "$(( $(date +%s) - started ))" "$*"; }
fail() { echo "deb-test: FAIL: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || exec sudo -E "$0" "$@"
dist=bookworm
if [ "${1:-}" = --dist ]; then dist=$2; shift 2; fi
case "$dist" in bookworm|trixie) ;; *) fail "--dist: '$dist' is not bookworm or trixie" ;; esac
scripts/deb/deps.sh --mmdebstrap
# shellcheck source=../lib/debian-root.sh
. scripts/lib/debian-root.sh

arch=$(dpkg --print-architecture)
if [ "$dist" = trixie ]; then
    if [ -z "${1:-}" ]; then
        log "building the package with Debian 13's swiftlang in a fresh trixie root"
        rm -rf .build/trixie
        scripts/trixie/run.sh --out .build/trixie 'make deb' || fail "make deb in the trixie root"
    fi
    deb=${1:-$(ls -t .build/trixie/pirate-hunter_*_"$arch".deb 2>/dev/null | head -1)}
else
    deb=${1:-$(ls -t pirate-hunter_*_"$arch".deb 2>/dev/null | head -1)}
fi
[ -f "$deb" ] || fail "no package (run make deb)"
deb=$(realpath "$deb")
name=$(basename "$deb")

cache=$(root_cache_dir)
tarball=$(cached_root "$cache" "$dist-minbase" "$dist" minbase)
log "testing $name in a fresh $dist root"

work=$(mktemp -d /tmp/ph-deb-test.XXXXXX)
root=$work/root
# Every mount lives in this script's own mount namespace (unshare below): nothing is left
# mounted under $root when it is deleted, whatever happens.
trap 'rm -rf --one-file-system "$work"' EXIT
mkdir "$root"
tar -C "$root" -xf "$tarball"
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "$deb" "$root/tmp/$name"

# The files no package owns, before anything is installed (the leftovers check's baseline).
unowned() {
    (cd "$1" && find . -xdev \( -type f -o -type l \) -printf '%P\n' | sort) > "$work/all"
    # Merged /usr: a package may list /lib/x.so that find sees as usr/lib/x.so.
    cat "$1"/var/lib/dpkg/info/*.list 2>/dev/null | sed -E 's|^/||; s#^(bin|sbin|lib|lib32|lib64|libx32)/#usr/\1/#' | sort -u > "$work/owned"
    comm -23 "$work/all" "$work/owned" | grep -Ev '^(var/lib/(dpkg|apt|systemd)/|var/cache/(apt|debconf|ldconfig)/|var/log/|etc/(passwd|group|shadow|gshadow|subuid|subgid)-?$|etc/ld\.so\.cache$|etc/\.pwd\.lock$|etc/resolv\.conf$|tmp/)' || true
}
unowned "$root" > "$work/unowned-before"

export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8
export root name work dist
unshare --mount --propagation private bash -euo pipefail -c '
    fail() { echo "deb-test: FAIL: $*" >&2; exit 1; }
    mount -t proc proc "$root/proc"
    mount --bind "'"$cache"'/archives" "$root/var/cache/apt/archives"
    in_root() { chroot "$root" "$@"; }
    apt_opts=(-q -y -o APT::Keep-Downloaded-Packages=true -o Dpkg::Use-Pty=0)

    echo "== apt-get install ./$name"
    # Raspberry Pi OS has a gpio group owning /dev/gpiochip*: the user must join it.
    in_root getent group gpio >/dev/null || in_root groupadd --system gpio
    in_root apt-get "${apt_opts[@]}" update >/dev/null
    in_root apt-get "${apt_opts[@]}" install --no-install-recommends "/tmp/$name" > "$work/install.log" 2>&1 \
        || { cat "$work/install.log"; fail "apt-get install"; }
    grep -E "^(Setting up|Unpacking) " "$work/install.log" | sed "s/^/   /"

    echo "== the service user, the units, the conffiles"
    in_root getent passwd pirate-hunter || fail "no user pirate-hunter"
    in_root id -nG pirate-hunter | grep -qw audio || fail "pirate-hunter is not in the audio group"
    in_root id -nG pirate-hunter | grep -qw gpio || fail "pirate-hunter is not in the gpio group (the button chips group)"
    # Debian 13 puts units in /usr/lib/systemd/system, 12 in /lib/systemd/system.
    unitdir=/lib/systemd/system
    [ "$dist" = bookworm ] || unitdir=/usr/lib/systemd/system
    for unit in pirate-hunter.service pirate-treasure.service; do
        in_root dpkg-query -L pirate-hunter | grep -qx "$unitdir/$unit" || fail "$unit is not in $unitdir"
        f=$root$unitdir/$unit
        [ -f "$f" ] || fail "$unit not installed"
        grep -q "^AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN$" "$f" || fail "$unit: AmbientCapabilities"
        grep -q "^User=pirate-hunter$" "$f" || fail "$unit: User="
        grep -q "^ConfigurationDirectoryMode=0775$" "$f" || fail "$unit: ConfigurationDirectoryMode="
        [ ! -e "$root/etc/systemd/system/multi-user.target.wants/$unit" ] || fail "$unit enabled at install (must not be)"
    done
    in_root dpkg-query -W -f="\${Conffiles}\n" pirate-hunter | grep -q "/etc/pirate-hunter/hunter.json" || fail "hunter.json is not a conffile"
    in_root dpkg-query -W -f="\${Conffiles}\n" pirate-hunter | grep -q "/etc/pirate-hunter/treasure.json" || fail "treasure.json is not a conffile"
    # The Swift runtime: linked in (swift.org toolchains, the bookworm package), or the one
    # of Debian 13 (libswiftlang), then installed by apt from the Depends of the package.
    if in_root ldd /usr/bin/pirate-hunter | grep -q libswiftCore; then
        [ "$dist" != bookworm ] || fail "the Swift runtime is linked dynamically"
        in_root dpkg-query -W -f="\${Depends}\n" pirate-hunter | grep -q "libswiftlang (>= " || fail "no Depends on libswiftlang"
        in_root ldd /usr/bin/pirate-hunter | grep "not found" && fail "a library is not found"
        echo "   the Swift runtime: $(in_root ldd /usr/bin/pirate-hunter | awk "/libswiftCore/ {print \$3}") ($(in_root dpkg-query -W -f="\${Package} \${Version}" libswiftlang))"
    fi
    in_root man -w pirate-hunter >/dev/null 2>&1 || [ -f "$root/usr/share/man/man1/pirate-hunter.1.gz" ] || fail "no man page"

    # As systemd would run it: the unit user and groups, its cache directory.
    mkdir -p "$root/var/cache/pirate-hunter"
    in_root chown pirate-hunter:pirate-hunter /var/cache/pirate-hunter
    as_service() {
        in_root setpriv --reuid=pirate-hunter --regid=pirate-hunter --init-groups \
            env -i PATH=/usr/bin:/bin HOME=/nonexistent LANG=C.UTF-8 CACHE_DIRECTORY=/var/cache/pirate-hunter "$@"
    }

    echo "== pirate-hunter check --json (as pirate-hunter)"
    set +e
    as_service pirate-hunter check --json --silent > "$work/check.json" 2> "$work/check.err"
    rc=$?
    set -e
    sed "s/^/   /" "$work/check.json"
    python3 - "$work/check.json" "$rc" <<"PY" || fail "check --json"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
rc = int(sys.argv[2])
by = {(l.get("section"), l.get("check")): l for l in lines}
summary = lines[-1]
assert summary["exit"] == rc, (summary, rc)
for key in [("voice", "espeak-ng"), ("voice", "line pack"), ("voice", "voice file"), ("voice", "cache"), ("configuration", "file")]:
    assert by[key]["status"] == "ok", by[key]
assert by[("configuration", "file")]["detail"] == "/etc/pirate-hunter/hunter.json is valid", by[("configuration", "file")]
assert "/usr/share/pirate-hunter/voices" in by[("voice", "line pack")]["detail"]
for unit in ["pirate-hunter.service", "pirate-treasure.service"]:
    d = by[("service", unit)]
    assert d["status"] == "ok" and "/lib/systemd/system/" in d["detail"] and "not enabled" in d["detail"] and "pirate-hunter" in d["detail"], d
# Installed, neither enabled: nothing would start at boot.
assert by[("service", "at boot")]["status"] == "warn", by.get(("service", "at boot"))
assert all(l.get("fix") for l in lines if l.get("status") == "fail")
PY
    [ "$rc" -ne 0 ] || grep -q "\"failed\": 0" "$work/check.json" || fail "check exit $rc"

    echo "== pirate-hunter say --line startup --out /tmp/t.wav (as pirate-hunter)"
    as_service pirate-hunter say --line startup --out /tmp/t.wav 2>&1 | sed "s/^/   /"
    python3 - "$root/tmp/t.wav" <<"PY" || fail "say wrote no speech"
import sys, wave
w = wave.open(sys.argv[1])
assert w.getframerate() == 22050 and w.getnchannels() == 1 and w.getsampwidth() == 2, w.getparams()
assert w.getnframes() > 22050 // 2, w.getnframes()
print("   %d frames, %.1f s" % (w.getnframes(), w.getnframes() / 22050))
PY

    echo "== reinstall over itself, an edited conffile kept"
    sed -i "s/\"volume_db\": 0/\"volume_db\": -6/" "$root/etc/pirate-hunter/hunter.json"
    grep -q "\"volume_db\": -6" "$root/etc/pirate-hunter/hunter.json" || fail "could not edit hunter.json"
    in_root apt-get "${apt_opts[@]}" install --reinstall "/tmp/$name" > "$work/reinstall.log" 2>&1 \
        || { cat "$work/reinstall.log"; fail "reinstall"; }
    grep -q "\"volume_db\": -6" "$root/etc/pirate-hunter/hunter.json" || fail "the edited hunter.json was replaced"
    [ ! -e "$root/etc/pirate-hunter/hunter.json.dpkg-new" ] || fail "hunter.json.dpkg-new left"
    as_service pirate-hunter check --json --silent > "$work/check2.json" 2>/dev/null || true
    grep -q "\"detail\": \"/etc/pirate-hunter/hunter.json is valid\"" "$work/check2.json" \
        || fail "the edited hunter.json is not valid: $(grep configuration "$work/check2.json")"
    echo "   kept: $(grep -o "\"volume_db\": -6" "$root/etc/pirate-hunter/hunter.json")"

    echo "== dpkg --purge"
    # What a parent leaves: the hunter enabled (systemctl enable), and a save from the page
    # cut off by a power cut (its hidden temporary).
    wants="$root/etc/systemd/system/multi-user.target.wants"
    wants_made=0
    [ -d "$wants" ] || { mkdir -p "$wants"; wants_made=1; }
    ln -s /lib/systemd/system/pirate-hunter.service "$root/etc/systemd/system/multi-user.target.wants/pirate-hunter.service"
    echo "{" > "$root/etc/pirate-hunter/.hunter.json.5eed.tmp"
    in_root dpkg-query -L pirate-hunter > "$work/files"
    in_root dpkg --purge pirate-hunter > "$work/purge.log" 2>&1 || { cat "$work/purge.log"; fail "purge"; }
    while read -r path; do
        [ -d "$root$path" ] && continue
        [ ! -e "$root$path" ] || fail "$path left after purge"
    done < "$work/files"
    for dir in /etc/pirate-hunter /var/cache/pirate-hunter /usr/share/pirate-hunter /usr/share/doc/pirate-hunter; do
        [ ! -e "$root$dir" ] || fail "$dir left after purge"
    done
    [ ! -L "$wants/pirate-hunter.service" ] || fail "the enable link left after purge"
    if [ "$wants_made" = 1 ]; then rmdir "$wants"; fi
'
log "leftovers: files no package owns, new since the bootstrap"
unowned "$root" > "$work/unowned-after"
left=$(comm -13 "$work/unowned-before" "$work/unowned-after")
[ -z "$left" ] || fail "left after purge: $left"
log "only the user pirate-hunter remains (system users are kept, Debian policy 9.2.2)"
log "PASS ($name, $dist)"
