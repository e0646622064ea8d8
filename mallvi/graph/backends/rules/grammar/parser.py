"""An instruction grammar for common manipulation language -> typed subtasks and goal predicates.

It understands pick/grab/grasp/take/lift; put/place/move/set X on/onto/in/into/on top of/next to/left of/right
of/in front of/behind/under Y (also with the clauses reordered: "onto the red block, put the green one");
stack A on B (on C); arrange/rank/sort/order/line up by colour or size, left to right or right to left, or by
position ("red leftmost, green in the middle", "blue on the left, then green"); towers by size or by position
("red at the bottom, then green, then blue on top"); hand over/pass from one arm to the other; "use the
left/right/one/both arms", for the whole instruction, one clause, or one object; "cube"/"block"/"box" as synonyms;
"it" and "the blue one" as references back. Clauses are separated by "then", ";", "." or "and" followed by a verb;
a clause without a verb shares the one before it ("green on red, then blue on green").

What it cannot use in full it refuses, saying what it did not understand: a word in an object phrase that names no
object, a colour that no subtask uses, a negation, an alternative, a condition, an object named by its position.
"""

from __future__ import annotations

import re
from itertools import pairwise

from mallvi.graph.agent_errors import RefusalError
from mallvi.graph.backends.rules.grammar.checks import (
    check_all_named_used,
    check_excluded,
    check_physical,
    check_positional_refs,
)
from mallvi.graph.backends.rules.grammar.clauses import CONJUNCT, normalise, split_clauses
from mallvi.graph.backends.rules.grammar.collective import group_refs, stated_counts, with_counts
from mallvi.graph.backends.rules.grammar.cross import cross_order, cross_subtasks
from mallvi.graph.backends.rules.grammar.manipulations import (
    lift_height,
    parse_away,
    parse_centre,
    parse_hang,
    parse_lift,
    parse_turn,
)
from mallvi.graph.backends.rules.grammar.orders import positional_order
from mallvi.graph.backends.rules.grammar.phrasing import refuse_unsupported
from mallvi.graph.backends.rules.grammar.steps import base_to_centre, merge_steps
from mallvi.graph.backends.rules.grammar.vocab import (
    ARRANGE_VERBS,
    COLOURS,
    HANDOVER_VERBS,
    PICK_VERBS,
    PLACE_VERBS,
    REL_MAP,
    RELATION_RE,
    SIZE_WORDS,
    STACK_VERBS,
    Ctx,
    find_verb,
    noun_phrases,
    one_ref,
)
from mallvi.graph.plan_checks import check_consistency, final_goal, supports_first
from mallvi.graph.refs import refs_of
from mallvi.graph.schemas import Action, ArmHint, ObjectRef, PlaceRelation, Plan, Predicate, SizeWord, Subtask

_ARM_RE = re.compile(
    r"\b(?:using|with|use|by)\s+(?:only\s+)?(?:the\s+|your\s+|its\s+)?(left|right|one|both|two|either|dual|other)?\s*"
    r"(?:arm|arms|hand|hands|gripper|grippers)\b(?:\s+only\b)?(?:\s+to\b)?"
)


_PREV_RE = re.compile(r"\b(?:back\s+)?(?:to\s+|at\s+)?(?:the\s+)?(?:previous|original|initial|old)\s+"
                      r"(?:location|position|place|spot)\s+of\s+(.+)$|\b(?:back\s+)?(?:to\s+)?where\s+(.+?)\s+was\b")


def _place(ctx: Ctx, clause: str, obj: ObjectRef, rel_word: str, target_text: str, action: str,
           before: ObjectRef | None = None) -> list[Subtask]:
    rel = REL_MAP[rel_word]
    target = one_ref(target_text, Ctx(last=before or obj), "target", clause)
    if rel == "under":  # "put A under B": B ends up on A
        return [_place_subtask(clause, target, "on", obj, ctx.arm, "place")]
    return [_place_subtask(clause, obj, rel, target, ctx.arm, action)]


def _place_subtask(text: str, obj: ObjectRef, rel: str, target: ObjectRef, arm: ArmHint | None,
                   action: str) -> Subtask:
    relation: PlaceRelation = rel  # type: ignore[assignment]
    post: list[Predicate] = []
    if rel in ("on", "in", "left_of", "right_of", "front_of", "behind"):
        post.append(Predicate(relation=rel, args=[obj.key(), target.key()]))  # type: ignore[arg-type]
    elif rel == "next_to":
        post.append(Predicate(relation="near", args=[obj.key(), target.key()]))
    act: Action = "stack" if action == "stack" else "place"
    return Subtask(text=text, action=act, obj=obj, target=target, relation=relation, arm_hint=arm, post=post)


def _parse_memory_place(clause: str, obj_text: str, mem_m: re.Match[str], ctx: Ctx) -> Subtask:
    obj = one_ref(obj_text, ctx, "object", clause)
    of_text = (mem_m.group(1) or mem_m.group(2) or "").strip()
    of_ref = obj if of_text in ("it", "its") else one_ref(of_text, Ctx(last=obj), "remembered object", clause)
    from mallvi.graph.schemas import MemoryTag

    return Subtask(text=clause, action="move", obj=obj, relation="at", arm_hint=ctx.arm,
                   memory=[MemoryTag(kind="previous_location", of=of_ref.key())], target=of_ref)


_SIZE_DIRECTION = (r"\b(?:larg|big)\w* (?:one )?to (?:the )?(?:small|tin)", r"\b(?:small|tin)\w* (?:one )?to (?:the )?"
                   r"(?:larg|big)")


def _refuse_two_directions(clause: str) -> None:
    """ "from largest to smallest and from smallest to largest", "left to right ... right to left"."""
    for a, b in (_SIZE_DIRECTION, (r"\bleft to (?:the )?right\b", r"\bright to (?:the )?left\b")):
        if re.search(a, clause) and re.search(b, clause):
            raise RefusalError(f"contradictory order: both directions are asked for in {clause!r}")


def _parse_arrange(clause: str, ctx: Ctx) -> list[Subtask]:
    _refuse_two_directions(clause)
    rtl = bool(re.search(r"\bright to (?:the )?left\b", clause))
    body = re.sub(r"\bfrom (?:the )?(?:left|right) to (?:the )?(?:left|right)\b", " ", clause)
    by_size = bool(re.search(r"\bsize|\blarg|\bbig|\bsmall|\btiniest\b", body))
    ordered = re.search(r"\bordered as\b(.*)$", body)
    refs = [r for r in noun_phrases(ordered.group(1) if ordered else body, ctx) if r.color]
    if ordered and refs and refs[0].label is None:
        label = next((r.label for r in noun_phrases(body[: ordered.start()], ctx) if r.label), "block")
        refs = [r.model_copy(update={"label": label, "phrase": f"the {r.color} {label}"}) for r in refs]
    if (ordered and len({r.key() for r in refs}) < len(refs)) or re.search(r"\b(\w+),? \1\b", body):
        raise RefusalError(f"impossible: an object is named twice in the arrangement {clause!r}")
    seen: set[str] = set()
    refs = [r for r in refs if not (r.key() in seen or seen.add(r.key()))]  # type: ignore[func-returns-value]
    if by_size and not refs:
        small_first = bool(re.search(r"\b(?:small|tin|little)\w*\s+(?:to|first)|\b(?:larg|big)\w* (?:block |one |"
                                     r"cube )?(?:is )?(?:on|at|to) the (?:far )?right|\b(?:small|tin)\w* (?:block |"
                                     r"one |cube )?(?:is )?(?:on|at|to) the (?:far )?left", body))
        order: list[SizeWord] = ["smallest", "medium", "largest"] if small_first else ["largest", "medium", "smallest"]
        refs = [ObjectRef(phrase=f"the {s} block", size=s, label="block") for s in order]
    elif not refs and re.search(r"\bcolou?r|\brgb\b", body):
        refs = [ObjectRef(phrase=f"the {c} block", color=c, label="block") for c in ("red", "green", "blue")]
    if len(refs) < 2:
        raise RefusalError(f"an arrangement needs at least two named objects: {clause!r}")
    return slot_subtasks(clause, list(reversed(refs)) if rtl else refs, ctx.arm)


def slot_subtasks(clause: str, refs: list[ObjectRef], arm: ArmHint | None) -> list[Subtask]:
    """A row, leftmost first: one slot subtask per object, each right of the one before."""
    subtasks: list[Subtask] = []
    for i, r in enumerate(refs):
        post = [Predicate(relation="left_of", args=[refs[i - 1].key(), r.key()])] if i else []
        subtasks.append(Subtask(text=f"{clause} [slot {i}: {r.phrase}]", action="move", obj=r, relation="slot",
                                group=refs, slot=i, arm_hint=arm, post=post))
    return subtasks


def _parse_tower(clause: str, ctx: Ctx) -> list[Subtask]:
    refs = [r for r in noun_phrases(clause, ctx) if r.color]
    if len(refs) == 1 or (not refs and not any(w in SIZE_WORDS or w == "size" for w in re.findall(r"[a-z]+", clause))):
        raise RefusalError(f"cannot tell the order of the tower in {clause!r}: name the blocks from bottom to top, or "
                           "say 'from largest to smallest'")
    if len(refs) < 2:
        small_base = bool(re.search(r"\bsmallest\b.*\bfirst\b.*\blargest\b|\b(?:small|tin)\w*\s+(?:\w+ )?(?:at|on) "
                                    r"the bottom\b|\b(?:larg|big)\w*\s+(?:\w+ )?(?:at|on) (?:the )?top\b|"
                                    + _SIZE_DIRECTION[1], clause))
        if re.search(r"\btop to (?:the )?bottom\b", clause):
            small_base = not small_base
        n = ctx.count or 3
        if n > 3:  # "four blocks ... from largest to smallest": ranks instead of three size words
            ranks = list(range(n, 0, -1)) if small_base else list(range(1, n + 1))
            refs = [ObjectRef(phrase=f"the block ranked {k} by size", rank=k, label="block") for k in ranks]
        else:
            sizes: list[SizeWord] = (["smallest", "medium", "largest"] if small_base
                                     else ["largest", "medium", "smallest"])
            refs = [ObjectRef(phrase=f"the {s} block", size=s, label="block") for s in sizes]
    return [_place_subtask(clause, upper, "on", lower, ctx.arm, "stack") for lower, upper in pairwise(refs)]


def _parse_handover(clause: str, verb_end: int, ctx: Ctx) -> Subtask:
    rest = clause[verb_end:]
    m = re.search(r"\bfrom (?:the )?(left|right)\b", rest)
    giver = m.group(1) if m else None
    m2 = re.search(r"\bto (?:the )?(left|right)\b", rest)
    receiver = m2.group(1) if m2 else None
    if giver is None and receiver is not None:
        giver = "left" if receiver == "right" else "right"
    if giver is None and re.search(r"\bback\b", rest) and ctx.arm in ("left", "right"):
        giver = ctx.arm  # "hand it back": from the arm that holds it
    if giver is not None and receiver is None:
        receiver = "left" if giver == "right" else "right"
    if giver is not None and giver == receiver:
        raise RefusalError(f"a handover needs two different arms: {clause!r}")
    obj_text = re.split(r"\b(?:from|to|between|over to)\b", rest)[0]
    obj = one_ref(obj_text, ctx, "object to hand over", clause)
    arm: ArmHint | None = giver if giver in ("left", "right") else None  # type: ignore[assignment]
    post = [Predicate(relation="held_by", args=[obj.key(), receiver])] if receiver else []
    return Subtask(text=clause, action="handover", obj=obj, arm_hint=arm, post=post)


def _parse_clause(clause: str, ctx: Ctx) -> list[Subtask]:
    clause, height_m = lift_height(clause)
    for special in (parse_hang, parse_turn, parse_away):
        made = special(clause, ctx)
        if made is not None:
            return made
    if re.search(r"\b(?:build|make|create)\b.*\b(?:tower|stack|pile)\b|\btower\b", clause) or (
            find_verb(clause, STACK_VERBS) and any(re.search(d, clause) for d in _SIZE_DIRECTION)):
        _refuse_two_directions(clause)
        return _parse_tower(clause, ctx)
    clause = re.sub(r"\bon (?:the )?top(?: of (?:the )?(?:stack|tower|pile))?$", "on it", clause)
    if re.search(r"\bhand(?:\s|-)?over\b|\bhand off\b|\bpass\b|\bgive\b|\bfrom (?:the )?(?:left|right|one) "
                 r"(?:arm|hand|gripper) to\b|\b(?:hand|transfer|move)\b.*\bto (?:the )?(?:left|right|other) "
                 r"(?:arm|hand|gripper)\b|\b(?:hand|pass|give) (?:it|them|the \w+ \w+) back\b|^(?:hand|pass|give|"
                 r"transfer)\b.*\bfrom (?:the )?(?:left|right)\b.*\bto (?:the )?(?:left|right)\b", clause):
        v = find_verb(clause, HANDOVER_VERBS)
        return [_parse_handover(clause, v.end() if v else 0, ctx)]
    if find_verb(clause, ARRANGE_VERBS) or re.search(r"\bfrom (?:the )?(?:left|right) to (?:the )?(?:left|right)",
                                                       clause):
        return _parse_arrange(clause, ctx)
    stack_v = find_verb(clause, STACK_VERBS)
    place_v = find_verb(clause, PLACE_VERBS)
    pick_v = find_verb(clause, PICK_VERBS)
    verb = stack_v or place_v or pick_v
    if verb is None:
        raise RefusalError(f"no manipulation verb understood in {clause!r}")
    if pick_v and not (stack_v or place_v):
        lifted = parse_lift(clause, pick_v.end(), height_m, ctx)
        if lifted is not None:
            return lifted
    if place_v and not stack_v:
        centred = parse_centre(clause, place_v.end(), ctx)
        if centred is not None:
            return centred
    grouped = _parse_group(clause, ctx, stack_v, place_v, pick_v)
    if grouped is not None:
        return grouped
    rels = list(RELATION_RE.finditer(clause))
    mem = _PREV_RE.search(clause, verb.end())
    if mem and (stack_v or place_v):
        return [_parse_memory_place(clause, clause[verb.end():mem.start()], mem, ctx)]
    if stack_v and len(rels) >= 2 and all(REL_MAP[r.group(1)] == "on" for r in rels):
        # stack A on B on C: B onto C first, then A onto B
        bounds = [verb.end()] + [r.start() for r in rels] + [len(clause)]
        chain = [one_ref(clause[bounds[i] + (len(rels[i - 1].group(1)) if i else 0):bounds[i + 1]], ctx,
                          "object", clause) for i in range(len(bounds) - 1)]
        return [_place_subtask(clause, up, "on", low, ctx.arm, "stack") for up, low in reversed(list(pairwise(chain)))]
    if rels and (stack_v or place_v or (pick_v and rels[0].start() > pick_v.end())):
        r = next((x for x in rels if x.start() > verb.end()), None)
        if r is not None:
            before = ctx.last
            obj = one_ref(clause[verb.end():r.start()], ctx, "object", clause)
            ctx.last = obj
            return _place(ctx, clause, obj, r.group(1), clause[r.end():], "stack" if stack_v else "place", before)
        r = rels[0]  # reordered: "onto the red block, put the green one"
        target = one_ref(clause[r.end():verb.start()], ctx, "target", clause)
        obj = one_ref(clause[verb.end():], Ctx(last=target), "object", clause)
        return _place(ctx, clause, obj, r.group(1), clause[r.end():verb.start()], "stack" if stack_v else "place")
    if pick_v and not (stack_v or place_v):
        obj = one_ref(clause[pick_v.end():], ctx, "object", clause)
        ctx.last = obj
        return [Subtask(text=clause, action="pick", obj=obj, arm_hint=ctx.arm,
                        post=[Predicate(relation="lifted", args=[obj.key()])])]
    if stack_v:
        refs = noun_phrases(clause[stack_v.end():], ctx)
        if len(refs) >= 2:  # "stack the red, green and blue blocks": first named ends on top
            return [_place_subtask(clause, up, "on", low, ctx.arm, "stack")
                    for up, low in reversed(list(pairwise(refs)))]
    raise RefusalError(f"cannot tell where to put the object in {clause!r}")


def _parse_group(clause: str, ctx: Ctx, stack_v: re.Match[str] | None, place_v: re.Match[str] | None,
                 pick_v: re.Match[str] | None) -> list[Subtask] | None:
    """Clauses about a group: "pick the hamburg and frenchfries", "put them onto the tray", "put the bottles into
    the dustbin", "stack the blocks", "stack the three bowls on top of each other"; None for one object."""
    verb = stack_v or place_v or pick_v
    assert verb is not None
    rel = next((r for r in RELATION_RE.finditer(clause) if r.start() > verb.end()), None)
    each_other = re.search(r"\b(?:on top of|onto|on) each other\b", clause)
    stop = each_other or rel
    obj_text = clause[verb.end(): stop.start() if stop is not None else len(clause)]
    refs = group_refs(obj_text, ctx)
    if refs is None:
        return None
    refs = [with_counts(r, ctx.counts) for r in refs]
    ctx.group = refs
    ctx.last = refs[-1]
    if stack_v and (each_other or rel is None):  # "stack the blocks": one on the other, in an order the scene gives
        if not any(r.every for r in refs) and len(refs) < 2:
            raise RefusalError(f"stacking needs at least two objects: {clause!r}")
        if len(refs) == 1:
            return [Subtask(text=clause, action="stack", obj=refs[0], relation="on", arm_hint=ctx.arm)]
        return [_place_subtask(clause, up, "on", low, ctx.arm, "stack") for low, up in pairwise(refs)]
    if rel is None:
        if pick_v and not (stack_v or place_v):
            return [Subtask(text=clause, action="pick", obj=r, arm_hint=ctx.arm,
                            post=[Predicate(relation="lifted", args=[r.key()])]) for r in refs]
        raise RefusalError(f"cannot tell where to put the objects in {clause!r}")
    target = one_ref(clause[rel.end():], Ctx(), "target", clause)
    target = with_counts(target, ctx.counts)
    action = "stack" if stack_v else "place"
    return [_place_subtask(clause, r, REL_MAP[rel.group(1)], target, ctx.arm, action) for r in refs]


_ARM_WORDS: dict[str, ArmHint] = {"left": "left", "right": "right", "both": "both", "two": "both", "dual": "both",
                                  "other": "other", "one": "one"}


_LOCAL_ARM = re.compile(r"\barm(left|right|one|other|both)\b")


def _arm_clause(text: str) -> tuple[str, ArmHint | None]:
    """Take out the arm phrases. One at the start ("using the left arm, ...", "use the left arm to ...") or after
    a final comma ("..., with the right arm") holds for the whole instruction; others hold for their own clause
    and are left in the text as a marker ("armleft") for it."""
    ms = list(_ARM_RE.finditer(text))
    if not ms:
        return text, None
    whole = [m for m in ms if re.fullmatch(r"(?:\w+ly,?\s*)?", text[: m.start()])
             or (text[: m.start()].rstrip().endswith(",") and not text[m.end():].strip(" .,;"))]
    arm: ArmHint | None = None
    for m in reversed(ms):
        hint = _ARM_WORDS.get(m.group(1) or "both", "one")
        if m in whole or (len(ms) == 1 and hint not in ("left", "right", "other")):
            arm = hint
            marker = " "
        else:
            marker = f" arm{hint} "
        text = text[: m.start()] + marker + text[m.end():]
    return re.sub(r"\s+", " ", text).strip(" ,"), arm


_ARM_FOR_RE = re.compile(r",?\s*(?:using|with) (?:the |your )?(left|right) (?:arm|hand|gripper) for ([a-z ]+?)"
                         r"(?: and (?:the |your )?(left|right) (?:arm|hand|gripper) for ([a-z ]+?))?\s*$")


def _arms_per_object(text: str) -> tuple[str, list[tuple[ObjectRef, ArmHint]]]:
    """ "..., using the left arm for the green one and the right arm for the blue one" -> object key -> arm."""
    m = _ARM_FOR_RE.search(text)
    if not m:
        return text, []
    out: list[tuple[ObjectRef, ArmHint]] = []
    for arm_word, phrase in ((m.group(1), m.group(2)), (m.group(3), m.group(4))):
        if arm_word:
            ref = one_ref(phrase, Ctx(), "object of the " + arm_word + " arm", text)
            out.append((ref, arm_word))  # type: ignore[arg-type]
    return text[: m.start()], out


def _parse_all(text: str, ctx: Ctx) -> tuple[list[Subtask], list[Predicate]]:
    subtasks: list[Subtask] = []
    extra_goal: list[Predicate] = []
    for raw in split_clauses(text):
        clause = raw.lstrip(CONJUNCT)
        local = _LOCAL_ARM.search(clause)
        if local:  # "use the right arm to pick the mug and hang it": the arm holds on until another is named
            clause = re.sub(r"\s+", " ", _LOCAL_ARM.sub(" ", clause)).strip(" ,")
            ctx.arm = local.group(1)  # type: ignore[assignment]
        new = _parse_clause(clause, ctx)
        check_all_named_used(clause, new, COLOURS, SIZE_WORDS)
        check_positional_refs(clause, new)
        if raw.startswith(CONJUNCT) and subtasks:
            extra_goal.extend(subtasks[-1].post)
        subtasks.extend(new)
        if new:
            ctx.last = new[-1].obj
            receiver = next((p.args[1] for p in new[-1].post if p.relation == "held_by"), None)
            if new[-1].action == "handover" and receiver in ("left", "right"):
                ctx.arm = receiver  # type: ignore[assignment]  # the receiving arm carries on
    return subtasks, extra_goal


def _ordered(kind: str, refs: list[ObjectRef], text: str, arm: ArmHint | None) -> list[Subtask]:
    if kind == "tower":
        return [_place_subtask(text, upper, "on", lower, arm, "stack") for lower, upper in pairwise(refs)]
    return slot_subtasks(text, refs, arm)


_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_COUNT_RE = re.compile(r"\b(" + "|".join(_NUMBERS) + r"|\d+) (?:[a-z]+ )?(?:blocks|cubes|boxes|bricks)\b")


def stated_count(instruction: str) -> int | None:
    """How many blocks the instruction says there are ("there are three blocks on the table"), or None."""
    counts = {int(m.group(1)) if m.group(1).isdigit() else _NUMBERS[m.group(1)]
              for m in _COUNT_RE.finditer(instruction.lower())}
    return counts.pop() if len(counts) == 1 else None


def _rank_among(subtasks: list[Subtask], instruction: str) -> list[Subtask]:
    """Size words (without a colour) rank among the instruction's stated number of blocks; "medium" with no number
    stated ranks among three."""
    sized = {r.key(): r for s in subtasks for r in refs_of(s) if r.size and not r.color}
    if not sized:
        return subtasks
    n = stated_count(instruction)
    if n is None and any(r.size == "medium" for r in sized.values()):
        n = 3
    if n is None:
        return subtasks
    if n < len(sized):
        raise RefusalError(f"the instruction speaks of {n} blocks but ranks {len(sized)} by size ({instruction!r})")
    if n > 3 and any(r.size == "medium" for r in sized.values()):
        raise RefusalError(f"cannot tell which of {n} blocks is the medium one: name each block's place by its rank "
                           f"or colour ({instruction!r})")

    def among(r: ObjectRef) -> ObjectRef:
        return r.model_copy(update={"among": n}) if r.size and not r.color else r

    return [s.model_copy(update={"obj": among(s.obj), "target": among(s.target) if s.target else None,
                                 "group": [among(r) for r in s.group]}) for s in subtasks]


def parse_instruction(instruction: str) -> Plan:
    """Turn an instruction into a plan; raises RefusalError with a readable reason when it cannot."""
    at_centre = bool(_AT_CENTRE_RE.search(instruction.lower()))
    lowered, counts = stated_counts(re.sub(r"[()]", " ", instruction.lower()))
    text = normalise(lowered)
    if not text:
        raise RefusalError("the instruction is empty")
    text, excluded = refuse_unsupported(text)
    text, arm_for = _arms_per_object(text)
    text, arm = _arm_clause(text)
    ctx = Ctx(arm=arm if arm in ("left", "right") else None, mode=arm, counts=counts,
              count=stated_count(instruction))
    cross = cross_order(text)
    if cross is not None:
        subtasks = cross_subtasks(text, cross, ctx.arm)
        return _finish(instruction, subtasks, [], arm, arm_for, excluded, at_centre, counts)
    order = positional_order(_LOCAL_ARM.sub(" ", text))
    if order is not None:
        local = _LOCAL_ARM.search(text)
        hint = local.group(1) if local else ctx.arm
        subtasks = _ordered(order[0], order[1], text, hint)  # type: ignore[arg-type]
        extra_goal: list[Predicate] = []
    else:
        subtasks, extra_goal = _parse_all(text, ctx)
    return _finish(instruction, subtasks, extra_goal, arm, arm_for, excluded, at_centre, counts)


_AT_CENTRE_RE = re.compile(r"\bmove (?:all )?(?:the )?(?:blocks|cubes|objects|them) to the (?:center|centre|middle) "
                           r"of the table\b")


def _finish(instruction: str, subtasks: list[Subtask], extra_goal: list[Predicate], arm: ArmHint | None,
            arm_for: list[tuple[ObjectRef, ArmHint]], excluded: str | None, at_centre: bool,
            counts: dict[str, int]) -> Plan:
    """Arms per object, ranks, ordering, the goal and the plan-wide checks."""
    if not subtasks:
        raise RefusalError(f"nothing to do in {instruction!r}")
    subtasks = [s.model_copy(update={"obj": with_counts(s.obj, counts),
                                     "target": with_counts(s.target, counts) if s.target else None})
                for s in merge_steps(subtasks)]
    if at_centre:
        subtasks = base_to_centre(subtasks)
    for ref, hint in arm_for:
        def named(s: Subtask, ref: ObjectRef = ref) -> bool:
            return (s.obj.color, s.obj.size) == (ref.color, ref.size)

        if not any(named(s) for s in subtasks):
            raise RefusalError(f"the {hint} arm is named for {ref.phrase.strip()!r}, which the instruction does not "
                               f"move ({instruction!r})")
        subtasks = [s.model_copy(update={"arm_hint": hint}) if named(s) else s for s in subtasks]
    subtasks = [s.model_copy(update={"index": i}) for i, s in enumerate(supports_first(_rank_among(subtasks,
                                                                                                 instruction)))]
    goal = final_goal(subtasks)
    goal += [p for p in extra_goal if p not in goal]  # "in front of A and behind B": both hold at the end
    check_consistency(subtasks, goal + [p for p in extra_goal if p not in goal])
    check_physical(subtasks, goal)
    check_excluded(excluded, subtasks, COLOURS)
    return Plan(subtasks=subtasks, goal=goal, arm_mode=arm if arm in ("left", "right", "both", "one") else None)

