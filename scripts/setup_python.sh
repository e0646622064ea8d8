#!/usr/bin/env bash
# Creates .venv (Python 3.11) and installs mallvi with its extras from the lock, requirements/lock.txt: every
# package at its locked version, each file checked against its locked sha256 hash (pip's hash-checking mode).
# torch is locked to 2.13.0+cpu, the CPU build that pip finds through its find-links (/opt/wheels on this kind of
# machine): no other file matches its hash, so a CUDA build can never be installed in its place.
#   MALLVI_EXTRAS=dev,real   another set of extras than the lock's: the lock's versions apply as constraints,
#                            without the hash check (scripts/lock.sh --help makes a lock for another set)
#   MALLVI_VENV=DIR          another virtual environment than .venv (e.g. to try the set-up in a scratch folder)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
"$PY" -c 'import sys; assert sys.version_info[:2] == (3, 11), "mallvi needs Python 3.11"'
VENV=${MALLVI_VENV:-.venv}
LOCK=requirements/lock.txt
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
pip=("$VENV/bin/python" -m pip)

sorted() { tr ',' '\n' <<<"$1" | sed '/^$/d' | sort -u | paste -sd, -; }
locked=$(sed -n 's/^# extras: //p' "$LOCK")
extras=${MALLVI_EXTRAS:-$locked}
if [ "$(sorted "$extras")" = "$(sorted "$locked")" ]; then
  "${pip[@]}" install -q --require-hashes -r "$LOCK"
  if [ -f requirements/lock-nodeps.txt ]; then
    "${pip[@]}" install -q --require-hashes --no-deps -r requirements/lock-nodeps.txt
  fi
  "${pip[@]}" install -q --no-deps --no-build-isolation -e .
else
  echo "setup_python: extras $extras differ from the lock's ($locked): installing with the lock's versions" \
       "as constraints, without hash checks" >&2
  constraints=$(mktemp)
  trap 'rm -f "$constraints"' EXIT
  # a constraints file takes no hashes: keep the "name==version" lines only
  grep -E '^[A-Za-z0-9]' "$LOCK" | sed 's/ *\\$//' > "$constraints"
  "${pip[@]}" install -q -c "$constraints" pip setuptools wheel
  "${pip[@]}" install -q -c "$constraints" --no-build-isolation -e ".[${extras}]"
fi
