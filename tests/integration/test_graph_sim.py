"""The rules backend end to end in the SAPIEN simulator (colour perception), judged by simulator truth, and
bad instructions refused with exit code 2 before anything moves."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from mallvi.bench.task_scenes import scene_catalog
from mallvi.cli import main
from mallvi.config import RunConfig
from mallvi.orchestration.run_instruction import run
from mallvi.orchestration.stations import RunRequest
from mallvi.sim_bridge.world import SimWorld


@pytest.mark.slow
@pytest.mark.parametrize(("instruction", "task", "seed"), [
    ("stack the green block on the red block", "stack_blocks_three", 1),
    ("stack the green block on the red block", "stack_blocks_three", 2),
    ("put the red cube on top of the blue one", "stack_blocks_three", 3),
    ("place the red, green and blue blocks from left to right", "blocks_ranking_rgb", 1),
    ("hand over the red block from the left arm to the right arm", "handover_block", 2),
])
def test_rules_backend_succeeds_in_the_simulator(instruction: str, task: str, seed: int) -> None:
    r = run(RunRequest(instruction=instruction, task=task, seed=seed), RunConfig(perception="color"))
    assert r.success, (r.failure_report, [c.model_dump() for c in r.goal_check])
    assert r.success_source == "simulator: goal predicates" and r.goal_check
    assert r.graph_success and r.status == "succeeded"


@pytest.mark.slow
def test_without_an_instruction_the_scene_instruction_and_task_check_are_used() -> None:
    r = run(RunRequest(task="handover_block", seed=1), RunConfig(perception="color"), catalog=scene_catalog())
    assert r.instruction and r.success_source == "simulator: task success check"
    assert r.success and r.graph_success, r.failure_report


class _Recorder:
    """Wraps SimWorld.create/close to snapshot arm joints and object poses at creation and at the end."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.created = 0
        self.start: dict[str, Any] = {}
        self.end: dict[str, Any] = {}
        create, close = SimWorld.create.__func__, SimWorld.close  # type: ignore[attr-defined]

        def snap(w: SimWorld) -> dict[str, Any]:
            return {"joints": {s: w.arms[s].joint_positions_rad().copy() for s in ("left", "right")},
                    "objects": {n: np.array(w.truth.get_object(n).pose.position_m) for n in w.truth.object_names()}}

        def create_rec(cls: type[SimWorld], *a: Any, **k: Any) -> SimWorld:
            w = create(cls, *a, **k)
            self.created += 1
            self.start = snap(w)
            return w

        def close_rec(w: SimWorld) -> None:
            if not w._closed:
                self.end = snap(w)
            close(w)

        monkeypatch.setattr(SimWorld, "create", classmethod(create_rec))
        monkeypatch.setattr(SimWorld, "close", close_rec)


@pytest.mark.parametrize("instruction", ["sing a song", "stack the red block on the red block",
                                         "put the red block on the blue block and the blue block on the red block"])
def test_unparsable_and_impossible_instructions_exit_2_before_a_world_exists(
        instruction: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    rec = _Recorder(monkeypatch)
    code = main(["run", instruction, "--task", "stack_blocks_three", "--seed", "1", "--quiet"])
    assert code == 2 and rec.created == 0
    assert "mallvi: error:" in capsys.readouterr().err


def test_an_object_not_in_the_scene_is_refused_and_nothing_moves(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    rec = _Recorder(monkeypatch)
    code = main(["run", "put the yellow block on the red block", "--task", "stack_blocks_three", "--seed", "1",
                 "--json", "--quiet", "--trace-dir", str(tmp_path / "t")])
    out = capsys.readouterr()
    assert code == 2 and rec.created == 1
    result = json.loads(out.out)
    assert result["status"] == "refused" and "yellow" in result["refusal"] and result["success"] is False
    for key in ("success", "graph_success", "status", "goal", "subtasks", "attempts", "llm_calls", "wall_s", "trace",
                "failure_report"):
        assert key in result
    for side in ("left", "right"):
        np.testing.assert_allclose(rec.end["joints"][side], rec.start["joints"][side], atol=1e-6)
    for name, p in rec.start["objects"].items():
        np.testing.assert_allclose(rec.end["objects"][name], p, atol=1e-3)


def test_unavailable_options_are_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "pick up the red block", "--task", "stack_blocks_three", "--robot", "piper"]) == 2
    assert "mixing the simulator and the real rig" in capsys.readouterr().err
    assert main(["run", "pick up the red block", "--task", "no_such_scene", "--quiet"]) == 2
    assert "no_such_scene" in capsys.readouterr().err


def test_llm_backend_without_endpoint_exits_2(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("MALLVI_BASE_URL", raising=False)
    assert main(["run", "pick up the red block", "--task", "stack_blocks_three", "--backend", "llm"]) == 2
    assert "base URL" in capsys.readouterr().err


def test_cli_approval_abort_moves_nothing_and_pause_resumes_from_the_checkpoint(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    import io

    args = ["run", "stack the green block on the red block", "--task", "stack_blocks_three", "--seed", "2",
            "--approve", "--json", "--quiet", "--trace-dir", str(tmp_path / "run")]
    rec = _Recorder(monkeypatch)
    monkeypatch.setattr("sys.stdin", io.StringIO("b\n"))
    assert main(args) == 1
    aborted = json.loads(capsys.readouterr().out)
    assert aborted["status"] == "aborted"
    for side in ("left", "right"):
        np.testing.assert_allclose(rec.end["joints"][side], rec.start["joints"][side], atol=1e-6)

    monkeypatch.setattr("sys.stdin", io.StringIO("p\n"))
    assert main(args) == 4  # paused: nothing failed
    out, err = capsys.readouterr()
    paused = json.loads(out)
    assert paused["status"] == "paused" and paused["thread_id"]
    assert f"resume with --resume {paused['thread_id']}" in err
    assert (tmp_path / "run" / "checkpoints.sqlite").exists()

    monkeypatch.setattr("sys.stdin", io.StringIO("a\n"))
    assert main([*args, "--resume", paused["thread_id"]]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["status"] == "succeeded" and done["success"] and done["thread_id"] == paused["thread_id"]


def test_cli_llm_backend_in_the_simulator_over_http(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    import sys
    from pathlib import Path

    from mallvi.tracing.trace import read_events

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.fixtures.graph_openai_server import FakeOpenAIServer

    plan = {"subtasks": [{"text": "stack the green block on the red block", "action": "stack",
                          "obj": {"phrase": "the green block", "color": "green", "label": "block"},
                          "target": {"phrase": "the red block", "color": "red", "label": "block"}, "relation": "on",
                          "post": [{"relation": "on", "args": ["green_block", "red_block"]}]}],
            "goal": [{"relation": "on", "args": ["green_block", "red_block"]}]}
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-test-key-0000")
    with FakeOpenAIServer() as srv:
        srv.script.defaults.update(
            decomposer=json.dumps(plan), descriptor=json.dumps({"objects": [], "relations": []}),
            perceptor=json.dumps({"focus": ["green_block", "red_block"]}),
            grounder=json.dumps({"choices": {"green_block": 0, "red_block": 0}}),
            reflector=json.dumps({"verdict": "success", "explanation": "stacked"}))
        code = main(["run", "stack the green block on the red block", "--task", "stack_blocks_three", "--seed", "2",
                     "--backend", "llm", "--agent-backend", "thinker=rules", "--base-url", srv.base_url,
                     "--llm-model", "m-text", "--vlm-model", "m-vision", "--json", "--quiet",
                     "--trace-dir", str(tmp_path / "llm")])
        agents = set(srv.script.agents_called())
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["success"] and result["graph_success"]
    assert agents == {"decomposer", "descriptor", "perceptor", "grounder", "reflector"}
    probes = [p for p in srv.script.probes if p["decoding"] != "vision"]
    assert result["llm_calls"]["calls"] == 5 + len(probes)  # one decoding probe per model
    assert sorted(p["model"] for p in probes) == ["m-text", "m-vision"]
    events = read_events(tmp_path / "llm")
    llm_events = [e for e in events if e["kind"] == "llm_call"]
    assert {e["node"] for e in llm_events} == agents
    assert "sk-secret-test-key-0000" not in (tmp_path / "llm" / "events.jsonl").read_text()
