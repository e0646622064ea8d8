"""Viewer building blocks: catalog discovery, timeline bars and retry arrows, overlays, benchmark parsing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image

from mallvi.logviz.components.bench import paper_numbers, parse_results
from mallvi.logviz.components.overlay import render_overlay, resolve_artifact
from mallvi.logviz.components.runlist import filter_runs
from mallvi.logviz.components.timeline import OUTCOME_STYLE, timeline_figure
from mallvi.logviz.reader import load_run
from mallvi.logviz.run_index import RunCatalog
from mallvi.tracing.trace import TraceWriter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"


def test_catalog_finds_single_runs_bench_episodes_and_bench_folders() -> None:
    catalog = RunCatalog(FIXTURES)
    keys = catalog.keys()
    assert "run_stack" in keys and "real_stack_blocks_two" in keys
    assert "bench_planning/traces/stack_blocks_three-100001" in keys
    assert catalog.bench_keys == ["bench_planning", "bench_real_expert"]
    assert "bench_real_expert/traces/stack_blocks_three/100000" in keys
    assert RunCatalog(FIXTURES / "run_stack").keys() == ["."]
    runs = catalog.runs()
    failures = filter_runs(runs, None, ["failure"])
    assert [k for k, _ in failures] == ["bench_planning/traces/stack_blocks_three-100001"]
    assert len(filter_runs(runs, ["blocks_ranking_rgb"], None)) == 2


def test_catalog_picks_up_a_run_that_appears_later(tmp_path: Path) -> None:
    catalog = RunCatalog(tmp_path, rescan_s=0.0)
    assert catalog.keys() == []
    with TraceWriter(tmp_path / "new_run") as w:
        w.emit("run_start", instruction="go", task="t", seed=0, config={})
    assert catalog.keys() == ["new_run"] and catalog.run("new_run") is not None


def test_timeline_has_a_bar_per_execution_coloured_by_outcome_and_retry_arrows() -> None:
    run = load_run(FIXTURES / "run_stack")
    fig = timeline_figure(run)
    bars = {trace.name: list(trace.text) for trace in fig.data if trace.type == "bar"}
    assert sum(len(v) for v in bars.values()) == len(run.node_execs) == 23
    assert bars[OUTCOME_STYLE["failed"][0]] == ["reflector #1", "reflector #1"]  # subtask 0 and subtask 1
    assert bars[OUTCOME_STYLE["blamed"][0]] == ["grounder #1", "actor #1"]
    arrows = [a.text for a in fig.layout.annotations]
    assert arrows == ["retry grounder", "retry actor"]
    assert "wrong_object" in fig.layout.annotations[0].hovertext
    # each arrow ends at the start of the re-run execution
    grounder2 = next(ex for ex in run.node_execs if ex.label == "grounder #2")
    assert abs(fig.layout.annotations[0].x - (grounder2.t_start - (run.t_start or 0))) < 1e-9


def test_a_running_node_is_drawn_up_to_the_last_event(tmp_path: Path) -> None:
    with TraceWriter(tmp_path) as w:
        w.emit("run_start", instruction="go", task="t", seed=0, config={})
        w.emit("node_start", node="actor", attempt=1, subtask_index=0)
        w.emit("actor_command", arm="left", skill="grasp_actor", args={}, ok=True, message="ok")
    run = load_run(tmp_path)
    (bar,) = [t for t in timeline_figure(run).data if t.type == "bar"]
    assert bar.name == OUTCOME_STYLE["running"][0] and bar.x[0] > 0


def _image_with_mask(tmp_path: Path) -> dict[str, object]:
    with TraceWriter(tmp_path) as w:
        mask = np.zeros((40, 60), np.uint8)
        mask[10:20, 10:20] = 255
        mask_rel = w.save_image("m", mask, node="perceptor", role="mask")
        w.save_image(
            "rgb",
            np.zeros((40, 60, 3), np.uint8),
            node="perceptor",
            boxes=[[30, 5, 50, 30, "cube", 0.8]],
            masks=[{"path": mask_rel, "label": "cube"}],
            grasp_points=[[40, 17, 0.0, "cube"]],
        )
    run = load_run(tmp_path)
    return next(a for a in run.unattached if a.get("name") == "rgb")


def _decode(url: str) -> np.ndarray:
    import base64
    import io

    return np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB"))


def test_overlays_are_drawn_on_the_image(tmp_path: Path) -> None:
    artifact = _image_with_mask(tmp_path)
    url, captions = render_overlay(tmp_path, artifact)  # type: ignore[arg-type]
    assert url is not None
    pixels = _decode(url)
    assert pixels[15, 15].sum() > 0  # the mask tinted a black image
    assert pixels[5, 40].sum() > 0  # the box's top edge
    assert pixels[35, 5].sum() == 0  # untouched background
    assert captions[0] == "mask: cube" and "box: cube 0.80 [30, 5, 50, 30]" in captions
    assert any(c.startswith("grasp: cube at (40, 17)") for c in captions)


def test_artifact_paths_cannot_leave_the_trace(tmp_path: Path) -> None:
    (tmp_path / "secret.png").write_bytes(b"x")
    trace = tmp_path / "trace"
    trace.mkdir()
    assert resolve_artifact(trace, "../secret.png") is None
    url, captions = render_overlay(trace, {"path": "../secret.png", "meta": {}})
    assert url is None and "missing image" in captions[0]


def test_bench_results_parse_in_several_shapes_and_paper_numbers_come_from_anchors() -> None:
    tier, rows = parse_results(json.loads((FIXTURES / "bench_planning" / "results.json").read_text()))
    assert tier == "planning" and {r.task: r.success_rate for r in rows} == {
        "stack_blocks_three": 0.5,
        "blocks_ranking_rgb": 1.0,
    }
    tier, rows = parse_results(
        {
            "tier": "grounding",
            "tasks": [
                {"task": "grounding_sparse", "episodes": 3, "success_rate": 66.7, "score": 81.2, "paper": {"X": 90}}
            ],
        }
    )
    assert tier == "grounding" and rows[0].success_rate is not None and abs(rows[0].success_rate - 0.667) < 1e-9
    assert rows[0].score == 81.2 and rows[0].paper == {"X": 90.0}
    assert parse_results(["not", "a", "dict"]) == ("", [])
    paper = paper_numbers("planning", ["stack_blocks_three"])
    assert paper["GPT-5"]["stack_blocks_three"] is not None
    assert paper_numbers("no-such-tier", ["x"]) == {}


def test_scene_graph_one_labelled_edge_per_pair_read_from_the_pair_s_first_object() -> None:
    from mallvi.logviz.components.scene_graph_view import scene_graph_figure, scene_graph_in

    state = {
        "scene": {
            "objects": [
                {"id": "red_block", "position_m": [0.0, 0.0, 0.76]},
                {"id": "green_block", "position_m": [0.1, 0.0, 0.76]},
                {"id": "blue cube"},
            ],
            "relations": [
                {"relation": "right_of", "args": ["green_block", "red_block"]},
                {"relation": "left_of", "args": ["red_block", "green_block"]},
                ["blue cube", "touching", "red_block"],
            ],
        }
    }
    graph = scene_graph_in(state)
    assert graph is not None and len(graph["objects"]) == 3
    fig = scene_graph_figure(graph["objects"], graph["relations"])
    (labels,) = [t.text for t in fig.data if t.mode == "text"]
    assert sorted(labels) == ["right_of", "touching"]
    (nodes,) = [t for t in fig.data if t.mode == "markers+text"]
    assert list(nodes.text) == ["red_block", "green_block", "blue cube"]
    assert (nodes.x[0], nodes.y[0]) == (0.0, 0.0)  # placed at its world x/y


def test_a_run_s_page_names_its_station_and_what_in_it_was_privileged(tmp_path: Path) -> None:
    from mallvi.logviz.app import _run_header

    def facts(run_dir: Path, **start: object) -> dict[str, str]:
        with TraceWriter(run_dir) as w:
            w.emit("run_start", instruction="go", task="t", seed=0, config={}, **start)
        table = _run_header(load_run(run_dir)).children[1]
        return {row.children[0].children: row.children[1].children for row in table.children}

    sim = facts(tmp_path / "sim", station="sim", privileged=["objects resolved from simulator truth"])
    assert sim["station"] == "sim" and sim["privileged inputs"] == "objects resolved from simulator truth"
    assert facts(tmp_path / "rig", station="piper rig", privileged=[])["privileged inputs"] == "none"
    assert "station" not in facts(tmp_path / "old")  # a trace from before Stations shows no such rows
