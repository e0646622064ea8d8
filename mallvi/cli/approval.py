"""Human approval before the Actor, on the terminal: approve, edit (a JSON action plan), abort, or pause."""

from __future__ import annotations

import json
import sys

from mallvi.cli.common import safe


def ask_approval(payload: dict[str, object]) -> object:
    """Ask the operator about the planned skill calls; None pauses the run (it can be resumed later)."""
    print(f"\nsubtask: {safe(str(payload.get('subtask')))}", file=sys.stderr)
    calls = payload.get("calls")
    for call in calls if isinstance(calls, list) else []:
        print(f"  {safe(json.dumps(call))}", file=sys.stderr)
    while True:
        print("[a]pprove, [e]dit, a[b]ort, [p]ause? ", end="", file=sys.stderr, flush=True)
        line = sys.stdin.readline()
        answer = line.strip().lower()
        if not line or answer in ("p", "pause"):
            return None
        if answer in ("a", "approve", "y", "yes"):
            return "approve"
        if answer in ("b", "abort", "x", "n", "no"):
            return "abort"
        if answer in ("e", "edit"):
            print('paste the edited plan as one JSON line ({"calls": [...]}):', file=sys.stderr)
            try:
                return {"action": "edit", "plan": json.loads(sys.stdin.readline())}
            except json.JSONDecodeError as e:
                print(f"not JSON: {e}", file=sys.stderr)
