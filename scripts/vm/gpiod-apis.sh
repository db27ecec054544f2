#!/usr/bin/env bash
# Both libgpiod APIs behind Sources/CGPIOButton on a real kernel line (gpio-sim in the VM):
# a small C program (scripts/vm/gpiod-edges.c + gpio_button.c) built here against
# bookworm's libgpiod 1.6 (v1 API) and in a Debian 13 root against libgpiod 2.x (v2 API),
# both run in one guest on the same simulated line: each must apply the pull-up, read
# nothing when nothing waits, and read a press as an active edge and the release as an
# inactive one. Not part of `make vm-test` (it needs the trixie root: mmdebstrap, about a
# minute and ~150 MB the first time, kept in .build/vm/trixie-gpiod, or TRIXIE_ROOT).
#   scripts/vm/gpiod-apis.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
root=${TRIXIE_ROOT:-$repo/.build/vm/trixie-gpiod}
out=$repo/.build/vm/gpiod-apis
mkdir -p "$out"
if [ ! -x "$root/usr/bin/gcc" ] || [ ! -f "$root/usr/include/gpiod.h" ]; then
    command -v mmdebstrap >/dev/null || { echo "gpiod-apis: needs mmdebstrap (apt install mmdebstrap)" >&2; exit 69; }
    echo "gpiod-apis: making a Debian 13 root with libgpiod-dev in $root" >&2
    rm -rf "$root"
    mmdebstrap --variant=apt --include=libgpiod-dev,gcc,libc6-dev trixie "$root" http://deb.debian.org/debian >&2
fi
src=$repo/Sources/CGPIOButton
gcc -std=c11 -Wall -Wextra -Werror -I"$src/include" "$here/gpiod-edges.c" "$src/gpio_button.c" -lgpiod -o "$out/edges-v1"
mkdir -p "$root/build"
cp "$here/gpiod-edges.c" "$src/gpio_button.c" "$src/include/gpio_button.h" "$root/build/"
chroot "$root" gcc -std=c11 -Wall -Wextra -Werror -I/build /build/gpiod-edges.c /build/gpio_button.c -lgpiod -o /build/edges-v2
echo "gpiod-apis: v1 $(dpkg-query -W -f='${Version}' libgpiod-dev), v2 $(chroot "$root" dpkg-query -W -f='${Version}' libgpiod-dev)" >&2
exec "$here/run.sh" --timeout 120 "$here/gpiod-apis-guest.sh" "$out/edges-v1" "$root"
