"""The ``llm`` backend of each agent: a prompt file, a pydantic answer schema and checks against the scene.

Answers that name objects which do not exist are rejected (and re-asked), never executed.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence

from pydantic import BaseModel, Field

from mallvi.contracts.geometry import ARM_SIDES
from mallvi.contracts.observation import Observation
from mallvi.graph.agent_errors import AgentError, NoStrategyLeftError, RefusalError
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.backends.llm.client import LlmClient, load_prompt
from mallvi.graph.backends.rules.descriptor import relations_of
from mallvi.graph.backends.rules.grammar.vocab import COLOURS, SIZE_WORDS
from mallvi.graph.failure_memory import FailedAttempt, repeats, summary
from mallvi.graph.plan_checks import check_consistency
from mallvi.graph.ports import AgentContext
from mallvi.graph.posture import first_seen, lies_on_side, tall_at_first, tipped_with_handle
from mallvi.graph.refs import LABEL_SYNONYMS
from mallvi.graph.schemas import (
    ActionPlan,
    ActorReport,
    Detection2D,
    FailedStep,
    ObjectRef,
    Plan,
    Predicate,
    SceneMemory,
    SceneObject,
    Subtask,
    Verdict,
)


def _failures_json(failures: Sequence[FailedAttempt]) -> str:
    """The failed attempts as the Thinker's prompt shows them (newest 8)."""
    return json.dumps([{"strategy": f.strategy, "object": f.object_id,
                        "object_position_m": [round(v, 3) for v in f.pose_m] if f.pose_m else None,
                        "failed_skill": f.skill, "arm": f.arm, "kind": f.kind, "why": f.explanation[:160],
                        "calls": [c.model_dump(exclude_defaults=True) for c in f.calls]}
                       for f in failures[-8:]]) if failures else "none"


def _objects_json(objs: list[SceneObject] | dict[str, SceneObject], points: bool = False) -> str:
    """Objects as the prompts show them; with ``points``, also each object's own-frame size and its named points
    (grasp frames "cpN", functional points, parts), as the rules backend reads them."""
    items = objs.values() if isinstance(objs, dict) else objs
    out = []
    for o in items:
        d: dict[str, object] = {"id": o.id, "label": o.label, "color": o.color,
                                "position_m": [round(v, 3) for v in o.position_m],
                                "size_m": [round(v, 3) for v in o.size_m]}
        if points:
            if o.box_m is not None:
                d["box_m"] = [round(v, 3) for v in o.box_m]
                if o.box_yaw_rad is not None:
                    d["box_yaw_rad"] = round(o.box_yaw_rad, 3)
            if o.points:
                d["points"] = {k: [round(v, 3) for v in p] for k, p in sorted(o.points.items())}
                d["points_source"] = o.points_source
        out.append(d)
    return json.dumps(out)


def _station_json(ctx: AgentContext) -> str:
    """What the Station tells every backend: per arm whether its gripper holds something, how far it is open, its
    end-effector pose [x, y, z, qw, qx, qy, qz] (world, m) and its reach over the table; the action space the
    Actor executes. A reading a sensor cannot give is null."""
    arms: dict[str, dict[str, object]] = {}
    for arm in ARM_SIDES:
        facts: dict[str, object] = {"holding": None, "gripper_opening": None, "ee_pose": None}
        try:
            if ctx.gripper_holding is not None:
                facts["holding"] = bool(ctx.gripper_holding(arm))
            if ctx.gripper_opening is not None:
                facts["gripper_opening"] = round(float(ctx.gripper_opening(arm)), 3)
            r = ctx.skills.get_arm_pose(arm)
            if r.ok and "pose" in r.data:
                facts["ee_pose"] = [round(float(v), 4) for v in r.data["pose"]]
        except Exception:  # a sensor or driver fault: unknown, as on a rig without that sensor
            pass
        if arm in ctx.reach:
            facts["reach"] = dataclasses.asdict(ctx.reach[arm])
        arms[arm] = facts
    return json.dumps({"arms": arms, "action_space": getattr(ctx, "action_space", "primitives"),
                       "table_top_z": round(ctx.table_top_z, 4)})


class DecomposerAnswer(BaseModel):
    # subtasks and goal are required and come first: under schema-constrained decoding a model must write the
    # plan before it may add a refusal (SmolLM2-135M answered {"refusal": "<the instruction>"} when it could
    # leave the plan out)
    subtasks: list[Subtask]
    goal: list[Predicate]
    refusal: str | None = None


def complete_ref(ref: ObjectRef) -> ObjectRef:
    """``ref`` with the colour, size and object name its own phrase states filled in where the model left them out.

    A model may write ``{"phrase": "green_block"}``: without this the reference would name any object, and a plan
    "green_block on red_block" would read as an object placed on itself. Only words of one meaning are taken (one
    colour, one size); fields the model set are kept.
    """
    words = re.findall(r"[a-z]+", ref.phrase.lower())
    colours = {w for w in words if w in COLOURS}
    sizes = {SIZE_WORDS[w] for w in words if w in SIZE_WORDS}
    labels = [LABEL_SYNONYMS[w] for w in words if w in LABEL_SYNONYMS and LABEL_SYNONYMS[w] != "object"]
    return ref.model_copy(update={
        "color": ref.color or (next(iter(colours)) if len(colours) == 1 else None),
        "size": ref.size or (next(iter(sizes)) if len(sizes) == 1 else None),
        "label": ref.label or (labels[-1] if labels else None)})


def _complete_refs(subtask: Subtask) -> Subtask:
    return subtask.model_copy(update={
        "obj": complete_ref(subtask.obj), "target": complete_ref(subtask.target) if subtask.target else None,
        "group": [complete_ref(r) for r in subtask.group]})


class LlmDecomposer:
    def __init__(self, client: LlmClient) -> None:
        self.client = client

    def decompose(self, instruction: str, scene: SceneMemory | None, log: CallLog) -> Plan:
        def check(a: DecomposerAnswer) -> None:
            if a.refusal is None and not a.subtasks:
                raise ValueError("no subtasks and no refusal")
            a.subtasks = [_complete_refs(st) for st in a.subtasks]
            if a.refusal is None:  # a plan that contradicts itself is the model's error: re-asked, never blamed on
                check_consistency(a.subtasks, a.goal)  # the instruction (the model may still answer a refusal)

        a = self.client.ask("decomposer", load_prompt("decomposer"), f"Instruction: {instruction}",
                            DecomposerAnswer, log, check=check)
        if a.refusal:
            raise RefusalError(a.refusal)
        subtasks = [s.model_copy(update={"index": i}) for i, s in enumerate(a.subtasks)]
        return Plan(subtasks=subtasks, goal=a.goal)


class DescriptorObject(BaseModel):
    id: str
    label: str
    color: str | None = None


class DescriptorAnswer(BaseModel):
    objects: list[DescriptorObject]
    relations: list[Predicate] = Field(default_factory=list)


class LlmDescriptor:
    def __init__(self, client: LlmClient) -> None:
        self.client = client

    def describe(self, obs: Observation, ctx: AgentContext, previous: SceneMemory | None, log: CallLog) -> SceneMemory:
        objects = ctx.perception.scan(obs)
        ids = {o.id for o in objects}

        def check(a: DescriptorAnswer) -> None:
            bad = [o.id for o in a.objects if o.id not in ids] + [x for p in a.relations for x in p.args
                                                                   if x not in ids]
            if bad:
                raise ValueError(f"unknown object ids {sorted(set(bad))}; use only {sorted(ids)}")

        a = self.client.ask("descriptor", load_prompt("descriptor"), f"Localised objects: {_objects_json(objects)}",
                            DescriptorAnswer, log, images=[obs.rgb], check=check)
        named = {o.id: o for o in a.objects}
        merged = [o.model_copy(update={"label": named[o.id].label, "color": named[o.id].color or o.color})
                  if o.id in named else o for o in objects]
        return SceneMemory(objects=merged, relations=a.relations or relations_of(merged, ctx.table_top_z))


class FocusAnswer(BaseModel):
    focus: list[str]


class LlmPerceptor:
    def __init__(self, client: LlmClient) -> None:
        self.client = client

    def focus(self, subtask: Subtask, bindings: dict[str, str], scene: SceneMemory, log: CallLog) -> list[str]:
        ids = {o.id for o in scene.objects}

        def check(a: FocusAnswer) -> None:
            bad = [f for f in a.focus if f not in ids]
            if bad or not a.focus:
                raise ValueError(f"unknown ids {bad}; choose from {sorted(ids)}" if bad else "focus is empty")

        user = f"Subtask: {subtask.model_dump_json()}\nBindings: {json.dumps(bindings)}\n" \
               f"Scene objects: {_objects_json(scene.objects)}"
        return self.client.ask("perceptor", load_prompt("perceptor"), user, FocusAnswer, log, check=check).focus


class GroundAnswer(BaseModel):
    choices: dict[str, int | None]


class LlmGrounder:
    def __init__(self, client: LlmClient) -> None:
        self.client = client

    def choose(
        self, subtask: Subtask, focus: list[str], scene: SceneMemory, candidates: dict[str, list[Detection2D]],
        attempt: int, log: CallLog,
    ) -> dict[str, Detection2D]:
        def check(a: GroundAnswer) -> None:
            for oid, i in a.choices.items():
                if oid not in candidates:
                    raise ValueError(f"{oid} is not one of the objects asked for ({sorted(candidates)})")
                if i is not None and not 0 <= i < len(candidates[oid]):
                    raise ValueError(f"{oid} has {len(candidates[oid])} candidates, index {i} does not exist")

        table = {oid: [{"index": i, "box": list(d.box_xyxy), "score": round(d.score, 3), "label": d.label}
                       for i, d in enumerate(cands)] for oid, cands in candidates.items()}
        memory = {oid: list(o.position_m) for oid in focus if (o := scene.get(oid)) is not None}
        user = f"Candidates: {json.dumps(table)}\nScene memory positions: {json.dumps(memory)}"
        a = self.client.ask("grounder", load_prompt("grounder"), user, GroundAnswer, log, check=check)
        return {oid: candidates[oid][i] for oid, i in a.choices.items() if i is not None}


def _missing_fields(skill: str, obj: str | None, target_pose: list[float] | None) -> list[str]:
    """What a skill call lacks to be carried out: an object to act on, a target pose to place at (3 or 7
    numbers), 16 numbers for an end-effector action."""
    missing = []
    if skill in ("grasp_actor", "upright_actor", "place_actor") and not obj:
        missing.append("an object")
    if skill in ("place_actor", "move_to_pose") and (target_pose is None or len(target_pose) not in (3, 7)):
        missing.append("a target_pose [x, y, z] or [x, y, z, qw, qx, qy, qz]")
    if skill == "execute_ee_action" and (target_pose is None or len(target_pose) != 16):
        missing.append("a target_pose of 16 numbers (left xyz, quaternion, gripper, right xyz, quaternion, gripper)")
    return missing


class LlmThinker:
    def __init__(self, client: LlmClient) -> None:
        self.client = client

    def think(
        self, subtask: Subtask, localized: dict[str, SceneObject], scene: SceneMemory, attempt: int,
        feedback: str | None, ctx: AgentContext, log: CallLog, failed: FailedStep | None = None,
        failures: Sequence[FailedAttempt] = (),
    ) -> ActionPlan:
        def check(a: ActionPlan) -> None:
            bad = [c.object for c in a.calls if c.object is not None and c.object not in localized]
            if bad:
                raise ValueError(f"objects {bad} do not exist; use only {sorted(localized)}")
            incomplete = [f"call {i} ({c.skill}) needs " + " and ".join(missing) for i, c in enumerate(a.calls)
                          if (missing := _missing_fields(c.skill, c.object, c.target_pose))]
            if incomplete:
                raise ValueError("; ".join(incomplete))
            again = repeats(a.calls, localized, failures)
            if again is not None:
                raise ValueError(f"this plan repeats a failed attempt unchanged ({again.line()}); change the arm, "
                                 "the grasp, relay, nudge the object, or answer with no calls if nothing is left")

        initial = scene.initial or scene.objects
        tall = sorted(o.id for o in localized.values() if tall_at_first(o, initial))
        lying = sorted(o.id for o in localized.values()
                       if lies_on_side(o, first_seen(o, initial)) or tipped_with_handle(o))
        user = (f"Subtask: {subtask.model_dump_json()}\nLocalised objects: {_objects_json(localized, points=True)}\n"
                f"Table top z: {ctx.table_top_z:.3f}\nStation: {_station_json(ctx)}\nAttempt: {attempt + 1}\n"
                f"Last failure: {feedback or 'none'}{_kind_note(failed)}\n"
                f"Other objects in the scene: {_objects_json([o for o in scene.objects if o.id not in localized])}\n"
                f"Remembered first scan: {_objects_json(scene.initial)}\n"
                f"Tall objects (pick up with upright_actor): {tall or 'none'}\n"
                f"Lying on their side now: {lying or 'none'}\n"
                f"Failed attempts at this subtask (never repeat one unchanged): {_failures_json(failures)}")
        plan = self.client.ask("thinker", load_prompt("thinker"), user, ActionPlan, log, check=check)
        if not plan.calls and not any(f.calls for f in failures):  # nothing was tried yet: it cannot plan this one
            raise AgentError(f"no plan: {plan.rationale or 'the model gave no calls'}")
        if not plan.calls:  # the model found no different strategy
            raise NoStrategyLeftError(f"no different strategy remains: {plan.rationale or summary(failures)}")
        return plan


class LlmReflector:
    def __init__(self, client: LlmClient) -> None:
        self.client = client

    def reflect(
        self, subtask: Subtask, report: ActorReport, before: dict[str, SceneObject], obs: Observation,
        ctx: AgentContext, log: CallLog,
    ) -> Verdict:
        after = ctx.perception.scan(obs)

        def check(v: Verdict) -> None:
            if v.verdict == "failure" and v.blamed_agent is None:
                raise ValueError("a failure must blame one agent")

        user = (f"Subtask: {subtask.model_dump_json()}\nPost-condition: {[str(p) for p in subtask.post]}\n"
                f"Actor feedback: {report.message}; commands: {[c.model_dump() for c in report.commands]}\n"
                f"Before: {_objects_json(before, points=True)}\nAfter: {_objects_json(after, points=True)}\n"
                f"Station: {_station_json(ctx)}")
        return self.client.ask("reflector", load_prompt("reflector"), user, Verdict, log, images=[obs.rgb],
                               check=check)


def _kind_note(failed: FailedStep | None) -> str:
    """" (failure kind: unreachable, in grasp_actor with the left arm)" for a failed skill call, else ""."""
    if failed is None:
        return ""
    arm = f" with the {failed.arm} arm" if failed.arm else ""
    return f" (failure kind: {failed.kind}, in {failed.skill}{arm})"
