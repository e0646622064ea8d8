"""A tiny evaluator for the arithmetic a model writes inside a Tier 3 action, e.g. ``"0.738+0.13"``.

Only numbers, + - * / // % **, unary signs and parentheses are understood; anything else (names, calls,
attributes, comparisons) is refused. The original benchmark turns a string it cannot compute into NaN, which makes
that arm's motion unplannable; ``evaluate`` returns NaN the same way, and never runs Python code.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
MAX_LENGTH = 200  # characters; longer strings are not arithmetic a model means
MAX_EXPONENT = 64.0


def evaluate(text: str) -> float:
    """The value of an arithmetic expression, or NaN when it is not one (or cannot be computed)."""
    if len(text) > MAX_LENGTH:
        return math.nan
    try:
        tree = ast.parse(text.strip(), mode="eval")
        return float(_value(tree.body))
    except (SyntaxError, ValueError, TypeError, ZeroDivisionError, OverflowError):
        return math.nan


def _value(node: ast.expr) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise ValueError("exponent too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_value(node.operand))
    raise ValueError(f"not arithmetic: {type(node).__name__}")
