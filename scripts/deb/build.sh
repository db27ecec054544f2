#!/usr/bin/env bash
# Builds pirate-hunter_<version>_<arch>.deb in the repository root from the release binary,
# the Debian way with dpkg-deb: the tree laid out as debhelper would (units in
# /lib/systemd/system, /usr/lib/systemd/system from Debian 13 on, sysusers.d, conffiles, man
# page, copyright, changelog), Depends computed by dpkg-shlibdeps from the libraries the
# binary links. The Swift runtime is linked statically (swift.org's toolchains), or it is
# Debian's libswiftlang (Debian 13's swiftlang cannot link it statically): then the package
# depends on libswiftlang of the compiler's version (Swift has no stable ABI on Linux).
# Usage: scripts/deb/build.sh [RELEASE_BINARY]   (make deb builds the binary first)
# The same script on an arm64 machine with a Swift toolchain makes the arm64 package.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=scripts/deb
bin=${1:-.build/release/pirate-hunter}
[ -x "$bin" ] || { echo "deb: no $bin (run make release)" >&2; exit 66; }
swiftlang=""
if runtime=$(ldd "$bin" 2>/dev/null | awk '$1 ~ /^libswiftCore\.so/ {print $3}') && [ -n "$runtime" ]; then
    owner=$(dpkg-query -S "$(realpath "$runtime")" 2>/dev/null | cut -d: -f1 || true)
    if [ "$owner" != libswiftlang ]; then
        echo "deb: $bin links the Swift runtime $runtime dynamically, from no Debian package (${owner:-none}); build it with --static-swift-stdlib" >&2
        exit 65
    fi
    upstream=$(dpkg-query -W -f='${Version}' libswiftlang | sed -E 's/^[0-9]+://; s/-[^-]*$//')
    # The next upstream version: 6.0.3 -> 6.0.4 (a dynamic binary runs only on its own).
    next=$(echo "$upstream" | awk -F. -v OFS=. '{ $NF = $NF + 1; print }')
    swiftlang="libswiftlang (>= $upstream), libswiftlang (<< $next~)"
fi

version=$("$bin" --version | awk '{print $2}')
arch=$(dpkg --print-architecture)
package=pirate-hunter
out=${package}_${version}_${arch}.deb
stage=.build/deb
root=$stage/root
rm -rf "$stage"
mkdir -p "$root/DEBIAN" "$stage/debian"

# Files are root:root in the package (dpkg-deb --root-owner-group), modes set here.
umask 022
install -D -m 0755 "$bin" "$root/usr/bin/pirate-hunter"
# Symbols only: Swift's metadata lives in sections strip keeps.
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/pirate-hunter"
"$root/usr/bin/pirate-hunter" --version >/dev/null

mkdir -p "$root/usr/share/pirate-hunter"
cp -R voices "$root/usr/share/pirate-hunter/voices"
chmod -R u=rwX,go=rX "$root/usr/share/pirate-hunter"
find "$root/usr/share/pirate-hunter" -type f -exec chmod 0644 {} +

# Debian 13 (base-files 13) puts units in /usr/lib/systemd/system (lintian there refuses
# /lib); Debian 12 keeps /lib/systemd/system. The changelog names the release built on.
if dpkg --compare-versions "$(dpkg-query -W -f='${Version}' base-files)" ge 13; then
    unitdir=usr/lib/systemd/system
else
    unitdir=lib/systemd/system
fi
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-unstable}")

# The units as make install writes them, with the package's paths and the package's
# unprivileged user instead of DynamicUser (the same user for check, the VM test and logs).
for unit in pirate-hunter.service pirate-treasure.service; do
    mkdir -p "$root/$unitdir"
    sed -e 's|/usr/local/bin/pirate-hunter|/usr/bin/pirate-hunter|' \
        -e 's|/usr/local/share/doc/pirate-hunter|/usr/share/doc/pirate-hunter|' \
        -e 's|^# Installed by `make install`;|# Installed by the pirate-hunter package;|' \
        -e 's|^# An unprivileged user made up at start;|# The unprivileged user pirate-hunter (sysusers.d);|' \
        -e 's|^DynamicUser=yes$|User=pirate-hunter\nGroup=pirate-hunter|' \
        -e 's|^ConfigurationDirectory=pirate-hunter$|ConfigurationDirectory=pirate-hunter\nConfigurationDirectoryMode=0775|' \
        "systemd/$unit" > "$root/$unitdir/$unit"
    # The mode postinst gives /etc/pirate-hunter (the page saves into it): with systemd's
    # default 0755 every start logged "already exists but the mode is different".
    grep -q '^ConfigurationDirectoryMode=0775$' "$root/$unitdir/$unit" || { echo "deb: $unit: no ConfigurationDirectoryMode=" >&2; exit 70; }
    grep -q '^AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN$' "$root/$unitdir/$unit" \
        || { echo "deb: $unit lost its AmbientCapabilities" >&2; exit 70; }
    grep -q '^User=pirate-hunter$' "$root/$unitdir/$unit" || { echo "deb: $unit: no User=" >&2; exit 70; }
done
chmod 0644 "$root/$unitdir"/*
# As make units-check does for the repository's units: any message is a failure.
if command -v systemd-analyze >/dev/null; then
    check=$stage/units-check
    mkdir -p "$check"
    for unit in pirate-hunter.service pirate-treasure.service; do
        sed 's|/usr/bin/pirate-hunter|/bin/true|' "$root/$unitdir/$unit" > "$check/$unit"
    done
    verify=$(cd "$check" && systemd-analyze verify ./pirate-hunter.service ./pirate-treasure.service 2>&1) || true
    [ -z "$verify" ] || { echo "deb: systemd-analyze verify: $verify" >&2; exit 70; }
    rm -rf "$check"
fi
install -D -m 0644 "$here/sysusers.conf" "$root/usr/lib/sysusers.d/pirate-hunter.conf"

install -D -m 0644 config/hunter.example.json "$root/etc/pirate-hunter/hunter.json"
install -D -m 0644 config/treasure.example.json "$root/etc/pirate-hunter/treasure.json"
# The parent's page on home Wi-Fi: http://<hostname>.local:8080 (avahi-daemon reads it).
install -D -m 0644 systemd/pirate-hunter.avahi.service "$root/etc/avahi/services/pirate-hunter.service"
printf '/etc/pirate-hunter/hunter.json\n/etc/pirate-hunter/treasure.json\n/etc/avahi/services/pirate-hunter.service\n' > "$root/DEBIAN/conffiles"

mkdir -p "$root/usr/share/man/man1"
"$root/usr/bin/pirate-hunter" help --man | gzip -9n > "$root/usr/share/man/man1/pirate-hunter.1.gz"

doc=$root/usr/share/doc/$package
install -D -m 0644 "$here/copyright" "$doc/copyright"
install -m 0644 docs/configuration.md docs/raspberry-pi.md "$doc/"
# The changelog's date is the last commit's: the same tree gives the same package (a copy
# of the tree without its history, as in scripts/trixie/run.sh, is given SOURCE_DATE_EPOCH).
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
when=$(date -R -u -d "@$epoch")
printf '%s (%s) %s; urgency=medium\n\n  * Release %s (see the project history).\n\n -- pirate-hunter maintainers <maintainers@users.noreply.a-seed-bc8762dc.example>  %s\n' \
    "$package" "$version" "$codename" "$version" "$when" > "$stage/debian/changelog"
gzip -9n -c "$stage/debian/changelog" > "$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"

for script in postinst prerm postrm; do install -m 0755 "$here/$script" "$root/DEBIAN/$script"; done

# Depends from the linked libraries (dpkg-shlibdeps wants a source tree: a minimal one),
# plus espeak-ng-data (read at run time, not linked).
cat > "$stage/debian/control" <<EOF
Source: $package
Maintainer: pirate-hunter maintainers <maintainers@users.noreply.a-seed-bc8762dc.example>

Package: $package
Architecture: any
EOF
# libswiftlang ships no shlibs file: its dependency is the one worked out above.
shlibs=$(cd "$stage" && dpkg-shlibdeps ${swiftlang:+--ignore-missing-info} -O "root/usr/bin/pirate-hunter" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || { echo "deb: dpkg-shlibdeps found no dependencies" >&2; exit 70; }
for lib in libespeak-ng1 libasound2 libqrencode4 libgpiod libsodium23 libmicrohttpd12; do
    [[ "$shlibs" == *"$lib"* ]] || { echo "deb: $lib missing from the computed Depends ($shlibs)" >&2; exit 70; }
done
if [ -n "$swiftlang" ]; then
    shlibs="$shlibs, $swiftlang"
    # The RUNPATH swiftc writes, where Debian's libswiftlang keeps the runtime (the linker's
    # path does not have it).
    install -d "$root/usr/share/lintian/overrides"
    printf '%s\n' "# The Swift runtime of Debian's libswiftlang lives in /usr/libexec/swift/lib/swift/linux." \
        "$package: custom-library-search-path *" > "$root/usr/share/lintian/overrides/$package"
    chmod 0644 "$root/usr/share/lintian/overrides/$package"
fi
size=$(du -k -s --exclude=DEBIAN "$root" | cut -f1)

cat > "$root/DEBIAN/control" <<EOF
Package: $package
Version: $version
Architecture: $arch
Maintainer: pirate-hunter maintainers <maintainers@users.noreply.a-seed-bc8762dc.example>
Installed-Size: $size
Depends: $shlibs, espeak-ng-data, passwd
Recommends: alsa-utils, avahi-daemon
Suggests: bluez
Section: misc
Priority: optional
Description: treasure hunt on iBeacons, told by a pirate voice
 A headless hunter for a Raspberry Pi ranges the treasure's iBeacons over the
 kernel's raw Bluetooth HCI channel and speaks the hunt ("warmer!", "colder!")
 through eSpeak NG and ALSA; a treasure box advertises as an iBeacon and hands
 out a reward. "pirate-hunter check" says whether the adapter, the speaker,
 the voice and the settings are ready, with a fix for whatever is not.
EOF

(cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/md5sums" "$root/DEBIAN/control" "$root/DEBIAN/conffiles"

SOURCE_DATE_EPOCH=$epoch \
    dpkg-deb --root-owner-group -Zxz --build "$root" "$out" >/dev/null
echo "$out"
