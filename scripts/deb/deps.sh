#!/usr/bin/env bash
# The Debian tools make deb and make deb-test use, installed only when one is missing
# (as scripts/deps.sh does for the build): dpkg-dev (dpkg-shlibdeps), lintian, mmdebstrap.
set -euo pipefail
exec "$(dirname "$0")/../deps.sh" dpkg-dev binutils lintian mmdebstrap
