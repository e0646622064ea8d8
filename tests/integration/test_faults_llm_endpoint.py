"""Model endpoint faults through the real ChatOpenAI client against the local test server: what the user sees.

Covered elsewhere (tests/integration/test_graph_llm_server.py): malformed JSON, one 429, one 503, a timeout and
an answer naming a missing object. Here: a connection that closes mid-body, a cut-off JSON answer, a server that
keeps failing, and plans whose targets leave the workspace (x = 3.0 m, below the table) — refused before any
motion, with the refusal in the trace.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mallvi.config import Budgets, LlmConfig, RunConfig
from mallvi.graph.backends.factory import make_backends
from mallvi.graph.drive import GraphOutcome, drive
from mallvi.tracing.trace import TraceWriter, read_events

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tests.fixtures
from tests.fixtures.graph_fakes import TABLE_Z, FakeWorld, fake_context
from tests.fixtures.graph_openai_server import FakeOpenAIServer
from tests.integration.test_graph_llm_server import _defaults, think

WORKSPACE = ((-0.6, -0.35, TABLE_Z - 0.005), (0.6, 0.35, TABLE_Z + 0.6))


def _think_to(x: float, y: float, z: float) -> str:
    plan = json.loads(think())
    plan["calls"][1]["target_pose"] = [x, y, z, 1, 0, 0, 0]
    return json.dumps(plan)


def _run(srv: FakeOpenAIServer, world: FakeWorld, trace_dir: Path, budgets: Budgets | None = None,
         ) -> tuple[GraphOutcome, list[dict[str, object]]]:
    cfg = RunConfig(backend="llm", llm=LlmConfig(base_url=srv.base_url, llm_model="text-model",
                                                 vlm_model="vision-model", api_key="sk-test-key-123456",
                                                 timeout_s=5.0, backoff_s=0.01))
    trace = TraceWriter(trace_dir)
    try:
        ctx = fake_context(world, backends=make_backends(cfg), budgets=budgets, trace=trace, workspace_m=WORKSPACE)
        out, _ = drive(ctx, "stack the green block on the red block")
    finally:
        trace.close()
    return out, list(read_events(trace_dir))


def _world() -> FakeWorld:
    return FakeWorld.blocks(("red", -0.2, 0.0), ("green", 0.2, 0.0))


def _places(world: FakeWorld) -> list[list[float]]:
    return [list(c[2][1]) for c in world.calls if c[0] == "place_actor"]


def test_a_connection_closed_mid_body_and_a_cut_off_json_answer_are_survived(tmp_path: Path) -> None:
    world = _world()
    with FakeOpenAIServer() as srv:
        _defaults(srv)
        srv.script.add("decomposer", {"cut_body": True, "content": srv.script.defaults["decomposer"]})
        srv.script.add("thinker", think()[: len(think()) // 2])  # a JSON answer that stops halfway
        out, _ = _run(srv, world, tmp_path / "t")
        agents = srv.script.agents_called()
    assert out.status == "succeeded" and out.graph_success
    assert agents.count("decomposer") == 2 and agents.count("thinker") == 2  # each asked again, once
    assert out.llm_calls.failed >= 1  # the broken connection is recorded as a failed call
    red, green = world.objects["red_block"].pos, world.objects["green_block"].pos
    assert abs(green[0] - red[0]) < 1e-6 and green[2] > red[2]


def test_a_server_that_keeps_failing_ends_the_run_with_a_report_and_nothing_moves(tmp_path: Path) -> None:
    world = _world()
    before = {k: list(o.pos) for k, o in world.objects.items()}
    with FakeOpenAIServer() as srv:
        _defaults(srv)
        srv.script.defaults["decomposer"] = {"status": 500}
        out, events = _run(srv, world, tmp_path / "t")
    assert out.status in ("failed", "refused") and not out.graph_success
    report = json.dumps(out.failure_report.model_dump(mode="json") if out.failure_report else out.refusal)
    assert "500" in report or "server" in report.lower(), report
    assert world.calls == [] and {k: o.pos for k, o in world.objects.items()} == before
    assert not [e for e in events if e["kind"] == "actor_command"]


def test_a_place_target_far_outside_the_workspace_is_refused_visibly_then_replanned(tmp_path: Path) -> None:
    world = _world()
    with FakeOpenAIServer() as srv:
        _defaults(srv)
        srv.script.add("thinker", _think_to(3.0, 0.0, TABLE_Z + 0.05))
        out, events = _run(srv, world, tmp_path / "t")
    assert out.status == "succeeded"
    red, green = world.objects["red_block"].pos, world.objects["green_block"].pos
    assert abs(green[0] - red[0]) < 1e-6 and green[2] > red[2]  # done by the re-planned attempt
    assert all(abs(p[0]) <= 0.6 for p in _places(world))  # nothing was ever sent towards x = 3.0
    assert all(abs(o.pos[0]) <= 0.6 for o in world.objects.values())
    refusals = [e for e in events if e["kind"] == "safety_refusal"]
    assert len(refusals) == 1 and "outside the workspace" in str(refusals[0]["reason"])
    assert refusals[0]["command"] == "place_actor"
    assert not [e for e in events if e["kind"] == "actor_command" and e["skill"] == "grasp_actor"
                and int(str(e["seq"])) < int(str(refusals[0]["seq"]))]  # refused before the arm even grasped


def test_a_model_insisting_on_a_target_below_the_table_fails_the_run_without_moving(tmp_path: Path) -> None:
    world = _world()
    before = {k: list(o.pos) for k, o in world.objects.items()}
    with FakeOpenAIServer() as srv:
        _defaults(srv)
        srv.script.defaults["thinker"] = _think_to(-0.2, 0.0, TABLE_Z - 0.2)
        out, events = _run(srv, world, tmp_path / "t", budgets=Budgets(max_attempts_per_subtask=2))
    assert out.status == "failed" and out.failure_report is not None
    report = out.failure_report
    # the first plan is refused before it moves; the same plan again is a repeat, sent back to the model, not run
    assert any("below the table" in v.explanation for v in report.history), report
    assert any("refused_by_guard" in t for t in report.tried), report
    assert world.calls == [] and {k: o.pos for k, o in world.objects.items()} == before
    assert len([e for e in events if e["kind"] == "safety_refusal"]) >= 1
