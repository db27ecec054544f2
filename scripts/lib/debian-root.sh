# Sourced by scripts/deb/test.sh and scripts/trixie/*.sh: bootstrapped Debian roots, cached
# as tarballs (a fresh root is unpacked from one for each run).
#
# The cache: $PH_DEB_CACHE, else /var/cache/pirate-hunter-ci when it can be written (CI runs
# on a fresh clone, so a cache outside it survives), else .build/deb-test. It also keeps the
# .debs apt downloads into the roots (archives/). A tarball is made again after 30 days, or
# when its package list changes (the list's hash is in its name); delete the directory to
# start over.

root_cache_dir() {
    local cache=${PH_DEB_CACHE:-}
    if [ -z "$cache" ]; then
        if mkdir -p /var/cache/pirate-hunter-ci 2>/dev/null && [ -w /var/cache/pirate-hunter-ci ]; then
            cache=/var/cache/pirate-hunter-ci
        else
            cache=$PWD/.build/deb-test
        fi
    fi
    mkdir -p "$cache/archives/partial"
    echo "$cache"
}

# cached_root CACHE NAME SUITE VARIANT [INCLUDE]: the tarball's path on stdout, bootstrapped
# first (mmdebstrap, deb.debian.org) when missing or older than 30 days. The new tarball is
# written as NAME.new.tar (mmdebstrap picks the format from the extension) and renamed.
cached_root() {
    local cache=$1 name=$2 suite=$3 variant=$4 include=${5:-}
    local tarball=$cache/$name.tar
    if [ -f "$tarball" ] && [ -z "$(find "$tarball" -mtime +30)" ]; then
        echo "fresh root from the cached $tarball" >&2
    else
        echo "bootstrapping Debian $suite ($variant${include:+, with $include}) into $tarball (cached for later runs)" >&2
        rm -f "$cache/$name.new.tar"
        mmdebstrap --quiet --variant="$variant" --mode=root --skip=cleanup/apt/lists \
            ${include:+--include="$include"} "$suite" "$cache/$name.new.tar" http://deb.debian.org/debian >&2
        mv "$cache/$name.new.tar" "$tarball"
    fi
    echo "$tarball"
}

# The trixie root that builds the project with Debian's own Swift: swiftlang, what
# scripts/deps.sh installs on Debian 13 (its list and the test tools), make, git, and what
# make deb needs (scripts/deb/deps.sh): scripts/deps.sh then finds nothing to install.
# Named by the list's hash.
trixie_swift_packages() {
    echo swiftlang make git ca-certificates \
        libespeak-ng-dev espeak-ng-data libbluetooth-dev libasound2-dev libqrencode-dev libgpiod-dev libsodium-dev libmicrohttpd-dev \
        qrencode zbar-tools pkg-config python3 bsdextrautils mount groff-base \
        dpkg-dev binutils lintian | tr ' ' ','
}
trixie_swift_root() {
    local cache=$1 include
    include=$(trixie_swift_packages)
    local name
    name=trixie-swiftlang-$(echo "$include" | sha256sum | cut -c1-8)
    # A tarball made from another list is not used again.
    find "$cache" -maxdepth 1 -name 'trixie-swiftlang-*.tar' ! -name "$name.tar" -delete
    cached_root "$cache" "$name" trixie apt "$include"
}
