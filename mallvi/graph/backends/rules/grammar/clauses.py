"""Instruction text -> clauses: normalising, dropping scene context, splitting at "then", ";", "." and "and"
followed by a verb, and lending a verb to clauses that share it ("green on red, then blue on green")."""

from __future__ import annotations

import re

from mallvi.graph.backends.rules.grammar.phrasing import rephrase, respell
from mallvi.graph.backends.rules.grammar.vocab import (
    ALL_VERBS,
    COLOURS,
    PICK_VERBS,
    PLACE_VERBS,
    RELATION_RE,
    SIZE_WORDS,
    STACK_VERBS,
    Ctx,
    find_verb,
    noun_phrases,
)

_SPLIT_RE = re.compile(r"\s*(?:;|\.\s|,?\s*(?:\band\s+)?\b(?:then|after that|afterwards|finally)\b)\s*")


_COLOUR_LIST = r"(?:\s*(?:,|and)?\s*(?:" + "|".join(COLOURS) + r"))+"


# scene context that carries no action ("there are three blocks on the table", "in a row", ...)
_CONTEXT_RE = [
    re.compile(r"\bif there is [^,.;]*[,.;]"),
    re.compile(r"\bthere (?:are|is) [^,.;]*?\b(?:on|in) the table\b\s*[,.;]?"),
    re.compile(r"\bthe colou?rs? of the (?:blocks|cubes|objects) (?:is|are)" + _COLOUR_LIST + r"\s*[,.;]?"),
    re.compile(r",?\s*(?:and\s+)?move (?:all )?(?:the )?(?:blocks|cubes|objects|them) to the (?:center|centre|middle) "
               r"of the table\s*[,.;]?"),
    re.compile(r",?\s*plac\w* (?:them )?in a (?:row|line)\b"),
    re.compile(r"\bin a (?:row|line)\b"),
    re.compile(r"\b(?:on|from|off) the table\b"),
    re.compile(r"\bto the (?:left|right) of the table\b"),  # where a container stands: "the dustbin to the left of ..."
]


def normalise(text: str) -> str:
    t = text.lower().strip()
    t = re.sub(r"[!?\"'()]", " ", t)
    t = t.replace("grey", "gray").replace("left-hand", "left").replace("right-hand", "right")
    t = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", t)
    t = respell(t)
    t = re.sub(r"\bleft most\b", "leftmost", t)
    t = re.sub(r"\bin the order of\b", "ordered as", t)
    for pat in _CONTEXT_RE:
        t = pat.sub(" ", t)
    t = re.sub(r"\s+([,.;])", r"\1", t)
    t = re.sub(r"\s+", " ", t).strip(" .,;")
    return rephrase(re.sub(r"^(?:and|then)\s+", "", t)).strip(" .,;")


def _has_verb(fragment: str) -> bool:
    return any(re.match(rf"(?:arm(?:left|right)\s+)?(?:please\s+)?(?:now\s+)?{re.escape(v)}\b", fragment)
               for v in ALL_VERBS)


_OBJ_START = (r"(?:and\s+)?(?:then\s+)?(?:the\s+)?(?:" + "|".join(COLOURS + tuple(SIZE_WORDS)) + r")\b")


def _verbless_placement(fragment: str) -> bool:
    """ "the blue block on the green one", "blue on green": an object, a relation and a target, but no verb."""
    body = fragment.strip(" ,").lstrip(CONJUNCT)
    rel = RELATION_RE.search(body)
    return bool(re.match(_OBJ_START, body) and rel and not find_verb(body, ALL_VERBS)
                and (noun_phrases(body[rel.end():], Ctx()) or re.fullmatch(r"\s*(?:the )?top", body[rel.end():])))


def _split_commas(part: str) -> list[str]:
    """Split "put A on B, the C on D" at commas that start another placement sharing the verb."""
    pieces = re.split(r",\s*", part)
    out = [pieces[0]]
    for piece in pieces[1:]:
        if _verbless_placement(piece) and RELATION_RE.search(out[-1]):
            out.append(piece)
        else:
            out[-1] = f"{out[-1]}, {piece}"
    return out


def _place_verb(clause: str) -> str | None:
    v = find_verb(clause, STACK_VERBS + PLACE_VERBS)
    return v.group(1) if v else ("put" if find_verb(clause, PICK_VERBS) else None)


def _share_verbs(clauses: list[str]) -> list[str]:
    """A clause without a verb ("then blue on green") takes the previous clause's verb, the first one "put"."""
    out: list[str] = []
    verb: str | None = None
    for c in clauses:
        body = c.lstrip(CONJUNCT)
        if _verbless_placement(body):
            rest = re.sub(r"^(?:and|then)\s+", "", body)
            c = c[: len(c) - len(body)] + f"{verb or 'put'} {rest}"
        verb = _place_verb(c) or verb
        out.append(c)
    return out


def split_clauses(text: str) -> list[str]:
    parts: list[str] = []
    for p in (c for part in _SPLIT_RE.split(text) for c in _split_commas(part or "")):
        held = ""
        for q in _COMMA_VERB_RE.split(p or ""):
            q = f"{held}, {q}" if held else q
            held = ""
            if not find_verb(q, ALL_VERBS):  # "onto the red block, put the green one" stays one clause
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
            buf_rel = RELATION_RE.search(buf)
            nxt_rel = RELATION_RE.search(nxt)
            verb = _place_verb(buf)
            if _has_verb(nxt):
                out.append(buf)
                buf = nxt
            elif buf_rel and nxt_rel and nxt_rel.start() == 0:  # "put A on B and under C": same object, both hold
                out.append(buf)
                buf = f"{CONJUNCT}{buf[: buf_rel.start()].strip()} {nxt}"
            elif buf_rel and nxt_rel and verb:  # "put A on B and C on D": same verb
                out.append(buf)
                buf = f"{verb} {nxt}"
            else:
                buf = f"{buf} and {nxt}"
        out.append(buf)
    return _share_verbs([re.sub(r"^(?:(?:first|please|now|next|and|to)\s+)+", "", c).strip(" ,")
                         for c in out if c.strip(" ,")])


_COMMA_VERB_RE = re.compile(r",\s*(?=(?:arm(?:left|right)\s+)?(?:please\s+)?(?:"
                            + "|".join(re.escape(v) for v in ALL_VERBS if v != "use") + r")\b)")


CONJUNCT = "\x00"  # marks a clause whose goal holds together with the previous one's (not after it)

