#!/usr/bin/env bash
# The parent's page's browser test needs Selenium (PyPI) beside Debian's chromium and
# chromium-driver (scripts/deps.sh installs those, and python3-venv): a venv of its own at
# .build/web-venv, made once and kept (removed by make clean). pip's cache is off: nothing is
# left at a predictable path in /tmp or $HOME.
#   scripts/web/setup.sh     then: .build/web-venv/bin/python scripts/web/browser-test.py
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.build/web-venv
# Debian's python3 (its venv module is python3-venv), not one earlier on PATH.
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3)
for tool in /usr/bin/chromium /usr/bin/chromedriver; do
    [ -x "$tool" ] || { echo "scripts/web/setup.sh: no $tool: run scripts/deps.sh (Debian packages chromium, chromium-driver)" >&2; exit 1; }
done
if ! "$venv/bin/python" -c 'import selenium, sys; sys.exit(0 if int(selenium.__version__.split(".")[0]) >= 4 else 1)' 2>/dev/null; then
    rm -rf "$venv"
    mkdir -p .build
    "$python" -m venv "$venv" || { echo "scripts/web/setup.sh: python3 -m venv failed: install python3-venv (scripts/deps.sh)" >&2; exit 1; }
    PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install --quiet --no-cache-dir 'selenium>=4,<5'
fi
"$venv/bin/python" -c 'import selenium; print("selenium " + selenium.__version__ + " in .build/web-venv")'
