"""Figures for the llm backend with a real local model: SmolLM2-135M-Instruct behind llama-cpp-python's server.

Usage: .venv/bin/python scripts/llm_figures.py [--seeds 10] [--seed-start 1000] [--tasks stack_blocks_two,...]
       [--decoding auto,prompt] [--perception color] [--llm-timeout 30] [--out figures/llm]

Starts the server (scripts/setup_local_model.sh installs it) on a free loopback port and runs each task's own
instruction in the simulator on seeds START..START+N-1 with the Decomposer and the Thinker on the model and every
other agent on rules, once per decoding mode (``auto``: the probe's choice, schema-constrained on this server;
``prompt``: the schema only in the prompt). Per agent it reports, from each run's trace: the share of questions
whose first reply is schema-valid JSON, the share answered validly after re-asks (accepted: schema-valid and
passing the agent's checks), latency per call, tokens per call, and model calls per subtask; per task the
success rate (simulator truth). Each run appends to DIR/rows.jsonl (tasks and modes interleaved per seed); the
summary goes to DIR/llm_figures.json and DIR/llm_figures.md (``--summarize`` rebuilds it from rows.jsonl).
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, for tests.fixtures

AGENTS: tuple[str, ...] = ("decomposer", "thinker")


def _schema(agent: str) -> Any:
    from mallvi.graph.backends.llm.agents import DecomposerAnswer
    from mallvi.graph.schemas import ActionPlan

    return DecomposerAnswer if agent == "decomposer" else ActionPlan


def _valid(agent: str, text: str | None) -> bool:
    from pydantic import ValidationError

    from mallvi.graph.backends.llm.client import extract_json

    try:
        _schema(agent).model_validate_json(extract_json(text or ""))
    except (ValidationError, ValueError):
        return False
    return True


def _questions(trace_dir: Path) -> list[dict[str, Any]]:
    """One entry per node execution of a model agent: its answer calls (probes left out) and whether it ended
    with an accepted answer (the node produced a plan rather than an error or refusal)."""
    events = [json.loads(line) for f in sorted(trace_dir.rglob("*.jsonl")) for line in f.read_text().splitlines()
              if line.strip()]
    spans: dict[str, dict[str, Any]] = {}
    for e in events:
        if e.get("kind") == "node_start" and e.get("node") in AGENTS:
            spans[e["span"]] = {"agent": e["node"], "calls": [], "accepted": None}
        elif e.get("kind") == "llm_call" and e.get("span") in spans:
            if "friendly assistant" in json.dumps(e.get("prompt", ""))[:400]:
                continue  # the endpoint probe
            spans[e["span"]]["calls"].append(e)
        elif e.get("kind") == "node_end" and e.get("span") in spans:
            out = json.dumps(e.get("outputs"))
            bad = '"refusal"' in out or '"stage_error": {' in out or '"action_plan": null' in out
            spans[e["span"]]["accepted"] = e.get("outcome") == "ok" and not bad
    return [q for q in spans.values() if q["calls"]]


def _run(task: str, seed: int, decoding: str, args: argparse.Namespace, base_url: str, model: str,
         trace_root: Path) -> dict[str, Any]:
    from mallvi.config import LlmConfig, RunConfig
    from mallvi.orchestration.run_instruction import run
    from mallvi.orchestration.stations import RunRequest

    llm = LlmConfig(base_url=base_url, llm_model=model, vlm_model=model, timeout_s=args.llm_timeout,
                    decoding=decoding)
    cfg = RunConfig(agent_backends={a: "llm" for a in AGENTS}, llm=llm, perception=args.perception)
    trace_dir = trace_root / decoding / f"{task}-{seed}"
    t0 = time.perf_counter()
    try:
        r = run(RunRequest(instruction=None, task=task, seed=seed, trace_dir=trace_dir), cfg)
        row = {"success": r.success, "status": r.status, "wall_s": r.wall_s, "subtasks": len(r.subtasks),
               "failure": (r.failure_report or {}).get("reason") or r.refusal}
    except Exception as e:  # a crash is a data point, not the end of the measurement
        row = {"success": False, "status": f"crash: {type(e).__name__}: {e}", "wall_s": time.perf_counter() - t0,
               "subtasks": 0, "failure": str(e)}
    row.update(task=task, seed=seed, decoding=decoding, questions=_questions(trace_dir))
    return row


def _agent_table(rows: list[dict[str, Any]], agent: str) -> dict[str, Any]:
    qs = [q for r in rows for q in r["questions"] if q["agent"] == agent]
    calls = [c for q in qs for c in q["calls"]]
    ok_calls = [c for c in calls if not c.get("error")]
    subtasks = sum(max(r["subtasks"], 1) for r in rows if any(q["agent"] == agent for q in r["questions"]))
    return {
        "questions": len(qs),
        "first_try_schema_valid": sum(_valid(agent, q["calls"][0].get("response")) for q in qs),
        "accepted_after_reasks": sum(bool(q["accepted"]) for q in qs),
        "calls": len(calls),
        "failed_calls": len(calls) - len(ok_calls),
        "latency_s_median": statistics.median([c["latency_s"] for c in ok_calls]) if ok_calls else None,
        "latency_s_max": max((c["latency_s"] for c in ok_calls), default=None),
        "tokens_in_mean": statistics.mean([c.get("tokens_in") or 0 for c in ok_calls]) if ok_calls else None,
        "tokens_out_mean": statistics.mean([c.get("tokens_out") or 0 for c in ok_calls]) if ok_calls else None,
        "tokens_out_max": max((c.get("tokens_out") or 0 for c in ok_calls), default=None),
        "calls_per_subtask": len(calls) / subtasks if subtasks else None,
    }


def _fmt(v: Any, digits: int = 2) -> str:
    return "–" if v is None else (f"{v:.{digits}f}" if isinstance(v, float) else str(v))


def _markdown(summary: dict[str, Any], args: argparse.Namespace) -> str:
    lines = [f"Seeds {args.seed_start}–{args.seed_start + args.seeds - 1}; {' and '.join(AGENTS)} on "
             f"SmolLM2-135M-Instruct (Q4_1, llama-cpp-python server, 1 thread), the rest on rules; "
             f"perception {args.perception}.", "",
             "| decoding | agent | questions | schema-valid 1st try | accepted after re-asks | calls | "
             "median / max latency s | tokens in / out (mean) | max tokens out | calls per subtask |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for s in summary.values():
        for agent, a in s["agents"].items():
            n = a["questions"]
            lines.append(
                f"| {s['decoding_used']} | {agent} | {n} | {a['first_try_schema_valid']}/{n} | "
                f"{a['accepted_after_reasks']}/{n} | {a['calls']} | {_fmt(a['latency_s_median'])} / "
                f"{_fmt(a['latency_s_max'])} | {_fmt(a['tokens_in_mean'], 0)} / {_fmt(a['tokens_out_mean'], 0)} | "
                f"{_fmt(a['tokens_out_max'])} | {_fmt(a['calls_per_subtask'])} |")
    lines += ["", "| decoding | task | success (simulator truth) | statuses | mean wall s/run |",
              "|---|---|---|---|---|"]
    for s in summary.values():
        for task, t in s["tasks"].items():
            lines.append(f"| {s['decoding_used']} | {task} | {t['successes']}/{t['runs']} | {t['statuses']} | "
                         f"{_fmt(t['wall_s_mean'], 1)} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--seed-start", type=int, default=1000)
    ap.add_argument("--tasks", default="stack_blocks_two,stack_blocks_three")
    ap.add_argument("--decoding", default="auto,prompt", help="comma-separated modes to compare")
    ap.add_argument("--perception", default="color", choices=["color", "sim"])
    ap.add_argument("--llm-timeout", type=float, default=30.0)
    ap.add_argument("--out", default="figures/llm")
    ap.add_argument("--summarize", action="store_true", help="only summarise DIR/rows.jsonl of an earlier run")
    ap.add_argument("--agents", default="decomposer,thinker", help="the agents on the model (default: both)")
    args = ap.parse_args(argv)
    global AGENTS
    AGENTS = tuple(args.agents.split(","))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stopped: still shut the model server down

    from mallvi.graph.backends.llm.decoding import EndpointCaps, probe_endpoint
    from tests.fixtures.local_llm_server import LocalLlmServer, smollm2_gguf

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    modes = args.decoding.split(",")
    used = {m: m for m in modes}
    if not args.summarize:
        gguf = smollm2_gguf()
        if gguf is None:
            print("SmolLM2 GGUF not installed: run scripts/setup_local_model.sh", file=sys.stderr)
            return 2
        for seed in range(args.seed_start, args.seed_start + args.seeds):  # interleaved: a measurement cut
            for task in args.tasks.split(","):  # short still compares tasks and modes on the same seeds
                for decoding in modes:
                    # A fresh server per run: llama-cpp-python's server grows while it answers under a schema
                    # (past 7 GB within one stack_blocks_three run with the Thinker on the model, here).
                    with LocalLlmServer(gguf) as srv:
                        if decoding == "auto":
                            from mallvi.config import LlmConfig
                            from mallvi.graph.backends.llm.client import make_chat_model

                            cfg = LlmConfig(base_url=srv.base_url, llm_model=srv.model, timeout_s=args.llm_timeout)
                            caps: EndpointCaps = probe_endpoint(make_chat_model(cfg, srv.model), srv.base_url,
                                                                srv.model, args.llm_timeout)[0]
                            used["auto"] = f"auto → {caps.decoding}"
                        (out / "modes.json").write_text(json.dumps(used))
                        row = _run(task, seed, decoding, args, srv.base_url, srv.model, out / "traces")
                    print(f"[llm_figures] {decoding} {task} seed {seed}: {row['status']} "
                          f"success={row['success']} {row['wall_s']:.1f} s", file=sys.stderr, flush=True)
                    with (out / "rows.jsonl").open("a") as fh:
                        fh.write(json.dumps(row, default=str) + "\n")
    if (out / "modes.json").is_file():
        used.update(json.loads((out / "modes.json").read_text()))
    rows = [json.loads(line) for line in (out / "rows.jsonl").read_text().splitlines() if line.strip()]
    summary: dict[str, Any] = {}
    for decoding in modes:
        mode_rows = [r for r in rows if r["decoding"] == decoding]
        tasks = {}
        for task in args.tasks.split(","):
            tr = [r for r in mode_rows if r["task"] == task]
            statuses: dict[str, int] = {}
            for r in tr:
                statuses[r["status"]] = statuses.get(r["status"], 0) + 1
            tasks[task] = {"runs": len(tr), "seeds": sorted(r["seed"] for r in tr),
                           "successes": sum(bool(r["success"]) for r in tr), "statuses": statuses,
                           "wall_s_mean": statistics.mean([r["wall_s"] for r in tr]) if tr else None}
        summary[decoding] = {"decoding_used": used[decoding], "tasks": tasks,
                             "agents": {a: _agent_table(mode_rows, a) for a in AGENTS}}
    (out / "llm_figures.json").write_text(json.dumps(summary, indent=2, default=str))
    md = _markdown(summary, args)
    (out / "llm_figures.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
