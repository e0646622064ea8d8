"""Clauses beyond pick and place: hanging an object onto a hook, turning it, lifting it (to a height, with both
arms), moving a held container slightly away, and putting something in the middle of the table.

Each parser gets the clause (normalised, arm phrases taken out) and returns the subtasks it means, or None when
the clause is not of its kind.
"""

from __future__ import annotations

import re

from mallvi.graph.agent_errors import RefusalError
from mallvi.graph.backends.rules.grammar.vocab import Ctx, find_verb, one_ref
from mallvi.graph.schemas import ObjectRef, Predicate, Subtask, TurnTo

#: "to z > 0.8 (m)", "above 0.85 m", "to a height of 0.9 m": the world z (m) a lift must clear
_HEIGHT_RE = re.compile(r"\b(?:to )?(?:z\s*>\s*|above (?:z\s*=?\s*)?|to a height of |higher than )([0-9]*\.?[0-9]+)\s*"
                        r"(?:m\b|meters?\b|metres?\b)?")
_CENTRE_RE = re.compile(r"\b(?:down )?(?:in|to|at|into) (?:the )?(?:middle|center|centre)(?: of the table)?\b|"
                        r"\bto (?:the )?(?:center|centre)\b")
_AWAY_RE = re.compile(r"\b(?:move|shift|carry|bring|lift) (.+?) (?:slightly |a little |a bit )?away\b")
_TURN_TO: list[tuple[re.Pattern[str], TurnTo]] = [
    (re.compile(r"\b(?:away from (?:you|the robot|me)|to the back|backwards?)\b"), "away"),
    (re.compile(r"\b(?:towards? (?:you|the robot|me)|to the front)\b"), "toward_robot"),
    (re.compile(r"\b(?:to(?:wards?)? the left|left ?wards?)\b"), "left"),
    (re.compile(r"\b(?:to(?:wards?)? the right|right ?wards?)\b"), "right"),
]


def lift_height(clause: str) -> tuple[str, float | None]:
    """The clause without a stated lift height, and that height (world z, metres)."""
    m = _HEIGHT_RE.search(clause)
    if m is None:
        return clause, None
    z = float(m.group(1))
    if not 0.0 < z < 3.0:
        raise RefusalError(f"a lift to z {z:g} m is out of the table's reach ({clause!r})")
    return (clause[: m.start()] + clause[m.end():]).strip(" ,"), z


def parse_hang(clause: str, ctx: Ctx) -> list[Subtask] | None:
    """ "hang it onto the rack", "hang the mug on the hook" -> hang(obj, target)."""
    v = find_verb(clause, ("hang",))
    if v is None:
        return None
    rest = clause[v.end():]
    m = re.search(r"\b(?:onto|on to|on|over|from)\b", rest)
    if m is None:
        raise RefusalError(f"cannot tell what to hang it on in {clause!r}")
    obj = one_ref(rest[: m.start()], ctx, "object to hang", clause)
    target = one_ref(re.sub(r"\b(?:the )?hook of\b", " ", rest[m.end():]), Ctx(last=obj), "hook", clause)
    ctx.last = obj
    return [Subtask(text=clause, action="hang", obj=obj, target=target, relation="on", arm_hint=ctx.arm,
                    post=[Predicate(relation="hung_on", args=[obj.key(), target.key()])])]


def parse_turn(clause: str, ctx: Ctx) -> list[Subtask] | None:
    """ "rotate the mug", "turn the mug so its handle points away from you", "rotate it and put it down in the
    middle of the table" -> turn(obj[, to the centre])."""
    v = find_verb(clause, ("rotate", "turn", "spin"))
    if v is None:
        return None
    rest = clause[v.end():]
    turn_to: TurnTo | None = next((t for pat, t in _TURN_TO if pat.search(rest)), None)
    for pat, _ in _TURN_TO:
        rest = pat.sub(" ", rest)
    rest = re.sub(r"\b(?:around|round|so (?:that )?(?:its|the) handle (?:points|faces|is)|its handle|the handle|"
                  r"by \d+ degrees?)\b", " ", rest)
    centre = _CENTRE_RE.search(rest)
    if centre:
        rest = rest[: centre.start()] + rest[centre.end():]
    obj = one_ref(rest, ctx, "object to turn", clause)
    ctx.last = obj
    return [Subtask(text=clause, action="turn", obj=obj, relation="center" if centre else None, arm_hint=ctx.arm,
                    turn_to=turn_to)]


def parse_centre(clause: str, verb_end: int, ctx: Ctx) -> list[Subtask] | None:
    """ "put the mug down in the middle of the table", "move skillet to center" -> place(obj at the centre)."""
    rest = clause[verb_end:]
    m = _CENTRE_RE.search(rest)
    if m is None:
        return None
    obj = one_ref(rest[: m.start()] + rest[m.end():], ctx, "object", clause)
    ctx.last = obj
    return [Subtask(text=clause, action="place", obj=obj, relation="center", arm_hint=ctx.arm)]


def parse_away(clause: str, ctx: Ctx) -> list[Subtask] | None:
    """ "move the basket slightly away": the held object is raised and moved off its place; it stays held."""
    m = _AWAY_RE.search(clause)
    if m is None:
        return None
    obj = one_ref(m.group(1), ctx, "object to move away", clause)
    ctx.last = obj
    return [Subtask(text=clause, action="lift", obj=obj, arm_hint=ctx.arm,
                    post=[Predicate(relation="lifted", args=[obj.key()])])]


def parse_lift(clause: str, verb_end: int, height_m: float | None, ctx: Ctx) -> list[Subtask] | None:
    """ "lift it to z > 0.8 m", "grab the roller with both arms and lift it": lift(obj), held, to ``height_m``."""
    lift_verb = re.match(r"\s*(?:lift|raise)\b", clause[max(0, verb_end - 6): verb_end + 1]) or re.search(
        r"\b(?:lift|raise)\s*$", clause[:verb_end])
    both = ctx.arm == "both" or (ctx.arm is None and ctx.mode == "both")
    if height_m is None and not (both and lift_verb):
        return None
    obj = one_ref(clause[verb_end:], ctx, "object to lift", clause)
    ctx.last = obj
    return [lift_subtask(clause, obj, height_m, ctx)]


def lift_subtask(clause: str, obj: ObjectRef, height_m: float | None, ctx: Ctx) -> Subtask:
    arm = ctx.arm or ("both" if ctx.mode == "both" else None)
    return Subtask(text=clause, action="lift", obj=obj, arm_hint=arm, height_m=height_m,
                   post=[Predicate(relation="lifted", args=[obj.key()], value_m=height_m)])
