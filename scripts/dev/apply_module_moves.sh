#!/usr/bin/env bash
# Rewrite old-layout imports and module paths in the given files/folders (.py and .md) to the layered layout,
# then re-sort the imports of the changed Python files. Idempotent. Usage:
#   scripts/dev/apply_module_moves.sh mallvi tests scripts docs README.md
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ "$#" -eq 0 ]; then
    echo "usage: $0 PATH..." >&2
    exit 2
fi
py="${PYTHON:-$(command -v python3 || command -v python)}"
changed="$("$py" "$here/apply_module_moves.py" "$@")"
[ -n "$changed" ] && printf '%s\n' "$changed"
ruff="${RUFF:-$(command -v ruff || true)}"
[ -z "$ruff" ] && [ -x "$here/../../.venv/bin/ruff" ] && ruff="$here/../../.venv/bin/ruff"
pyfiles="$(printf '%s\n' "$changed" | grep '\.py$' || true)"
if [ -n "$pyfiles" ]; then
    if [ -n "$ruff" ]; then
        # shellcheck disable=SC2086
        "$ruff" check --select I --fix --quiet --config "lint.isort.known-first-party = ['mallvi']" $pyfiles || true
    else
        echo "apply_module_moves: ruff not found; run 'ruff check --select I --fix' on the files above" >&2
    fi
fi
