"""Instruction wording before the grammar parses it: spelling, verb forms, polite and goal-state phrasings, and
the kinds of sentence the grammar refuses outright (negations, alternatives, conditions).

Spelling is corrected only towards the grammar's own key words (colours, object names, verbs, sides, sizes), one
edit away (a wrong, missing, extra or swapped letter), for words of four letters or more that are not ordinary
English words the instructions use.
"""

from __future__ import annotations

import re

from mallvi.graph.agent_errors import RefusalError

#: words the spelling correction may produce
_TARGETS = (
    "red", "green", "blue", "yellow", "black", "white", "orange", "purple", "brown", "gray", "cyan",
    "block", "blocks", "cube", "cubes", "stack", "arrange", "place", "right", "left", "largest", "smallest",
    "biggest", "hand", "over", "pick", "grab", "lift", "tower", "middle", "bottom", "leftmost", "rightmost", "order",
    "behind", "front", "onto", "handover", "please", "then", "arm", "gripper",
)
#: ordinary words one edit away from a target word, never corrected
_KNOWN = set(_TARGETS) | {
    "lower", "power", "towel", "side", "slide", "back", "hold", "gold", "bold", "being", "bring", "space", "short",
    "sort", "more", "move", "hard", "hands", "tube", "glue", "clue", "blur", "while", "write", "older", "light",
    "might", "night", "fight", "sight", "tight", "eight", "bright", "lift", "left", "loft", "stick", "stuck",
    "track", "stark", "snack", "slack", "black", "block", "file", "tile", "mile", "pole", "pile", "fellow",
    "mellow", "crown", "drown", "frown", "tray", "pray", "riddle", "fiddle", "than", "them", "they", "there",
    "these", "when", "oven", "over", "ever", "cover", "lover", "rover", "plate", "plane", "grace", "trace",
    "price", "pack", "pick", "kick", "lick", "sick", "tick", "grid", "grub", "grass", "brick", "arms", "army",
    "farm", "harm", "warm", "form", "from", "fronts", "lock", "rock", "sock", "bloc", "cute", "cubs", "hang",
    "band", "land", "sand", "wand", "hind", "kind", "mind", "find", "wind", "rent", "redo", "reed", "read",
    "into", "unto", "hover", "mover", "thin", "thee", "handy", "hank", "crab", "drab", "gram", "grad", "garb",
    "list", "gift", "rift", "lint", "lent", "lest", "peace", "pace", "lace", "stalk", "stank", "smack", "shack",
    "clock", "flock", "cure", "mower", "cower", "rower", "toner", "towed", "border", "odder", "muddle", "meddle",
    "font", "frond", "lease", "pleased", "gripped", "dripper", "tripper", "rend", "bred", "greed", "greet",
    "preen", "flue", "bellow", "blank", "clack", "whine", "whit", "grange", "brow", "fray", "gravy", "pink",
    "white", "gray", "cyan", "brown", "open", "upon", "atop", "onto", "once", "done", "gone", "bone", "tone",
}
_ABBREVIATIONS = {
    "grn": "green", "blk": "block", "blks": "blocks", "blu": "blue", "plz": "please", "pls": "please",
    "u": "you", "thx": "thanks", "teh": "the", "n": "and", "ontop": "on top", "rgt": "right", "lft": "left",
}
#: third-person and -ing forms of the grammar's verbs -> the plain verb
_VERB_FORMS = {
    "picks": "pick", "picking": "pick", "grabs": "grab", "grabbing": "grab", "takes": "take", "taking": "take",
    "lifts": "lift", "lifting": "lift", "puts": "put", "putting": "put", "places": "place", "placing": "place",
    "sets": "set", "setting": "set", "moves": "move", "moving": "move", "stacks": "stack", "stacking": "stack",
    "piling": "pile", "gives": "give", "giving": "give", "passes": "pass", "passing": "pass", "handing": "hand",
    "drops": "drop", "dropping": "drop", "arranging": "arrange", "sorting": "sort", "lowers": "lower",
    "lowering": "lower",
}
_COURTESY = re.compile(r"^(?:(?:please )?(?:and )?(?:thanks?(?: you)?(?: very much)?|thank you)|cheers|please)$")


def _one_edit(a: str, b: str) -> bool:
    """True if ``a`` becomes ``b`` by one substitution, insertion, deletion or swap of neighbouring letters."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k in range(len(short)) if short[k] != long_[k]), len(short))
    return short[i:] == long_[i + 1:]


def _correct(word: str) -> str:
    if word in _ABBREVIATIONS:
        return _ABBREVIATIONS[word]
    if len(word) < 4 or word in _KNOWN or not word.isalpha():
        return word
    hits = [t for t in _TARGETS if _one_edit(word, t)]
    if len(hits) > 1:  # "arange": arrange, not orange
        hits = [t for t in hits if t[0] == word[0]]
    return hits[0] if len(hits) == 1 else word


def respell(text: str) -> str:
    """Lower-case words with spelling, abbreviations and verb forms mapped onto the grammar's vocabulary."""
    def fix(m: re.Match[str]) -> str:
        w = _correct(m.group(0))
        return _VERB_FORMS.get(w, w)

    text = re.sub(r"\bhands\b(?=\s+(?:it|them|the|over)\b)", "hand", text)
    return re.sub(r"[a-z]+", fix, text)


# "i'd like the green block to end up on ..." / "the green block should be on ..." -> "put the green block on ..."
_GOAL_STATE = [
    (re.compile(r"^(?:i d|i would|we d|we would) like (.+?) to (?:end up|be|sit|rest|go)\s+(?=(?:on|in|onto|next|to "
                r"the|left|right|behind|under|beneath)\b)"), r"put \1 "),
    (re.compile(r"^(?:i|we) (?:want|need) (.+?) to (?:end up|be|sit|rest|go)\s+(?=(?:on|in|onto|next|to the|left|"
                r"right|behind|under|beneath)\b)"), r"put \1 "),
    (re.compile(r"^((?:the )?\w+ (?:block|cube|box|one)) (?:should|must|has to|needs to) (?:be|end up|sit|rest|go)\s+"
                r"(?=(?:on|in|onto|next|to the|left|right|behind|under|beneath)\b)"), r"put \1 "),
    (re.compile(r"^(?:i|we) (?:want|need|would like|d like) ((?:the )?\w+(?: block| cube| box| one)?)\s+"
                r"(?:moved|placed|put|set|stacked)?\s*"
                r"(?=(?:on|onto|on top of|in|into|next to|behind|under|beneath|in front of|"
                r"to the (?:left|right) of)\b)"),
     r"put \1 "),
    (re.compile(r"^make ((?:the )?\w+(?: block| cube| box| one)?) (?:sit|rest|stand|be|go|end up)\s+(?=(?:on|onto|in|"
                r"into|next|behind|under|beneath|to the)\b)"), r"put \1 "),
]
# "green goes on red" -> "put green on red" (at a clause start)
_GOES = re.compile(r"(^|[,;]\s*|\bthen\s+|\band\s+)((?:the )?\w+(?: block| cube| box| one)?) (?:goes|go|belongs|sits) "
                   r"(?=(?:on|onto|on top of|in|into|next to|behind|under|beneath|in front of|to the)\b)")
# "..., which is on top of the red one" -> "... on top of the red one"
_WHICH_ON = re.compile(r",?\s*which (?:is|sits|stands|rests) (?=on\b|on top of\b)")
_SO_THAT = re.compile(r"\b(stack|pile|arrange|put|place) (?:the blocks|the cubes|them|the objects) so that ")
# "the left arm picks up ..." -> "with the left arm pick up ..."
_SUBJECT_ARM = re.compile(r"(^|[,;]\s*|\band\s+|\bthen\s+)(?:the\s+)?(left|right)\s+(arm|hand|gripper)\s+"
                          r"(?=(?:pick|grab|take|lift|put|place|set|hand|give|pass|move|stack|drop)\b)")
_WHICH_ARM = re.compile(r",?\s*which (?=(?:put|place|set|drop|lower)\b)")


def rephrase(text: str) -> str:
    """Polite, goal-state, relative-clause and subject-arm phrasings rewritten as plain commands."""
    for pat, rep in _GOAL_STATE:
        text = pat.sub(rep, text)
    text = _SO_THAT.sub(r"\1 ", text)
    text = _GOES.sub(r"\1put \2 ", text)
    text = re.sub(r"\bline (.+?) up\b", r"line up \1", text)
    text = re.sub(r"\bpick (?:up )?and (place|put|move)\b", r"\1", text)  # "pick and place the cans into ..."
    text = re.sub(r"\bhandover\b", "hand over", text)
    text = re.sub(r"\b(?:close|near) to\b", "next to", text)
    text = re.sub(r"(?<!\bnext )\b(?:over )?to (the (?:\w+ )?(?:pad|mat|plate|tray))\b", r"onto \1", text)
    text = re.sub(r"(?<!\bnext )\b(?:over )?to (the (?:\w+ )?(?:bowl|basket|bin|dustbin))\b", r"into \1", text)
    text = _WHICH_ON.sub(" ", text)
    text = _SUBJECT_ARM.sub(lambda m: f"{m.group(1)}with the {m.group(2)} {m.group(3)} ", text)
    text = _WHICH_ARM.sub(", then ", text)
    # "move X onto Y by handing it from the left arm to the right arm" -> hand over first, then place
    text = re.sub(r"^(?:move|put|place|bring) (.+?) ((?:onto|on|on top of|into|in) .+?) by hand(?:ing)? it ((?:over )?"
                  r"from .+)$", r"hand \1 \3, then put it \2", text)
    text = re.sub(r",?\s*(?:and\s+)?making sure (?:that )?(?:it|they) (?:is|are|s|stays?) (?:well )?"
                  r"(?:centred|centered|stable|aligned|straight|level)\b", "", text)
    parts = [p for p in re.split(r"(?<=[.;!])\s+|,\s+", text)]
    return ", ".join(p for p in parts if not _COURTESY.match(p.strip(" .,;"))).strip()


_NEGATION = re.compile(r"\b(?:don t|dont|do not|does not|doesn t|never|without|not|avoid|except|nor|neither)\b")
_BENIGN_NEGATION = re.compile(r",?\s*(?:and\s+|but\s+)?not (?:the other way (?:a)?round|vice versa)\b")
_BUT_NOT = re.compile(r",?\s*but not ((?:the )?(?:\w+ )?(?:one|block|cube|box|blocks|cubes))\s*$")


def refuse_unsupported(text: str) -> tuple[str, str | None]:
    """Refuse negations, alternatives and conditions the grammar cannot honour.

    Returns the text without a harmless trailing exclusion ("..., but not the blue one") and that exclusion's
    noun phrase, which the caller must check the plan leaves alone.
    """
    text = _BENIGN_NEGATION.sub("", text)
    excluded = None
    m = _BUT_NOT.search(text)
    if m:
        excluded, text = m.group(1), text[: m.start()]
    neg = _NEGATION.search(text)
    if neg:
        word = re.sub(r" t$", "'t", neg.group(0))  # the apostrophe was dropped while normalising
        raise RefusalError(f"negations are not understood: \"{word}\" in {text!r} (say only what to do)")
    alt = re.search(r"\b(?:or|either)\b", text)
    if alt:
        raise RefusalError(f"alternatives are not understood: {alt.group(0)!r} in {text!r} (name one target)")
    cond = re.search(r"\b(?:if|unless|whenever|until|in case|before|after (?:you|having|\w+ing))\b", text)
    if cond:
        raise RefusalError(f"conditions are not understood: {cond.group(0)!r} in {text!r}")
    return text, excluded
