"""Typed messages the agents exchange: subtasks, goal predicates, scene memory, skill calls, verdicts.

Everything here is plain pydantic data so the graph state can be checkpointed. Positions are world-frame
metres (+x robot's right, +y away from the robot, +z up).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, GetJsonSchemaHandler, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from mallvi.contracts.skills import FailureKind

AgentName = Literal["decomposer", "descriptor", "perceptor", "grounder", "projector", "thinker", "actor", "reflector"]
RETRYABLE_AGENTS: tuple[AgentName, ...] = ("perceptor", "grounder", "projector", "thinker", "actor")

Action = Literal["pick", "place", "stack", "move", "handover", "push", "release", "hang", "turn", "lift"]
"""What a subtask does: pick (grasp and lift), place/stack/move (put the object somewhere, ``relation`` says
where), handover (from one arm to the other in mid-air), hang (onto the target's hook), turn (rotate the object
in place or on its way to ``relation``), lift (raise the held object, with both arms where ``arm_hint`` says so,
to ``height_m``; it stays held)."""
PlaceRelation = Literal["on", "in", "left_of", "right_of", "next_to", "front_of", "behind", "at", "slot", "center"]
"""Where a placement goes: relative to ``target`` (on, in, beside ...), "at" a remembered location, a "slot" of
an arrangement, or the "center" of the workspace in front of the robot."""
ArmHint = Literal["left", "right", "both", "one", "other"]
"""An arm the instruction names: "one" arm (either), the "other" arm (not the one the previous subtask used)."""
RelationName = Literal["on", "in", "left_of", "right_of", "front_of", "behind", "near", "held_by", "lifted", "hung_on"]
SizeWord = Literal["largest", "smallest", "medium", "large", "small"]
Layout = Literal["row", "cross"]
"""An arrangement's shape: a row (slot 0 leftmost) or a cross (slots: centre, left, right, far, near)."""
TurnTo = Literal["away", "toward_robot", "left", "right", "for_hook"]
"""Where a turned object's handle points: away from the robot, towards it, to the robot's left or right, or
across the hook of a later hang (its opening along the hook's rod)."""
CROSS_SLOTS = ("center", "left", "right", "far", "near")
#: skills that may close or open a hand
GRIPPER_SKILLS = ("grasp_actor", "upright_actor", "place_actor", "open_gripper", "close_gripper", "execute_ee_action")
HOLDING_SKILLS = ("grasp_actor", "upright_actor", "close_gripper")  # with an object: the hand holds it after the call
LETTING_GO_SKILLS = ("place_actor", "open_gripper")  # the hand is empty after the call


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
    rank: int | None = Field(default=None, ge=1, description="the rank-th largest of the objects ranked (1 = the "
                             "largest); instead of a size word, for groups of more than three")
    every: bool = Field(default=False, description="every object the phrase matches ('the bottles', 'cans')")
    count: int | None = Field(default=None, ge=1, description="how many such objects the instruction says there "
                              "are ('if there is one bread', 'the three bowls'); the plan is refused otherwise")
    instance: str | None = Field(default=None, description="the scene object this reference was bound to (for a "
                                 "plural, the member it was expanded to)")

    def key(self) -> str:
        """A stable id for the reference: "red_block", "largest_block", "bowl", "rank2_block", "bowl@bowl_2"."""
        rank = f"rank{self.rank}" if self.rank and not self.color else None
        parts = [p for p in (self.color, self.size if not self.color else None, rank, self.label or "object") if p]
        key = "_".join(parts)
        if self.every:  # a group, or one member of it (by the scene object it was expanded to)
            return f"{key}@{self.instance}" if self.instance else f"every_{key}"
        return key


#: relations about one object (``lifted(x)``); every other relation relates two (``on(x, y)``)
ONE_OBJECT_RELATIONS: tuple[str, ...] = ("lifted",)


class Predicate(_Model):
    """A checkable goal fact, e.g. on(green_block, red_block), held_by(red_block, left), lifted(roller, 0.8)
    (its bottom above world z 0.8 m; without a value, clear of the table) or hung_on(mug, rack)."""

    # Its JSON schema carries every bound its validation enforces (non-empty ids, and per relation exactly as many
    # ids as it takes), so schema-constrained decoding cannot write a predicate the validator rejects.

    relation: RelationName
    args: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1, max_length=2)
    value_m: float | None = Field(default=None, description="lifted: the world z (m) the object's bottom must "
                                  "be above")

    @model_validator(mode="after")
    def _arity(self) -> Predicate:
        want = 1 if self.relation in ONE_OBJECT_RELATIONS else 2
        if len(self.args) != want:
            raise ValueError(f"{self.relation} takes {want} object id(s), got {len(self.args)}")
        if self.value_m is not None and self.relation not in ONE_OBJECT_RELATIONS:
            raise ValueError(f"only lifted takes a height, not {self.relation}")
        return self

    @classmethod
    def __get_pydantic_json_schema__(cls, core: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """The generated schema split by arity (``anyOf``: the one-object relations with one id, the others with
        two), each id a non-empty string."""
        ref = handler(core)
        schema = handler.resolve_ref_schema(ref)
        relations = list(schema["properties"]["relation"]["enum"])
        ids = schema["properties"]["args"]
        height = schema["properties"]["value_m"]
        variants = []
        for names, n in (([r for r in relations if r in ONE_OBJECT_RELATIONS], 1),
                         ([r for r in relations if r not in ONE_OBJECT_RELATIONS], 2)):
            if names:
                props = {"relation": {"type": "string", "enum": names}, "args": {**ids, "minItems": n, "maxItems": n}}
                if n == 1:  # only a one-object relation (lifted) takes a height
                    props["value_m"] = height
                variants.append({"type": "object", "additionalProperties": False, "required": ["relation", "args"],
                                 "properties": props})
        kept: dict[str, Any] = {k: schema[k] for k in ("title", "description") if k in schema}
        schema.clear()
        schema.update(kept, anyOf=variants)
        return ref

    def __str__(self) -> str:
        value = f", {self.value_m:g}" if self.value_m is not None else ""
        return f"{self.relation}({', '.join(self.args)}{value})"


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
    slot: int | None = Field(default=None, description="position in the arrangement, 0 = leftmost (a cross: "
                             "0 centre, 1 left, 2 right, 3 far, 4 near)")
    layout: Layout = "row"
    memory: list[MemoryTag] = Field(default_factory=list)
    arm_hint: ArmHint | None = None
    height_m: float | None = Field(default=None, description="lift: the world z (m) to raise the object's bottom "
                                   "above")
    turn_to: TurnTo | None = Field(default=None, description="turn: where the object's handle is to point")
    hold: bool = Field(default=False, description="keep holding the object once it is there (a container "
                       "that is to receive something)")
    post: list[Predicate] = Field(default_factory=list)


class Plan(_Model):
    """The Decomposer's output: subtasks plus the instruction's goal as predicates."""

    subtasks: list[Subtask]
    goal: list[Predicate] = Field(default_factory=list)
    arm_mode: ArmHint | None = None


PointPose = tuple[float, float, float, float, float, float, float]
"""A named point in the world frame: ``[x, y, z, qw, qx, qy, qz]`` (metres; quaternion w first)."""


class SceneObject(_Model):
    """An object as perception sees it, in the world frame: the graph state's (checkpointable, prompt-ready)
    record, reduced from perception's ``PerceivedObject``; ``size_m`` is the axis-aligned extent.

    ``points`` are what acting on it needs: grasp frames "cp0".."cpN" (x = approach direction, y = finger
    opening; the skills take N as ``contact_point_id``), functional points "fp0" (bottom centre) and "fp1" (top
    centre), its parts ("handle", "rim", "neck", "head", "hook", "hook_tip", "drop", "drop_left", ...) and its
    frame ("origin": bottom centre, z = the object's up axis). ``points_source`` says where they come from: the
    object model (simulator perception, privileged) or the perceived geometry (top, bottom, a container's
    opening only).
    """

    id: str
    label: str
    color: str | None = None
    position_m: tuple[float, float, float]
    size_m: tuple[float, float, float] = (0.04, 0.04, 0.04)
    score: float = 1.0
    source: str = ""
    box_m: tuple[float, float, float] | None = Field(default=None, description="size in the object's own frame "
                                                     "(footprint rectangle x height), when perception knows it")
    box_yaw_rad: float | None = Field(default=None, description="heading (rad, about the vertical) of box_m's x "
                                      "axis in the world; without it, box_m is in the frame of the 'origin' point")
    points: dict[str, PointPose] = Field(default_factory=dict)
    points_source: str = ""

    def point(self, name: str) -> PointPose | None:
        """The named point, or None when perception does not know it."""
        return self.points.get(name)

    def grasp_ids(self) -> list[int]:
        """The indices N of the grasp frames "cpN" perception knows, in order."""
        return sorted(int(k[2:]) for k in self.points if k.startswith("cp") and k[2:].isdigit())


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


class CallVariant(_Model):
    """Another target and/or other arguments for a call, tried when the call's motion cannot be planned."""

    target_pose: list[float] | None = None
    args: dict[str, float | int | str | bool | None] = Field(default_factory=dict)


class SkillCall(_Model):
    """One SkillAPI call. ``object`` names a perceived object id; the Actor maps it to the robot's name.

    ``alternatives`` are tried in turn, each replacing the target and updating the arguments, when the call fails
    because its motion cannot be planned (no IK solution, no path, refused by the guard): nothing has moved then.
    ``execute_ee_action`` moves both arms at once: ``target_pose`` holds its 16 numbers (left xyz, quaternion
    wxyz, gripper, then the right arm's); ``arm`` names the arm that acts on ``object``.
    """

    skill: Literal[
        "grasp_actor", "upright_actor", "place_actor", "move_by_displacement", "move_to_pose", "open_gripper",
        "close_gripper", "back_to_origin", "execute_ee_action",
    ]
    arm: Literal["left", "right"]
    object: str | None = None
    target_pose: list[float] | None = None
    args: dict[str, float | int | str | bool | None] = Field(default_factory=dict)
    alternatives: list[CallVariant] = Field(default_factory=list)

    def variant(self, v: CallVariant) -> SkillCall:
        """This call with ``v``'s target and arguments."""
        return self.model_copy(update={"target_pose": v.target_pose if v.target_pose is not None else self.target_pose,
                                       "args": {**self.args, **v.args}, "alternatives": []})


class ActionPlan(_Model):
    """The Thinker's output for one subtask.

    ``fallbacks`` are whole other call sequences for the same subtask (another grasp, another approach), tried in
    turn when a call fails because its motion cannot be planned before anything was taken in a gripper: the arms
    have moved only through the air then.
    """

    calls: list[SkillCall]
    fallbacks: list[list[SkillCall]] = Field(default_factory=list)
    rationale: str = ""
    strategy: str = ""  # a short name for how the plan goes about it ("direct left", "relay right->left", ...)
    #: end-effector plans: where the object's bottom centre (its "fp0") is let go, [x, y, z] in the world frame
    #: (m); the Reflector holds the object to it as to a place_actor target. None: no such point
    aim_m: list[float] | None = Field(default=None, min_length=3, max_length=3)
    #: the plan only sets the object down where another arm takes it (a relay); the subtask is planned again
    #: from there and is never done by this plan
    relay: bool = False


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
    ref: str | None = None  # the plan's id of the call's object (``args["object"]`` is the robot's name for it)

    model_config = ConfigDict(extra="forbid", use_enum_values=True)


class ActorReport(_Model):
    ok: bool
    message: str
    commands: list[CommandRecord] = Field(default_factory=list)
    failed_stage: AgentName | None = None
    failed_step: FailedStep | None = None  # the call that failed (also a refusal before anything moved)
    #: per arm, before the plan's first motion: its end-effector pose [x, y, z, qw, qx, qy, qz] (world frame, m)
    #: and its gripper opening (0 closed .. 1 open), as one arm's half of an end-effector action; what a hand
    #: carried in from an earlier attempt was where it sat in that hand
    start_arms: dict[str, list[float]] = Field(default_factory=dict)
    aim_m: list[float] | None = None  # the plan's ``ActionPlan.aim_m``
    relay: bool = False  # the plan's ``ActionPlan.relay``

    def put_at(self) -> tuple[float, float, float] | None:
        """Where the attempt put its object: the plan's aim (end-effector plans), else its last place_actor
        target that succeeded; None when it put nothing down at a known point."""
        if self.aim_m is not None:
            return (self.aim_m[0], self.aim_m[1], self.aim_m[2])
        for c in reversed(self.commands):
            pose = c.args.get("target_pose")
            if c.skill == "place_actor" and c.ok and isinstance(pose, list) and len(pose) >= 3:
                return (float(pose[0]), float(pose[1]), float(pose[2]))
        return None

    def left_in_hand(self, before: Mapping[str, str] | None = None) -> dict[str, str]:
        """The objects in a hand after this attempt, plan id -> arm: those ``before`` it (the graph's record) and
        those it took hold of (a grasp, a standing up, or a closing on it, that succeeded), less those whose arm put
        them down or opened its hand since (a place whose motion had no plan keeps it; the gripper's own sensing
        says whether it is still there)."""
        held: dict[str, str] = dict(before or {})
        for c in self.commands:
            if not c.ok or c.arm not in ("left", "right"):
                continue
            if c.skill in HOLDING_SKILLS and c.ref is not None:
                held = {o: a for o, a in held.items() if a != c.arm and o != c.ref}
                held[c.ref] = c.arm
            elif c.skill in LETTING_GO_SKILLS:
                held = {o: a for o, a in held.items() if a != c.arm}
        return held

    def only_retreat_failed(self) -> bool:
        """Whether the call that failed is only an arm's way back from work it finished: its way home
        (``back_to_origin``), or its rise after its fingers let go (an upward ``move_by_displacement`` of an arm
        whose last gripper action before it opened the hand). The Actor stops at the first call none of whose ways
        worked, so every call before it did its work, and the scene may show the subtask done."""
        ran = [c for c in self.commands if not c.args.get("recovery")]
        if self.ok or not ran or ran[-1].ok or self.failed_step is None or self.failed_step.skill != ran[-1].skill:
            return False
        last = ran[-1]
        if last.skill == "back_to_origin":
            return True
        if last.skill != "move_by_displacement" or float(last.args.get("z") or 0.0) <= 0.0:
            return False
        for c in reversed(ran[:-1]):
            if c.arm != last.arm or c.skill not in GRIPPER_SKILLS:
                continue
            return c.ok and (c.skill == "open_gripper" or (c.skill == "place_actor" and c.args.get("is_open", True)
                                                           is not False))
        return False


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
