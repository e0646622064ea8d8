"""Two bench folders side by side (model A against B, sim against twin): per task and per seed.

Per task: each folder's success rate with its 95% Wilson interval, and the seeds both ran paired: how many
succeeded in both, in A only, in B only, in neither, with the exact McNemar test of the discordant seeds (the
chance of a split at least this uneven if A and B were equally good). Per seed: the seeds whose outcome differs,
each with the failing side's reason. And the settings in which the two runs differ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mallvi.bench.failures import categorize
from mallvi.bench.metrics import wilson_interval
from mallvi.bench.run_records import RecordScope, own_records
from mallvi.bench.tiers import TIER_TASKS, parse_tier
from mallvi.tracing.tolerant_json import JsonFileError, load_json_file


class BenchFolderError(ValueError):
    """A path that holds no readable bench run (run.json and episodes.jsonl)."""


@dataclass(frozen=True)
class BenchFolder:
    """A bench output folder: its settings and, per task, the counted records by seed."""

    path: Path
    config: dict[str, Any]
    by_task: dict[str, dict[int, dict[str, Any]]]


def open_folder(path: str | Path) -> BenchFolder:
    """Read a bench folder's run.json and its own episode records; BenchFolderError says what is missing."""
    p = Path(path)
    if not p.is_dir():
        raise BenchFolderError(f"{p} is not a folder")
    try:
        run = load_json_file(p / "run.json")
    except FileNotFoundError:
        raise BenchFolderError(f"{p} holds no run.json, so it is not a bench output folder") from None
    except JsonFileError as e:
        raise BenchFolderError(str(e)) from None
    except OSError as e:
        raise BenchFolderError(f"cannot read {p / 'run.json'}: {e.strerror or e}") from None
    config = run.get("config") if isinstance(run, dict) else None
    if not isinstance(config, dict):
        raise BenchFolderError(f"{p / 'run.json'} has no config")
    try:
        tier = parse_tier(str(config.get("tier")))
        scope = RecordScope(tier, TIER_TASKS[tier], str(config.get("agent")), int(config.get("seed_start", 0)))
        episodes = int(config.get("episodes") or 0)
    except (TypeError, ValueError) as e:
        raise BenchFolderError(f"{p / 'run.json'}: {e}") from None
    try:
        records = own_records(p / "episodes.jsonl", scope)
    except JsonFileError as e:
        raise BenchFolderError(str(e)) from None
    except OSError as e:
        raise BenchFolderError(f"cannot read {p / 'episodes.jsonl'}: {e.strerror or e}") from None
    by_task: dict[str, dict[int, dict[str, Any]]] = {}
    for rec in sorted(records, key=lambda r: int(r["seed"])):
        seeds = by_task.setdefault(rec["task"], {})
        counted = sum(1 for r in seeds.values() if r.get("status") != "skipped")
        if rec.get("status") == "skipped" or not episodes or counted < episodes:
            seeds[int(rec["seed"])] = rec
    return BenchFolder(p, config, by_task)


def mcnemar_p(only_a: int, only_b: int) -> float | None:
    """Two-sided exact McNemar p-value of the discordant pairs (binomial, p = ½); None without any."""
    n = only_a + only_b
    if n == 0:
        return None
    k = min(only_a, only_b)
    if n > 1000:  # normal approximation with continuity correction
        z = (abs(only_a - only_b) - 1) / math.sqrt(n)
        return min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def _outcome(rec: dict[str, Any] | None) -> str:
    if rec is None:
        return "not run"
    if rec.get("status") == "skipped":
        return "skipped"
    return "success" if rec.get("success") is True else "failure"


def _rate(records: dict[int, dict[str, Any]]) -> dict[str, Any]:
    done = [r for r in records.values() if r.get("status") != "skipped"]
    wins = sum(1 for r in done if r.get("success") is True)
    ci = wilson_interval(wins, len(done))
    return {"episodes": len(done), "successes": wins, "success_rate": wins / len(done) if done else None,
            "success_ci95": None if ci is None else [round(ci[0], 6), round(ci[1], 6)]}


def _why(rec: dict[str, Any] | None) -> str | None:
    if rec is None or rec.get("status") == "skipped" or rec.get("success") is True:
        return None
    category, reason = categorize(rec)
    return f"{category}: {reason}"


def compare_task(a: dict[int, dict[str, Any]], b: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """One task of two folders: rates, paired counts over the seeds both ran, and the seeds that differ."""
    both = sorted(s for s in set(a) & set(b) if _outcome(a[s]) in ("success", "failure")
                  and _outcome(b[s]) in ("success", "failure"))  # fmt: skip
    pairs = [(_outcome(a[s]) == "success", _outcome(b[s]) == "success") for s in both]
    only_a = sum(1 for x, y in pairs if x and not y)
    only_b = sum(1 for x, y in pairs if y and not x)
    differ = [{"seed": s, "a": _outcome(a.get(s)), "b": _outcome(b.get(s)), "a_why": _why(a.get(s)),
               "b_why": _why(b.get(s))} for s in sorted(set(a) | set(b)) if _outcome(a.get(s)) != _outcome(b.get(s))]
    return {
        "a": _rate(a),
        "b": _rate(b),
        "paired": {"seeds": len(both), "both": sum(1 for x, y in pairs if x and y), "only_a": only_a,
                   "only_b": only_b, "neither": sum(1 for x, y in pairs if not x and not y),
                   "mcnemar_p": mcnemar_p(only_a, only_b)},
        "differing_seeds": differ,
    }


def settings_differ(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """The settings (run.json ``config``) whose values differ, each with both values."""
    return [{"setting": k, "a": a.get(k), "b": b.get(k)} for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def compare_folders(path_a: str | Path, path_b: str | Path) -> dict[str, Any]:
    """Both folders side by side over the tasks both ran; BenchFolderError (a ValueError) when either is not a
    bench folder or they have no task in common."""
    a, b = open_folder(path_a), open_folder(path_b)
    common = [t for t in a.by_task if t in b.by_task]
    if not common:
        raise BenchFolderError(f"{a.path} ({', '.join(a.by_task) or 'no episodes'}) and {b.path} "
                              f"({', '.join(b.by_task) or 'no episodes'}) have no task with episodes in common")
    return {
        "a": {"path": str(a.path), "tier": a.config.get("tier"), "agent": a.config.get("agent")},
        "b": {"path": str(b.path), "tier": b.config.get("tier"), "agent": b.config.get("agent")},
        "settings_differ": settings_differ(a.config, b.config),
        "tasks": {t: compare_task(a.by_task[t], b.by_task[t]) for t in common},
        "only_in_a": [t for t in a.by_task if t not in b.by_task],
        "only_in_b": [t for t in b.by_task if t not in a.by_task],
    }


def _pct(rate: dict[str, Any]) -> str:
    if rate["success_rate"] is None:
        return "—"
    ci = rate["success_ci95"]
    return f"{100 * rate['success_rate']:.1f} ({100 * ci[0]:.1f}–{100 * ci[1]:.1f}), n {rate['episodes']}"


def render_comparison(c: dict[str, Any], max_seeds: int = 20) -> str:
    """The comparison in markdown: settings that differ, one row per task, the seeds whose outcome differs."""
    lines = [f"# {c['a']['path']} (A) vs {c['b']['path']} (B)", ""]
    if c["settings_differ"]:
        lines.append("Settings that differ: " + "; ".join(f"{d['setting']}: {d['a']!r} (A) vs {d['b']!r} (B)"
                                                           for d in c["settings_differ"]) + ".")
    else:
        lines.append("The two runs have the same settings.")
    lines += ["", "| task | A: success % (95% CI), n | B: success % (95% CI), n | seeds in both | both | A only | "
              "B only | neither | McNemar p |", "|---|---|---|---|---|---|---|---|---|"]
    for task, t in c["tasks"].items():
        p = t["paired"]
        pv = "—" if p["mcnemar_p"] is None else f"{p['mcnemar_p']:.3g}"
        lines.append(f"| {task} | {_pct(t['a'])} | {_pct(t['b'])} | {p['seeds']} | {p['both']} | {p['only_a']} | "
                     f"{p['only_b']} | {p['neither']} | {pv} |")
    lines += ["", "McNemar p: the chance of a split of the discordant seeds at least this uneven if A and B were "
              "equally good (exact binomial test).", ""]
    for side in ("a", "b"):
        if c[f"only_in_{side}"]:
            lines.append(f"Tasks only in {side.upper()}: {', '.join(c[f'only_in_{side}'])}.")
    differing = [(task, d) for task, t in c["tasks"].items() for d in t["differing_seeds"]]
    if differing:
        lines += ["## Seeds whose outcome differs", ""]
        for task, d in differing[:max_seeds]:
            why = "; ".join(f"{s.upper()}: {d[f'{s}_why']}" for s in ("a", "b") if d[f"{s}_why"])
            lines.append(f"- {task} seed {d['seed']}: A {d['a']}, B {d['b']}" + (f" ({why})" if why else ""))
        if len(differing) > max_seeds:
            lines.append(f"- … and {len(differing) - max_seeds} more (--json lists them all)")
    else:
        lines.append("Every seed both ran has the same outcome in both.")
    return "\n".join(lines) + "\n"
