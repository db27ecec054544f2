#!/usr/bin/env bash
# Builds (or reuses) the VM test's kernel and initramfs under .build/vm/ and prints
# their two paths, one a line. Installs the Debian packages it needs when one is missing.
#   scripts/vm/build.sh            (VM_CACHE overrides the cache dir, default .build/vm)
# The kernel is Debian's linux-image-amd64, fetched with `apt-get download` and only
# unpacked (never installed as the host's kernel). The initramfs holds busybox, the
# init in scripts/vm/init and a depmod'ed subset of the kernel's modules; everything
# else the guest runs comes from the host's own / over 9p (see docs/vm-test.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${VM_CACHE:-$repo/.build/vm}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

log() { echo "vm-build: $*" >&2; }
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"

# --- 1. host packages -------------------------------------------------------
# qemu-system-x86: the VM; bluez-test-tools: btvirt; bluez: hcitool, hciconfig,
# btmgmt, btmon; busybox-static: the initramfs userland; alsa-utils: aplay/arecord;
# python3: the raw-HCI oracle (scripts/vm/hci.py); cpio, kmod: building the image;
# util-linux: setpriv (running guest programs unprivileged with chosen capabilities).
pkgs=(qemu-system-x86 bluez-test-tools bluez busybox-static alsa-utils python3 cpio kmod util-linux)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
apt_updated=""
if [ ${#missing[@]} -gt 0 ]; then
    log "installing: ${missing[*]}"
    $sudo apt-get update -qq
    apt_updated=1
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- 2. kernel (download + unpack once; reuse any cached one) ---------------
kdir=""
for d in "$cache"/kernel/*/; do
    [ -f "$d/vmlinuz" ] && [ -f "$d/ok" ] && kdir=${d%/} && break
done
if [ -z "$kdir" ]; then
    pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
    if [ -z "$pkg" ] && [ -z "$apt_updated" ]; then
        $sudo apt-get update -qq; apt_updated=1
        pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
    fi
    [ -n "$pkg" ] || { log "cannot resolve linux-image-amd64 (apt-cache depends found nothing)"; exit 69; }
    kver=${pkg#linux-image-}
    kdir=$cache/kernel/$kver
    rm -rf "$kdir"; mkdir -p "$kdir/dl"
    log "downloading $pkg"
    # _apt cannot write into root-owned dirs; download into a world-writable temp dir.
    tmpdl=$(mktemp -d); chmod 777 "$tmpdl"
    (cd "$tmpdl" && apt-get download -q "$pkg" >/dev/null 2>&1) || {
        [ -z "$apt_updated" ] && $sudo apt-get update -qq
        (cd "$tmpdl" && apt-get download -q "$pkg" >/dev/null)
    }
    deb=$(ls "$tmpdl"/*.deb)
    dpkg-deb -x "$deb" "$kdir/root"
    rm -rf "$tmpdl" "$kdir/dl"
    cp "$kdir/root/boot/vmlinuz-$kver" "$kdir/vmlinuz"
    depmod -b "$kdir/root" "$kver"
    echo "$pkg" > "$kdir/ok"
fi
kver=$(basename "$kdir")

# gpio-sim (the button test's simulated GPIO chip): the kernel's own module when it has
# one, else built out of tree from Debian's source of this kernel (scripts/vm/gpio-sim.sh;
# best effort: without it only the button test fails, and says why).
gpiosim=$("$here/gpio-sim.sh" "$kver" "$kdir" "$cache" || true)

# --- 3. initramfs (rebuilt when its inputs change) --------------------------
# Modules preloaded at boot, in this order; their dependencies come along.
# drbg (+ ctr, sha512 for its self-tests): the default RNG; without it ecdh_generic's self-test fails
# (EFAULT) and Bluetooth loses ECDH (LE Secure Connections). jitterentropy_rng does not
# initialise under TCG (drbg goes on without it), so it is only shipped, not preloaded.
preload=(virtio_pci 9pnet_virtio 9p overlay ctr sha512_generic drbg rfkill bluetooth hci_vhci snd-aloop)
# Also present, for request_module() and for tests that modprobe them.
# configfs: gpio-sim's chips are made through it (the button test modprobes gpio-sim).
extra=(jitterentropy_rng ecb cmac ecdh_generic af_alg algif_hash algif_skcipher snd-dummy configfs)
inputs=$( { cat "$here/init" "$here/build.sh"; echo "$kver ${preload[*]} ${extra[*]}";
            sha256sum /usr/bin/busybox; [ -z "$gpiosim" ] || sha256sum "$gpiosim"; } | sha256sum | cut -c1-16)
initrd=$cache/initramfs-$kver-$inputs.cpio.gz
if [ ! -f "$initrd" ]; then
    log "building initramfs for $kver"
    stage=$(mktemp -d)
    trap 'rm -rf "$stage"' EXIT
    mkdir -p "$stage"/{bin,sbin,etc,proc,sys,dev,host,rw,newroot,tmp,lib/modules/"$kver"}
    cp /usr/bin/busybox "$stage/bin/busybox"
    for a in $("$stage/bin/busybox" --list); do
        [ -e "$stage/bin/$a" ] || ln -s busybox "$stage/bin/$a"
    done
    ln -s ../bin/busybox "$stage/sbin/modprobe"
    mods=$(for m in "${preload[@]}" "${extra[@]}"; do
               modprobe -d "$kdir/root" -S "$kver" --show-depends "$m"
           done | awk '$1 == "insmod" {print $2}' | sort -u)
    for f in $mods; do
        rel=${f#"$kdir/root/lib/modules/$kver/"}
        mkdir -p "$stage/lib/modules/$kver/$(dirname "$rel")"
        cp "$f" "$stage/lib/modules/$kver/$rel"
    done
    if [ -n "$gpiosim" ]; then
        mkdir -p "$stage/lib/modules/$kver/extra"
        cp "$gpiosim" "$stage/lib/modules/$kver/extra/"
    fi
    cp "$kdir/root/lib/modules/$kver"/modules.{order,builtin,builtin.modinfo} "$stage/lib/modules/$kver/"
    depmod -b "$stage" "$kver"
    printf '%s\n' "${preload[@]}" > "$stage/etc/vm-preload"
    cp "$here/init" "$stage/init"; chmod 755 "$stage/init"
    rm -f "$cache"/initramfs-*.cpio.gz
    (cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) > "$initrd.tmp"
    mv "$initrd.tmp" "$initrd"
fi
echo "$kdir/vmlinuz"
echo "$initrd"
