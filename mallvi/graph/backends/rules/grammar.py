"""An instruction grammar for common manipulation language -> typed subtasks and goal predicates.

It understands pick/grab/grasp/take/lift; put/place/move/set X on/onto/in/into/on top of/next to/left of/right
of/in front of/behind/under Y (also with the clauses reordered: "onto the red block, put the green one");
stack A on B (on C); arrange/rank/sort/order/line up by colour or size, left to right or right to left; build a
tower largest to smallest; hand over/pass from one arm to the other; "use the left/right/one/both arms";
"cube"/"block"/"box" as synonyms; "it" and "the blue one" as references back. Clauses are separated by "then",
";", "." or "and" followed by a verb.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

from mallvi.graph.backends.base import RefusalError
from mallvi.graph.backends.rules.plan_checks import check_consistency, final_goal, supports_first
from mallvi.graph.refs import LABEL_SYNONYMS
from mallvi.graph.schemas import Action, ArmHint, ObjectRef, PlaceRelation, Plan, Predicate, SizeWord, Subtask

COLOURS = ("red", "green", "blue", "yellow", "black", "white", "orange", "purple", "pink", "brown", "gray", "cyan")
SIZE_WORDS: dict[str, SizeWord] = {
    "largest": "largest", "biggest": "largest", "large": "large", "big": "large", "larger": "large",
    "bigger": "large", "smallest": "smallest", "tiniest": "smallest", "small": "small", "smaller": "small",
    "little": "small", "medium": "medium", "middle": "medium", "mid-sized": "medium", "midsize": "medium",
}
PICK_VERBS = ("pick up", "pick", "grab", "grasp", "take", "lift", "raise", "hold", "get")
PLACE_VERBS = ("put", "place", "move", "set", "drop", "lay", "position", "bring", "transfer", "carry", "relocate",
               "shift", "slide")
STACK_VERBS = ("stack", "pile")
ARRANGE_VERBS = ("arrange", "rank", "sort", "order", "line up", "align", "organize", "organise")
HANDOVER_VERBS = ("hand over", "handover", "hand off", "pass", "give", "hand", "transfer")
ALL_VERBS = PICK_VERBS + PLACE_VERBS + STACK_VERBS + ARRANGE_VERBS + HANDOVER_VERBS + ("build", "make", "use")

# longest first: "on top of" before "on"
_RELATIONS: list[tuple[str, str]] = [
    ("to the left of", "left_of"), ("on the left of", "left_of"), ("left of", "left_of"),
    ("to the right of", "right_of"), ("on the right of", "right_of"), ("right of", "right_of"),
    ("in front of", "front_of"), ("behind", "behind"), ("next to", "next_to"), ("beside", "next_to"),
    ("near", "next_to"), ("on top of", "on"), ("onto", "on"), ("on to", "on"), ("upon", "on"), ("atop", "on"),
    ("on", "on"), ("into", "in"), ("inside", "in"), ("in", "in"), ("underneath", "under"), ("beneath", "under"),
    ("below", "under"), ("under", "under"),
]
_RELATION_RE = re.compile(r"\b(" + "|".join(re.escape(r) for r, _ in _RELATIONS) + r")\b")
_REL_MAP = dict(_RELATIONS)
_ARM_RE = re.compile(
    r"\b(?:using|with|use|by)\s+(?:the\s+|your\s+|its\s+)?(left|right|one|both|two|either|dual)?\s*"
    r"(?:arm|arms|hand|hands|gripper|grippers)\b(?:\s+to\b)?"
)
_SPLIT_RE = re.compile(r"\s*(?:;|\.\s|,?\s*\band then\b|,?\s*\bthen\b|,?\s*\bafter that\b|,?\s*\bfinally\b)\s*")
_PREV_RE = re.compile(r"\b(?:back\s+)?(?:to\s+|at\s+)?(?:the\s+)?(?:previous|original|initial|old)\s+"
                      r"(?:location|position|place|spot)\s+of\s+(.+)$|\b(?:back\s+)?(?:to\s+)?where\s+(.+?)\s+was\b")


@dataclass
class _Ctx:
    last: ObjectRef | None = None
    arm: ArmHint | None = None


_COLOUR_LIST = r"(?:\s*(?:,|and)?\s*(?:" + "|".join(COLOURS) + r"))+"
# scene context that carries no action ("there are three blocks on the table", "in a row", ...)
_CONTEXT_RE = [
    re.compile(r"\bthere (?:are|is) [^,.;]*?\b(?:on|in) the table\b\s*[,.;]?"),
    re.compile(r"\bif there is [^,.;]*[,.;]"),
    re.compile(r"\bthe colou?rs? of the (?:blocks|cubes|objects) (?:is|are)" + _COLOUR_LIST + r"\s*[,.;]?"),
    re.compile(r",?\s*(?:and\s+)?move (?:all )?(?:the )?(?:blocks|cubes|objects|them) to the (?:center|centre|middle) "
               r"of the table\s*[,.;]?"),
    re.compile(r",?\s*plac\w* (?:them )?in a (?:row|line)\b"),
    re.compile(r"\bin a (?:row|line)\b"),
    re.compile(r"\b(?:on|from|off) the table\b"),
    re.compile(r",?\s*from bottom to top\b"),
]


def _norm(text: str) -> str:
    t = text.lower().strip()
    t = re.sub(r"[!?\"']", " ", t)
    t = t.replace("grey", "gray").replace("left-hand", "left").replace("right-hand", "right")
    t = re.sub(r"\bleft most\b", "leftmost", t)
    t = re.sub(r"\bin the order of\b", "ordered as", t)
    for pat in _CONTEXT_RE:
        t = pat.sub(" ", t)
    t = re.sub(r"\s+([,.;])", r"\1", t)
    t = re.sub(r"\s+", " ", t).strip(" .,;")
    return re.sub(r"^(?:and|then)\s+", "", t)


def _has_verb(fragment: str) -> bool:
    return any(re.match(rf"(?:please\s+)?(?:now\s+)?{re.escape(v)}\b", fragment) for v in ALL_VERBS)


def _split_clauses(text: str) -> list[str]:
    parts: list[str] = []
    for p in _SPLIT_RE.split(text):
        held = ""
        for q in _COMMA_VERB_RE.split(p or ""):
            q = f"{held}, {q}" if held else q
            held = ""
            if not _find_verb(q, ALL_VERBS):  # "onto the red block, put the green one" stays one clause
                held = q
                continue
            parts.append(q.strip(" ,"))
        if held.strip(" ,"):
            parts.append(held.strip(" ,"))
    out: list[str] = []
    for p in parts:
        pieces = re.split(r",?\s+and\s+", p)
        buf = pieces[0]
        for nxt in pieces[1:]:
            buf_rel = _RELATION_RE.search(buf)
            nxt_rel = _RELATION_RE.search(nxt)
            verb = re.match(r"(?:please\s+)?(?:and\s+)?(\w+(?: up| over)?)\b", buf)
            if _has_verb(nxt):
                out.append(buf)
                buf = nxt
            elif buf_rel and nxt_rel and nxt_rel.start() == 0:  # "put A on B and under C": same object, both hold
                out.append(buf)
                buf = f"{CONJUNCT}{buf[: buf_rel.start()].strip()} {nxt}"
            elif buf_rel and nxt_rel and verb:  # "put A on B and C on D": same verb
                out.append(buf)
                buf = f"{verb.group(1)} {nxt}"
            else:
                buf = f"{buf} and {nxt}"
        out.append(buf)
    return [re.sub(r"^(?:(?:first|please|now|next|and|to)\s+)+", "", c).strip(" ,") for c in out if c.strip(" ,")]


_COMMA_VERB_RE = re.compile(r",\s*(?=(?:please\s+)?(?:" + "|".join(re.escape(v) for v in ALL_VERBS if v != "use")
                            + r")\b)")
CONJUNCT = "\x00"  # marks a clause whose goal holds together with the previous one's (not after it)


def _noun_phrases(fragment: str, ctx: _Ctx) -> list[ObjectRef]:
    """All object references in a fragment ("the red, green and blue blocks" -> three refs)."""
    words = re.findall(r"[a-z\-]+", fragment)
    if any(w in ("it", "them") for w in words) and ctx.last is not None and not any(w in COLOURS for w in words):
        return [ctx.last]
    colours = [w for w in words if w in COLOURS]
    sizes = [SIZE_WORDS[w] for w in words if w in SIZE_WORDS]
    labels = [w for w in words if w in LABEL_SYNONYMS and w not in ("one", "object", "thing", "item")]
    label = labels[-1] if labels else None
    if label is None and ("one" in words or colours or sizes) and ctx.last is not None:
        label = ctx.last.label
    if label is not None:
        label = LABEL_SYNONYMS.get(label, label)
    phrase = fragment.strip()
    if len(colours) > 1:
        return [ObjectRef(phrase=f"the {c} {label or 'object'}", color=c, label=label) for c in colours]
    if len(sizes) > 1:
        return [ObjectRef(phrase=f"the {s} {label or 'object'}", size=s, label=label) for s in sizes]
    if colours or sizes or labels:
        return [ObjectRef(phrase=phrase, color=colours[0] if colours else None,
                          size=sizes[0] if sizes else None, label=label)]
    return []


def _one_ref(fragment: str, ctx: _Ctx, role: str, clause: str) -> ObjectRef:
    refs = _noun_phrases(fragment, ctx)
    if len(refs) != 1:
        what = "no object" if not refs else f"{len(refs)} objects"
        raise RefusalError(f"cannot tell which object is the {role} in {clause!r} ({what} found in {fragment!r})")
    return refs[0]


def _find_verb(clause: str, verbs: tuple[str, ...]) -> re.Match[str] | None:
    return re.search(r"\b(" + "|".join(re.escape(v) for v in verbs) + r")\b", clause)


def _place(ctx: _Ctx, clause: str, obj: ObjectRef, rel_word: str, target_text: str, action: str,
           before: ObjectRef | None = None) -> list[Subtask]:
    rel = _REL_MAP[rel_word]
    target = _one_ref(target_text, _Ctx(last=before or obj), "target", clause)
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


def _parse_memory_place(clause: str, obj_text: str, mem_m: re.Match[str], ctx: _Ctx) -> Subtask:
    obj = _one_ref(obj_text, ctx, "object", clause)
    of_text = (mem_m.group(1) or mem_m.group(2) or "").strip()
    of_ref = obj if of_text in ("it", "its") else _one_ref(of_text, _Ctx(last=obj), "remembered object", clause)
    from mallvi.graph.schemas import MemoryTag

    return Subtask(text=clause, action="move", obj=obj, relation="at", arm_hint=ctx.arm,
                   memory=[MemoryTag(kind="previous_location", of=of_ref.key())], target=of_ref)


def _parse_arrange(clause: str, ctx: _Ctx) -> list[Subtask]:
    rtl = bool(re.search(r"\bright to (?:the )?left\b", clause))
    body = re.sub(r"\bfrom (?:the )?(?:left|right) to (?:the )?(?:left|right)\b", " ", clause)
    by_size = bool(re.search(r"\bsize|\blargest|\bbiggest|\bsmallest\b", body))
    ordered = re.search(r"\bordered as\b(.*)$", body)
    refs = [r for r in _noun_phrases(ordered.group(1) if ordered else body, ctx) if r.color]
    if ordered and refs and refs[0].label is None:
        label = next((r.label for r in _noun_phrases(body[: ordered.start()], ctx) if r.label), "block")
        refs = [r.model_copy(update={"label": label, "phrase": f"the {r.color} {label}"}) for r in refs]
    seen: set[str] = set()
    refs = [r for r in refs if not (r.key() in seen or seen.add(r.key()))]  # type: ignore[func-returns-value]
    if by_size and not refs:
        small_first = bool(re.search(r"\bsmall\w*\s+(?:to|first)", body))
        order: list[SizeWord] = ["smallest", "medium", "largest"] if small_first else ["largest", "medium", "smallest"]
        refs = [ObjectRef(phrase=f"the {s} block", size=s, label="block") for s in order]
    elif not refs and re.search(r"\bcolou?r|\brgb\b", body):
        refs = [ObjectRef(phrase=f"the {c} block", color=c, label="block") for c in ("red", "green", "blue")]
    if len(refs) < 2:
        raise RefusalError(f"an arrangement needs at least two named objects: {clause!r}")
    if rtl:
        refs = list(reversed(refs))
    subtasks: list[Subtask] = []
    for i, r in enumerate(refs):
        post = [Predicate(relation="left_of", args=[refs[i - 1].key(), r.key()])] if i else []
        subtasks.append(Subtask(text=f"{clause} [slot {i}: {r.phrase}]", action="move", obj=r, relation="slot",
                                group=refs, slot=i, arm_hint=ctx.arm, post=post))
    return subtasks


def _parse_tower(clause: str, ctx: _Ctx) -> list[Subtask]:
    refs = [r for r in _noun_phrases(clause, ctx) if r.color]
    if len(refs) < 2:
        small_base = bool(re.search(r"\bsmallest\b.*\b(?:to|first)\b.*\blargest\b", clause))
        sizes: list[SizeWord] = ["smallest", "medium", "largest"] if small_base else ["largest", "medium", "smallest"]
        refs = [ObjectRef(phrase=f"the {s} block", size=s, label="block") for s in sizes]
    return [_place_subtask(clause, upper, "on", lower, ctx.arm, "stack") for lower, upper in pairwise(refs)]


def _parse_handover(clause: str, verb_end: int, ctx: _Ctx) -> Subtask:
    rest = clause[verb_end:]
    m = re.search(r"\bfrom (?:the )?(left|right)\b", rest)
    giver = m.group(1) if m else None
    m2 = re.search(r"\bto (?:the )?(left|right)\b", rest)
    receiver = m2.group(1) if m2 else None
    if giver is None and receiver is not None:
        giver = "left" if receiver == "right" else "right"
    if giver is not None and receiver is None:
        receiver = "left" if giver == "right" else "right"
    if giver is not None and giver == receiver:
        raise RefusalError(f"a handover needs two different arms: {clause!r}")
    obj_text = re.split(r"\b(?:from|to|between|over to)\b", rest)[0]
    obj = _one_ref(obj_text, ctx, "object to hand over", clause)
    arm: ArmHint | None = giver if giver in ("left", "right") else None  # type: ignore[assignment]
    post = [Predicate(relation="held_by", args=[obj.key(), receiver])] if receiver else []
    return Subtask(text=clause, action="handover", obj=obj, arm_hint=arm, post=post)


def _parse_clause(clause: str, ctx: _Ctx) -> list[Subtask]:
    if re.search(r"\b(?:build|make|create)\b.*\b(?:tower|stack|pile)\b|\btower\b", clause):
        return _parse_tower(clause, ctx)
    if re.search(r"\bhand(?:\s|-)?over\b|\bhand off\b|\bpass\b|\bgive\b|\bfrom (?:the )?(?:left|right|one) "
                 r"(?:arm|hand|gripper) to\b|\b(?:hand|transfer|move)\b.*\bto (?:the )?(?:left|right|other) "
                 r"(?:arm|hand|gripper)\b", clause):
        v = _find_verb(clause, HANDOVER_VERBS)
        return [_parse_handover(clause, v.end() if v else 0, ctx)]
    if _find_verb(clause, ARRANGE_VERBS) or re.search(r"\bfrom (?:the )?(?:left|right) to (?:the )?(?:left|right)",
                                                       clause):
        return _parse_arrange(clause, ctx)
    stack_v = _find_verb(clause, STACK_VERBS)
    place_v = _find_verb(clause, PLACE_VERBS)
    pick_v = _find_verb(clause, PICK_VERBS)
    verb = stack_v or place_v or pick_v
    if verb is None:
        raise RefusalError(f"no manipulation verb understood in {clause!r}")
    rels = list(_RELATION_RE.finditer(clause))
    mem = _PREV_RE.search(clause, verb.end())
    if mem and (stack_v or place_v):
        return [_parse_memory_place(clause, clause[verb.end():mem.start()], mem, ctx)]
    if stack_v and len(rels) >= 2 and all(_REL_MAP[r.group(1)] == "on" for r in rels):
        # stack A on B on C: B onto C first, then A onto B
        bounds = [verb.end()] + [r.start() for r in rels] + [len(clause)]
        chain = [_one_ref(clause[bounds[i] + (len(rels[i - 1].group(1)) if i else 0):bounds[i + 1]], ctx,
                          "object", clause) for i in range(len(bounds) - 1)]
        return [_place_subtask(clause, up, "on", low, ctx.arm, "stack") for up, low in reversed(list(pairwise(chain)))]
    if rels and (stack_v or place_v or (pick_v and rels[0].start() > pick_v.end())):
        r = next((x for x in rels if x.start() > verb.end()), None)
        if r is not None:
            before = ctx.last
            obj = _one_ref(clause[verb.end():r.start()], ctx, "object", clause)
            ctx.last = obj
            return _place(ctx, clause, obj, r.group(1), clause[r.end():], "stack" if stack_v else "place", before)
        r = rels[0]  # reordered: "onto the red block, put the green one"
        target = _one_ref(clause[r.end():verb.start()], ctx, "target", clause)
        obj = _one_ref(clause[verb.end():], _Ctx(last=target), "object", clause)
        return _place(ctx, clause, obj, r.group(1), clause[r.end():verb.start()], "stack" if stack_v else "place")
    if pick_v and not (stack_v or place_v):
        obj = _one_ref(clause[pick_v.end():], ctx, "object", clause)
        ctx.last = obj
        return [Subtask(text=clause, action="pick", obj=obj, arm_hint=ctx.arm,
                        post=[Predicate(relation="lifted", args=[obj.key()])])]
    if stack_v:
        refs = _noun_phrases(clause[stack_v.end():], ctx)
        if len(refs) >= 2:  # "stack the red, green and blue blocks": first named ends on top
            return [_place_subtask(clause, up, "on", low, ctx.arm, "stack")
                    for up, low in reversed(list(pairwise(refs)))]
    raise RefusalError(f"cannot tell where to put the object in {clause!r}")


def _arm_clause(text: str) -> tuple[str, ArmHint | None]:
    m = _ARM_RE.search(text)
    if not m:
        return text, None
    word = m.group(1) or "both"
    arm: ArmHint = {"left": "left", "right": "right", "both": "both", "two": "both", "dual": "both"}.get(  # type: ignore
        word, "one")
    return (text[: m.start()] + text[m.end():]).strip(" ,"), arm


def parse_instruction(instruction: str) -> Plan:
    """Turn an instruction into a plan; raises RefusalError with a readable reason when it cannot."""
    text = _norm(instruction)
    if not text:
        raise RefusalError("the instruction is empty")
    text, arm = _arm_clause(text)
    ctx = _Ctx(arm=arm if arm in ("left", "right") else None)
    subtasks: list[Subtask] = []
    extra_goal: list[Predicate] = []
    for raw in _split_clauses(text):
        clause = raw.lstrip(CONJUNCT)
        new = _parse_clause(clause, ctx)
        if raw.startswith(CONJUNCT) and subtasks:
            extra_goal.extend(subtasks[-1].post)
        if subtasks and new and subtasks[-1].action == "pick" and new[0].obj.key() == subtasks[-1].obj.key():
            picked = subtasks.pop()  # "pick up X and put it on Y" is one place subtask
            if new[0].arm_hint is None and picked.arm_hint is not None:
                new[0] = new[0].model_copy(update={"arm_hint": picked.arm_hint})
        subtasks.extend(new)
        if new:
            ctx.last = new[-1].obj
            receiver = next((p.args[1] for p in new[-1].post if p.relation == "held_by"), None)
            if new[-1].action == "handover" and receiver in ("left", "right"):
                ctx.arm = receiver  # type: ignore[assignment]  # the receiving arm carries on
    if not subtasks:
        raise RefusalError(f"nothing to do in {instruction!r}")
    subtasks = [s.model_copy(update={"index": i}) for i, s in enumerate(supports_first(subtasks))]
    goal = final_goal(subtasks)
    check_consistency(subtasks, goal + [p for p in extra_goal if p not in goal])
    return Plan(subtasks=subtasks, goal=goal, arm_mode=arm)
