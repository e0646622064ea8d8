"""An object lost from view for good ends the run early with a report saying so; one that a re-scan finds again is
carried on as before. Before, a run whose object no camera saw any more spent its whole budget on looks (at
``hard``, 140 attempts of "perceptor named objects not in the scene")."""

from __future__ import annotations

from dataclasses import dataclass

from mallvi.config import Budgets
from mallvi.contracts.observation import Observation
from mallvi.graph.drive import drive
from mallvi.graph.failure_memory import LOST_KIND
from mallvi.graph.schemas import Detection2D, SceneObject
from tests.fixtures.graph_fakes import FakePerception, FakeWorld, fake_context

STACK = "stack the green block on the red block"
BUDGET = 20


def _world() -> FakeWorld:
    return FakeWorld.blocks(("red", 0.05, -0.02), ("green", 0.15, -0.06))


@dataclass
class _Vanishing(FakePerception):
    """The green block is seen by the first scan only (``scans_seen``) and detected by none of the first
    ``detects_missed`` looks of the Grounder."""

    scans_seen: int = 1_000_000
    detects_missed: int = 0
    detects: int = 0

    def scan(self, obs: Observation) -> list[SceneObject]:
        seen = super().scan(obs)
        return seen if self.scans <= self.scans_seen else [o for o in seen if o.id != "green_block"]

    def detect(self, obs: Observation, queries: dict[str, str]) -> dict[str, list[Detection2D]]:
        self.detects += 1
        self.hide = {"green_block"} if self.detects <= self.detects_missed else set()
        return super().detect(obs, queries)


def test_an_object_no_look_finds_again_ends_the_run_early_with_a_report_that_it_is_lost() -> None:
    world = _world()
    perception = _Vanishing(world, scans_seen=1, detects_missed=1_000_000)
    ctx = fake_context(world, perception=perception, budgets=Budgets(max_attempts_per_subtask=BUDGET))
    out, state = drive(ctx, STACK)
    assert out.status == "failed"
    report = state["failure_report"]
    assert report is not None
    assert report.reason.startswith("object lost from view after 2 attempts"), report.reason
    assert "not in the scene" in report.reason  # the re-scan's answer: it is gone from the scene too
    assert report.attempts < BUDGET  # not the budget spent on looks
    assert [m.kind for m in state["failures"]["0"]] == [LOST_KIND, LOST_KIND]
    assert out.node_sequence.count("descriptor") == 2  # the first scan and one re-scan
    assert not [c for c in world.calls if c[0] == "grasp_actor"]  # nothing was tried on an object not seen


def test_an_object_a_re_scan_finds_again_is_carried_on() -> None:
    world = _world()
    perception = _Vanishing(world, detects_missed=1)
    ctx = fake_context(world, perception=perception, budgets=Budgets(max_attempts_per_subtask=BUDGET))
    out, state = drive(ctx, STACK)
    assert out.status == "succeeded", state["failure_report"]
    assert [m.kind for m in state["failures"]["0"]] == [LOST_KIND]
    assert out.node_sequence.count("descriptor") == 2  # looked again at once, then found it
    g, r = world.objects["green_block"].pos, world.objects["red_block"].pos
    assert abs(g[0] - r[0]) < 0.01 and abs(g[1] - r[1]) < 0.01 and g[2] > r[2]
