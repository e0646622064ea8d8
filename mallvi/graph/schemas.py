"""Typed messages the agents exchange: subtasks, goal predicates, scene memory, skill calls, verdicts.

Everything here is plain pydantic data so the graph state can be checkpointed. Positions are world-frame
metres (+x robot's right, +y away from the robot, +z up).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, GetJsonSchemaHandler, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from mallvi.contracts.skills import FailureKind

AgentName = Literal["decomposer", "descriptor", "perceptor", "grounder", "projector", "thinker", "actor", "reflector"]
RETRYABLE_AGENTS: tuple[AgentName, ...] = ("perceptor", "grounder", "projector", "thinker", "actor")

Action = Literal["pick", "place", "stack", "move", "handover", "push", "release"]
PlaceRelation = Literal["on", "in", "left_of", "right_of", "next_to", "front_of", "behind", "at", "slot"]
ArmHint = Literal["left", "right", "both", "one"]
RelationName = Literal["on", "in", "left_of", "right_of", "front_of", "behind", "near", "held_by", "lifted"]
SizeWord = Literal["largest", "smallest", "medium", "large", "small"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ObjectRef(_Model):
    """A reference to an object as the instruction names it ("the red cube", "the largest block")."""

    phrase: str
    color: str | None = None
    label: str | None = None
    size: SizeWord | None = None
    among: int | None = Field(default=None, ge=1, description="a size word ranks this many objects (the "
                              "instruction's count: 'three blocks'); null: every object that matches")

    def key(self) -> str:
        """A stable id for the reference: "red_block", "largest_block", "bowl"."""
        parts = [p for p in (self.color, self.size if not self.color else None, self.label or "object") if p]
        return "_".join(parts)


#: relations about one object (``lifted(x)``); every other relation relates two (``on(x, y)``)
ONE_OBJECT_RELATIONS: tuple[str, ...] = ("lifted",)


class Predicate(_Model):
    """A checkable goal fact, e.g. on(green_block, red_block) or held_by(red_block, left)."""

    # Its JSON schema carries every bound its validation enforces (non-empty ids, and per relation exactly as many
    # ids as it takes), so schema-constrained decoding cannot write a predicate the validator rejects.

    relation: RelationName
    args: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1, max_length=2)

    @model_validator(mode="after")
    def _arity(self) -> Predicate:
        want = 1 if self.relation in ONE_OBJECT_RELATIONS else 2
        if len(self.args) != want:
            raise ValueError(f"{self.relation} takes {want} object id(s), got {len(self.args)}")
        return self

    @classmethod
    def __get_pydantic_json_schema__(cls, core: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """The generated schema split by arity (``anyOf``: the one-object relations with one id, the others with
        two), each id a non-empty string."""
        ref = handler(core)
        schema = handler.resolve_ref_schema(ref)
        relations = list(schema["properties"]["relation"]["enum"])
        ids = schema["properties"]["args"]
        variants = []
        for names, n in (([r for r in relations if r in ONE_OBJECT_RELATIONS], 1),
                         ([r for r in relations if r not in ONE_OBJECT_RELATIONS], 2)):
            if names:
                variants.append({"type": "object", "additionalProperties": False, "required": ["relation", "args"],
                                 "properties": {"relation": {"type": "string", "enum": names},
                                                "args": {**ids, "minItems": n, "maxItems": n}}})
        kept: dict[str, Any] = {k: schema[k] for k in ("title", "description") if k in schema}
        schema.clear()
        schema.update(kept, anyOf=variants)
        return ref

    def __str__(self) -> str:
        return f"{self.relation}({', '.join(self.args)})"


class MemoryTag(_Model):
    """A reference into the Descriptor's memory, e.g. the previous location of an object."""

    kind: Literal["previous_location"]
    of: str = Field(description="object key whose remembered position is meant")


class Subtask(_Model):
    """One atomic manipulation with its post-condition."""

    index: int = 0
    text: str
    action: Action
    obj: ObjectRef
    target: ObjectRef | None = None
    relation: PlaceRelation | None = None
    group: list[ObjectRef] = Field(default_factory=list, description="all objects of an arrangement, in order")
    slot: int | None = Field(default=None, description="position in the arrangement, 0 = leftmost")
    memory: list[MemoryTag] = Field(default_factory=list)
    arm_hint: ArmHint | None = None
    post: list[Predicate] = Field(default_factory=list)


class Plan(_Model):
    """The Decomposer's output: subtasks plus the instruction's goal as predicates."""

    subtasks: list[Subtask]
    goal: list[Predicate] = Field(default_factory=list)
    arm_mode: ArmHint | None = None


class SceneObject(_Model):
    """An object as perception sees it, in the world frame: the graph state's (checkpointable, prompt-ready)
    record, reduced from perception's ``PerceivedObject``; ``size_m`` is the axis-aligned extent."""

    id: str
    label: str
    color: str | None = None
    position_m: tuple[float, float, float]
    size_m: tuple[float, float, float] = (0.04, 0.04, 0.04)
    score: float = 1.0
    source: str = ""
    box_m: tuple[float, float, float] | None = Field(default=None, description="size in the object's own frame "
                                                     "(footprint rectangle x height), when perception knows it")


class SceneMemory(_Model):
    """The Descriptor's scene graph: objects and pairwise relations, plus the first scan kept as memory."""

    objects: list[SceneObject]
    relations: list[Predicate] = Field(default_factory=list)
    image_id: str | None = None
    scan_count: int = 1
    initial: list[SceneObject] = Field(default_factory=list)

    def get(self, object_id: str) -> SceneObject | None:
        return next((o for o in self.objects if o.id == object_id), None)


class Detection2D(_Model):
    """A 2D detection in pixels: box [x0, y0, x1, y1]."""

    query: str
    box_xyxy: tuple[float, float, float, float]
    score: float
    label: str = ""
    source: str = ""
    view: str = Field(default="", description="the extra camera view it was found in; empty = the main camera")


class SkillCall(_Model):
    """One SkillAPI call. ``object`` names a perceived object id; the Actor maps it to the robot's name."""

    skill: Literal[
        "grasp_actor", "upright_actor", "place_actor", "move_by_displacement", "move_to_pose", "open_gripper",
        "close_gripper", "back_to_origin",
    ]
    arm: Literal["left", "right"]
    object: str | None = None
    target_pose: list[float] | None = None
    args: dict[str, float | int | str | bool | None] = Field(default_factory=dict)


class ActionPlan(_Model):
    """The Thinker's output for one subtask."""

    calls: list[SkillCall]
    rationale: str = ""
    strategy: str = ""  # a short name for how the plan goes about it ("direct left", "relay right->left", ...)


class FailedStep(_Model):
    """The skill call an attempt failed at, and why in a form code routes on (the message is for people)."""

    model_config = ConfigDict(extra="forbid", use_enum_values=True)  # the kind is stored as its plain string

    kind: FailureKind
    skill: str
    arm: str | None = None


class CommandRecord(_Model):
    skill: str
    arm: str
    args: dict[str, Any]
    ok: bool
    message: str
    kind: FailureKind | None = None  # set when ok is False

    model_config = ConfigDict(extra="forbid", use_enum_values=True)


class ActorReport(_Model):
    ok: bool
    message: str
    commands: list[CommandRecord] = Field(default_factory=list)
    failed_stage: AgentName | None = None
    failed_step: FailedStep | None = None  # the call that failed (also a refusal before anything moved)


class Verdict(_Model):
    """The Reflector's judgement of one subtask attempt; ``failed_step`` carries the Actor's failed call, if that
    is what failed, so the Thinker can route on its kind."""

    verdict: Literal["success", "failure"]
    failure_category: str | None = None
    blamed_agent: AgentName | None = None
    explanation: str = ""
    failed_step: FailedStep | None = None


class StageError(_Model):
    """An agent before the Actor could not do its job (e.g. no detection); the Reflector routes on it."""

    agent: AgentName
    message: str
    no_strategy: bool = False  # the Thinker found no strategy that differs from the failed attempts
    lost: bool = False  # an object the subtask needs is not in the scene or not detected in any camera


class LlmCallRecord(_Model):
    node: str
    model: str
    latency_s: float
    tokens_in: int = 0
    tokens_out: int = 0
    attempts: int = 1
    ok: bool = True
    error: str | None = None
    purpose: Literal["answer", "probe"] = "answer"
    decoding: str | None = Field(default=None, description="how JSON was asked for: a schema-constrained mode or "
                                                           "'prompt'")
    max_tokens: int | None = None


class NodeRecord(_Model):
    node: str
    subtask_index: int | None
    attempt: int
    duration_s: float
    outcome: str = ""


class FailureReport(_Model):
    subtask_index: int | None
    subtask: str | None
    reason: str
    attempts: int
    history: list[Verdict] = Field(default_factory=list)
    tried: list[str] = Field(default_factory=list)  # the subtask's failed attempts: strategy, what failed, kind
