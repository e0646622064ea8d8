#!/usr/bin/env bash
# Creates .venv (Python 3.11) and installs mallvi with the extras its tests exercise.
# torch is pinned to 2.13.0: an unpinned torch would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
"$PY" -c 'import sys; assert sys.version_info[:2] == (3, 11), "mallvi needs Python 3.11"'
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
extras=${MALLVI_EXTRAS:-dev,real,neural,cluster}
.venv/bin/python -m pip install -q -e ".[${extras}]"
