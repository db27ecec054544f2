#!/usr/bin/env bash
# Builds gpio-sim.ko for the VM's kernel when Debian's kernel lacks it, and prints its path.
#   scripts/vm/gpio-sim.sh KVER KDIR CACHE      (called by build.sh; exit 0 with no output
#                                               when it cannot: the button test then says so)
# Debian's kernels (bookworm's 6.1 and trixie's 6.12 alike) have CONFIG_GPIO_SIM and
# CONFIG_IRQ_SIM unset, so the simulated GPIO chip the button's guest test needs is built
# here out of tree from Debian's own source of the same kernel (linux-source-X.Y at the
# version of linux-headers-KVER): drivers/gpio/gpio-sim.c with kernel/irq/irq_sim.c linked
# in (IRQ_SIM is a built-in-only option), its one use of the unexported irq_to_desc()
# replaced by the exported generic_handle_irq(). The module is unsigned: Debian's kernel
# loads it (CONFIG_MODULE_SIG_FORCE unset, no lockdown without Secure Boot), tainted.
set -euo pipefail
kver=$1 kdir=$2 cache=$3
log() { echo "vm-build: gpio-sim: $*" >&2; }
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"

if grep -q '^CONFIG_GPIO_SIM=m' "$kdir/root/boot/config-$kver" 2>/dev/null; then
    find "$kdir/root/lib/modules/$kver" -name 'gpio-sim.ko*' | head -1
    exit 0
fi
out=$cache/gpio-sim/$kver
if [ -f "$out/gpio-sim.ko" ]; then echo "$out/gpio-sim.ko"; exit 0; fi

headers=linux-headers-$kver
if [ ! -d "/usr/src/$headers" ]; then
    log "installing $headers (to build the module against)"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$headers" gcc make >/dev/null 2>&1 \
        || { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$headers" gcc make >/dev/null; } \
        || { log "cannot install $headers"; exit 0; }
fi
version=$(dpkg-query -W -f='${Version}' "$headers")
series=$(echo "$kver" | cut -d. -f1,2)
src=$cache/gpio-sim/src-$version
if [ ! -f "$src/ok" ]; then
    log "fetching linux-source-$series $version (drivers/gpio/gpio-sim.c, kernel/irq/irq_sim.c)"
    rm -rf "$src"; mkdir -p "$src"
    tmpdl=$(mktemp -d); chmod 777 "$tmpdl"
    (cd "$tmpdl" && apt-get download -q "linux-source-$series=$version" >/dev/null 2>&1) \
        || { log "cannot download linux-source-$series=$version"; rm -rf "$tmpdl"; exit 0; }
    dpkg-deb --fsys-tarfile "$tmpdl"/linux-source-*.deb \
        | tar -xO --wildcards '*/linux-source-*.tar.xz' \
        | tar -xJ -C "$src" --strip-components=1 --wildcards \
            '*/drivers/gpio/gpio-sim.c' '*/drivers/gpio/gpiolib.h' '*/kernel/irq/irq_sim.c'
    rm -rf "$tmpdl"
    touch "$src/ok"
fi
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
cp "$src/drivers/gpio/gpio-sim.c" "$build/gpio-sim-main.c"
cp "$src/drivers/gpio/gpiolib.h" "$src/kernel/irq/irq_sim.c" "$build/"
sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$build/irq_sim.c"
printf 'obj-m := gpio-sim.o\ngpio-sim-y := gpio-sim-main.o irq_sim.o\n' > "$build/Kbuild"
if ! make -s -C "/usr/src/$headers" M="$build" modules >"$build/make.log" 2>&1; then
    log "the build failed:"; sed 's/^/  /' "$build/make.log" >&2; exit 0
fi
mkdir -p "$out"
cp "$build/gpio-sim.ko" "$out/gpio-sim.ko"
log "built $out/gpio-sim.ko"
echo "$out/gpio-sim.ko"
