"""The evaluation report (results.json, table.md) from episode records as the runner writes them: models and
endpoint host, intervals, the indicative mark, the model's cost per episode and per success, failures by category
with the leading reasons in words, the paper's figures over the same tasks, and valid JSON whatever the records."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from mallvi.bench import anchors
from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.metrics import wilson_interval
from mallvi.bench.report import write_report

KEY = "sk-test-secret-0123456789"


def _strict(text: str) -> Any:
    def refuse(token: str) -> None:
        raise AssertionError(f"results.json holds {token}, which is not JSON")

    return json.loads(text, parse_constant=refuse)


def _rec(task: str, seed: int, success: bool, **kw: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {"task": task, "seed": seed, "agent": "mallvi", "tier": "planning", "status": "done",
                           "success": success, "score": None, "turns": 5, "actions": 4, "failed_actions": 0,
                           "refusals": 0, "parse_errors": 0, "graph_success": success,
                           "graph_status": "succeeded" if success else "failed", "station": "sim",
                           "privileged": ["objects resolved from simulator truth"],
                           "llm_calls": {"calls": 4, "failed": 0, "tokens_in": 1000, "tokens_out": 100,
                                         "latency_s": 2.0, "by_node": {"decomposer": 1, "thinker": 3}}}
    rec.update(kw)
    return rec


def _llm_cfg(**kw: Any) -> BenchConfig:
    return BenchConfig(tier="planning", tasks=("place_burger_fries", "blocks_ranking_rgb"), episodes=20,
                       backend="llm", perception="color",
                       llm={"base_url": f"http://user:{KEY}@127.0.0.1:8000/v1?key={KEY}", "model": "m-text",
                            "vlm_model": "m-vision"}, **kw)


def _records() -> list[dict[str, Any]]:
    recs = [
        _rec("place_burger_fries", 100000, True),
        _rec("place_burger_fries", 100001, False, actions=0, graph_status="refused", refusal_cause="input",
             message="'the red block' is ambiguous: two objects match it"),
        _rec("place_burger_fries", 100002, False, actions=0, graph_status="refused", refusal_cause="model",
             message=f"the model endpoint failed: decomposer: the endpoint refused the key Bearer {KEY}"),
    ]
    for i in range(20):
        seed = 100000 + i
        if i < 6:
            recs.append(_rec("blocks_ranking_rgb", seed, True))
        elif i < 16:
            recs.append(_rec("blocks_ranking_rgb", seed, False, conditions=[
                {"name": "red-green |dx|", "held": False, "measured": 0.2 + i / 100, "limit": 0.13, "kind": "<",
                 "unit": "m", "miss": 0.07 + i / 100},
                {"name": "left gripper opening", "held": True, "measured": 1.0, "limit": 0.8, "kind": ">"}]))
        else:
            recs.append(_rec("blocks_ranking_rgb", seed, False, failure_report={
                "subtask_index": 0, "subtask": "put the red block left", "attempts": 4,
                "reason": f"subtask budget exhausted after {i % 3 + 2} attempts; last: the grasp closed on nothing"}))
    return recs


def test_the_wilson_interval_is_the_textbook_one() -> None:
    lo, hi = wilson_interval(3, 10)  # type: ignore[misc]
    assert lo == pytest.approx(0.1078, abs=1e-4) and hi == pytest.approx(0.6032, abs=1e-4)
    assert wilson_interval(0, 2) == (0.0, pytest.approx(0.6576, abs=1e-4))
    assert wilson_interval(20, 20)[1] == 1.0  # type: ignore[index]
    assert wilson_interval(0, 0) is None


def test_the_report_names_models_intervals_costs_and_reasons(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    cfg = _llm_cfg()
    write_report(cfg, tmp_path, _records(), {"wall_s": 10.0, "episodes_run": 23,
                                             "endpoint": {"host": "127.0.0.1:8000", "vision": {"m-vision": "sees"}}})
    text = (tmp_path / "results.json").read_text()
    results = _strict(text)
    table = (tmp_path / "table.md").read_text()
    for written in (text, table, (tmp_path / "table.md").read_text()):
        assert KEY not in written and "user:" not in written  # no key, no credentials, from the URL or a message

    models = results["models"]
    assert models["by_agent"] == {"decomposer": "m-text", "descriptor": "m-vision", "perceptor": "m-text",
                                  "grounder": "m-text", "thinker": "m-text", "reflector": "m-vision"}
    assert models["endpoint"] == "127.0.0.1:8000" and models["vision_check"] == {"m-vision": "sees"}
    title = table.splitlines()[0]
    assert "backend rules" not in title and "m-text" in title and "m-vision" in title and "127.0.0.1:8000" in title

    burger, ranking = results["tasks"]["place_burger_fries"], results["tasks"]["blocks_ranking_rgb"]
    assert burger["success_ci95"] == pytest.approx(list(wilson_interval(1, 3)), abs=1e-4)  # type: ignore[arg-type]
    assert burger["indicative"] is True and ranking["indicative"] is False
    assert "| place_burger_fries | Place3 | 33.3* ✗ | 6.1–79.2 | 3 |" in table  # a graph row: not the paper's agent
    assert "Not comparable (" in table
    assert "| blocks_ranking_rgb | Rank2 | 30.0 ✗ | 14.5–51.9 | 20 |" in table

    assert burger["llm"]["per_episode"] == {"calls": 4.0, "failed": 0.0, "tokens_in": 1000.0, "tokens_out": 100.0,
                                            "latency_s": 2.0}
    assert burger["llm"]["per_success"]["tokens_in"] == 3000.0  # three episodes' tokens bought one success
    assert results["llm"]["per_success"]["calls"] == pytest.approx(4 * 23 / 7, abs=1e-3)
    assert "| place_burger_fries | 3 | 4.0 | 1000.0 | 100.0 | 2.0 | 12.0 | 3000.0 | 300.0 | 6.0 |" in table

    assert burger["failure_categories"] == {"refused before moving": 1, "model failure": 1}
    assert ranking["failure_categories"] == {"motion failure": 4, "condition missed": 10}
    top = ranking["leading_reasons"][0]
    assert (top["category"], top["count"], top["reason"]) == ("condition missed", 10, "missed: red-green |dx|")
    assert ranking["leading_reasons"][1]["count"] == 4  # the same give-up with other attempt counts is one reason
    assert "- place_burger_fries: 'the red block' is ambiguous: two objects match it (refused before moving" in table
    assert "seed 100001: refused before moving: 'the red block' is ambiguous" in table
    assert results["failure_categories"]["condition missed"] == 10

    paper = results["averages"]["all"]["paper"]
    gpt5 = anchors.task_scores("planning", "GPT-5")
    assert paper["GPT-5"] == pytest.approx((gpt5["place_burger_fries"] + gpt5["blocks_ranking_rgb"]) / 2)
    assert paper["GPT-5"] != anchors.tier_average("planning", "GPT-5")  # not the paper's over all 14 tasks
    avg_row = next(line for line in table.splitlines() if line.startswith("| **average, these 2 tasks**"))
    assert f"| {paper['GPT-5']:.1f} |" in avg_row
    assert "Station: sim" in table and "objects resolved from simulator truth" in table


def test_a_twin_bench_and_a_rules_run_say_so(tmp_path: Path) -> None:
    cfg = BenchConfig(tier="planning", tasks=("place_burger_fries",), episodes=1, station="twin",
                      calibration=str(tmp_path / "twin_calibration.yaml"))
    results = write_report(cfg, tmp_path, [_rec("place_burger_fries", 100000, True, station="twin", privileged=[],
                                                llm_calls=None)], {"wall_s": 1.0, "episodes_run": 1})
    table = (tmp_path / "table.md").read_text()
    assert "station twin (calibration" in table.splitlines()[0] and "rules backend" in table.splitlines()[0]
    assert results["station"]["name"] == "twin" and results["station"]["calibration"] == "twin_calibration.yaml"
    assert results["models"] is None and results["llm"] is None and "Models: none" in table
    assert "Privileged inputs (a rig would not have them): none" in table


def test_a_nan_score_becomes_null_with_the_reason(tmp_path: Path) -> None:
    cfg = BenchConfig(tier="grounding", tasks=("grounding_sparse",), episodes=3, agent="expert")
    recs = [{"task": "grounding_sparse", "seed": 100000 + i, "agent": "expert", "tier": "grounding",
             "status": "done", "success": True, "score": s, "answers": {"red": "left"}, "truth": {"red": "left"},
             "cost": {"wall_s": w}} for i, (s, w) in enumerate([(100.0, 1.0), (math.nan, math.inf), (100.0, 1.0)])]
    write_report(cfg, tmp_path, recs, {"wall_s": 1.0, "episodes_run": 3})
    results = _strict((tmp_path / "results.json").read_text())
    assert results["tasks"]["grounding_sparse"]["score"] is None
    why = {n["field"]: n["why"] for n in results["null_values"]}
    assert "seeds 100001" in why["tasks.grounding_sparse.score"]
    assert any(f.startswith("cost.") for f in why)  # the infinite wall time is null too, and named
    assert "`tasks.grounding_sparse.score` is null" in (tmp_path / "table.md").read_text()


def _texts(component: Any) -> list[str]:
    """Every string the page shows, depth first."""
    if isinstance(component, str):
        return [component]
    children = getattr(component, "children", None)
    if children is None:
        return []
    items = children if isinstance(children, list | tuple) else [children]
    return [t for c in items for t in _texts(c)]


def test_the_viewers_bench_page_shows_the_reports_fields(tmp_path: Path) -> None:
    from mallvi.logviz.components.bench import bench_page

    write_report(_llm_cfg(), tmp_path, _records(), {"wall_s": 10.0, "episodes_run": 23})
    shown = _texts(bench_page(tmp_path, "run", set()))
    text = "\n".join(shown)
    assert "models: decomposer, perceptor, grounder, thinker: m-text; descriptor, reflector: m-vision" in text
    assert "(endpoint 127.0.0.1:8000)" in text and KEY not in text and "station: sim" in text
    assert "33.3*" in shown and "6.1–79.2" in shown and "30.0" in shown and "14.5–51.9" in shown
    assert "4.0 / 1000 / 100" in shown  # calls, tokens in, tokens out per episode
    assert any(s.startswith("motion failure 4, condition missed 10 — missed: red-green |dx| (condition missed, 10×)")
               for s in shown)
    assert "average over these 2 task(s), the paper's over the same" in shown
    assert "95.0" in shown and "67.0" not in shown  # GPT-5 over these two tasks, not over all fourteen


def test_an_episode_whose_object_ended_on_the_floor_is_told_apart_from_the_agents_failures() -> None:
    """A fault that throws a bottle off the table leaves nothing to recover: the report says so (simulator truth),
    apart from the agent's own motion failures; the clutter does not count, nor an episode that never moved."""
    from mallvi.bench.failures import categorize

    base = {"status": "done", "success": False, "agent": "mallvi", "tier": "planning", "actions": 9,
            "failed_actions": 1, "message": "grasp failed", "randomization": {"table_top_z_m": 0.72},
            "final_xyz": {"bottle1": [0.3, -0.1, 0.74], "bottle2": [0.9, -0.3, 0.04], "clutter_0": [1.0, 0.0, 0.0]}}
    assert categorize(base) == ("object off the table", "bottle2 ended off the table (simulator truth)")
    on_table = {**base, "final_xyz": {"bottle1": [0.3, -0.1, 0.74], "clutter_0": [1.0, 0.0, 0.0]}}
    assert categorize(on_table) == ("motion failure", "grasp failed")
    never_moved = {**base, "actions": 0, "graph_status": "refused", "message": "not understood"}
    assert categorize(never_moved)[0] == "refused before moving"
