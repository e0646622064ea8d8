"""Reading calibration YAML safely: a bounded loader and typed fields whose errors name the file and the key.

Every calibration file (the rig calibration, a views folder's ``views.yaml``) is read through ``read_mapping``:
at most ``MAX_FILE_BYTES``, nesting at most ``MAX_DEPTH`` deep and at most ``MAX_NODES`` nodes with every alias
counted as the nodes it stands for (so an alias bomb is refused while it is composed, before anything is built),
YAML's safe tags only. Values are then taken with ``Fields``, which checks type, shape, finiteness and range and
raises ``CalibrationFileError`` with ``FILE: key.path: what is wrong``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from numpy.typing import NDArray

#: a calibration file larger than this is not one (a views file of 200 views is about 100 kB)
MAX_FILE_BYTES = 4 * 1024 * 1024
#: the files nest five deep; anything far deeper is not a calibration
MAX_DEPTH = 32
#: nodes a file may expand to, every alias counted as the nodes it refers to
MAX_NODES = 200_000
#: how much of an offending value a message shows
_SHOWN_CHARS = 60


class CalibrationFileError(ValueError):
    """A calibration or views file that is missing, malformed, implausible or not the station's; the message
    names the file and the key."""


class _TooLarge(yaml.YAMLError):
    """The document exceeds a bound of the loader (depth or expanded node count)."""


class BoundedSafeLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that stops composing a document nested deeper than ``MAX_DEPTH`` or expanding to more
    than ``MAX_NODES`` nodes (aliases counted as what they expand to)."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._depth = 0
        self._expanded: dict[int, int] = {}  # id(node) -> nodes it expands to

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _TooLarge(f"nested more than {MAX_DEPTH} levels deep")
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if id(node) not in self._expanded:  # a new node (an alias returns one already counted)
            size = 1
            if isinstance(node, yaml.SequenceNode):
                size += sum(self._expanded.get(id(v), 1) for v in node.value)
            elif isinstance(node, yaml.MappingNode):
                size += sum(self._expanded.get(id(k), 1) + self._expanded.get(id(v), 1) for k, v in node.value)
            if size > MAX_NODES:
                raise _TooLarge(f"expands to more than {MAX_NODES:,} values (aliases counted as what they repeat)")
            self._expanded[id(node)] = size
        return node


def read_mapping(path: Path, what: str) -> dict[str, Any]:
    """The top-level mapping of the YAML file ``path`` (a ``what``, for messages), read within the bounds."""
    if not path.is_file():
        kind = "not found" if not path.exists() else "is not a regular file"
        raise CalibrationFileError(f"{what} {str(path)!r} {kind}")
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise CalibrationFileError(f"{what} {str(path)!r} cannot be read: {e.strerror or e}") from e
    if len(raw) > MAX_FILE_BYTES:
        raise CalibrationFileError(f"{what} {str(path)!r} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB; "
                                   "it is not a calibration file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CalibrationFileError(f"{what} {str(path)!r} is not UTF-8 text (byte {e.start})") from e
    try:
        data = yaml.load(text, Loader=BoundedSafeLoader)  # a SafeLoader with bounds
    except _TooLarge as e:
        raise CalibrationFileError(f"{what} {str(path)!r} is refused: {e}") from e
    except (yaml.YAMLError, ValueError) as e:  # ValueError: e.g. an integer of more digits than Python converts
        raise CalibrationFileError(f"{what} {str(path)!r} is not valid YAML: {_shown(str(e), 300)}") from e
    except RecursionError as e:  # the bounds above come first; this is the last line
        raise CalibrationFileError(f"{what} {str(path)!r} is refused: nested too deeply") from e
    if not isinstance(data, dict):
        raise CalibrationFileError(f"{what} {str(path)!r} must contain a mapping at the top level")
    return data


def _shown(text: str, limit: int = _SHOWN_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _show(value: Any) -> str:
    """A short description of ``value`` for a message (type and the start of its text)."""
    if isinstance(value, (list, dict)):
        return f"a {'list' if isinstance(value, list) else 'mapping'} of {len(value)}"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**18:
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    return _shown(repr(value))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _as_float(value: float) -> float:
    """``float(value)``; an integer too large for a float is infinite."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


class Fields:
    """Typed access to one mapping of a calibration file; ``where`` is ``FILE: key.path`` for messages."""

    def __init__(self, data: Mapping[str, Any], file: str, path: str = "") -> None:
        self.data, self.file, self.path = data, file, path

    def key(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def error(self, key: str, message: str) -> CalibrationFileError:
        return CalibrationFileError(f"{self.file}: {self.key(key)} {message}")

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str) -> Any:
        if key not in self.data:
            where = f"{self.file}: {self.path}" if self.path else self.file
            raise CalibrationFileError(f"{where}: missing key {key!r}")
        return self.data[key]

    def mapping(self, key: str, *, required: bool = True) -> Fields:
        value = self.raw(key) if required or key in self.data else {}
        if not isinstance(value, dict):
            raise self.error(key, f"must be a mapping, got {_show(value)}")
        return Fields(value, self.file, self.key(key))

    def sequence(self, key: str, *, default: list[Any] | None = None, max_len: int = 100_000) -> list[Any]:
        value = self.data.get(key, default) if default is not None else self.raw(key)
        if not isinstance(value, list):
            raise self.error(key, f"must be a list, got {_show(value)}")
        if len(value) > max_len:
            raise self.error(key, f"has {len(value)} entries, more than {max_len}")
        return value

    def number(self, key: str, lo: float, hi: float, *, default: float | None = None,
               allow_nan: bool = False) -> float:
        """A finite number in [lo, hi] (or NaN, an unknown value, with ``allow_nan``); ``default`` when the key is
        missing, if given."""
        if key not in self.data and default is not None:
            return default
        value = self.raw(key)
        if allow_nan and isinstance(value, float) and math.isnan(value):
            return value
        return self._number(value, key, lo, hi)

    def integer(self, key: str, lo: int, hi: int, *, default: int | None = None) -> int:
        """A whole number in [lo, hi] (``640`` or ``640.0``, not ``640.5``, ``.inf`` or ``[640]``)."""
        if key not in self.data and default is not None:
            return default
        value = self.raw(key)
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.error(key, f"must be a whole number, got {_show(value)}")
        if not lo <= value <= hi:
            raise self.error(key, f"must be between {lo} and {hi}, got {_show(value)}")
        return value

    def text(self, key: str, *, default: str | None = None, max_len: int = 200) -> str:
        value = self.data.get(key, default) if default is not None else self.raw(key)
        if not isinstance(value, str) or len(value) > max_len:
            raise self.error(key, f"must be a text of at most {max_len} characters, got {_show(value)}")
        return value

    def texts(self, key: str, *, max_len: int = 10_000) -> tuple[str, ...]:
        items = self.sequence(key, default=[], max_len=max_len)
        for i, item in enumerate(items):
            if not isinstance(item, str) or len(item) > 1000:
                raise self.error(f"{key}[{i}]", f"must be a file name, got {_show(item)}")
        return tuple(items)

    def matrix(self, key: str, shape: tuple[int, ...], *, bound: float = 1e6,
               default: Any = None) -> NDArray[np.float64]:
        """A matrix of ``shape`` ((rows, cols) or (n,)) of finite numbers within ±``bound``."""
        value = self.data.get(key, default) if default is not None else self.raw(key)
        what = (f"must be a finite {shape[0]}x{shape[1]} matrix of numbers" if len(shape) == 2
                else f"must be a list of {shape[0]} finite numbers")
        rows = value if len(shape) == 2 else [value]
        if (not isinstance(value, list) or len(rows) != (shape[0] if len(shape) == 2 else 1)
                or not all(isinstance(r, list) and len(r) == shape[-1] for r in rows)):
            raise self.error(key, f"{what}, got {_show(value)}")
        for r, row in enumerate(rows):
            for c, v in enumerate(row):
                at = f"[{r}][{c}]" if len(shape) == 2 else f"[{c}]"
                if not _is_number(v):
                    raise self.error(key, f"{what}: {at} is {_show(v)}")
                if not math.isfinite(_as_float(v)) or abs(_as_float(v)) > bound:
                    raise self.error(key, f"{what} of at most {bound:g} in size: {at} is {_show(v)}")
        return np.asarray(value, dtype=float)

    def rigid(self, key: str, *, max_translation_m: float, default: Any = None) -> NDArray[np.float64]:
        """A 4x4 rigid transform: orthonormal rotation with determinant 1, last row (0, 0, 0, 1), translation
        within ``max_translation_m``."""
        T = self.matrix(key, (4, 4), default=default)
        R = T[:3, :3]
        if not (np.allclose(R.T @ R, np.eye(3), atol=1e-4) and np.isclose(np.linalg.det(R), 1.0, atol=1e-4)
                and np.allclose(T[3], [0, 0, 0, 1])):
            raise self.error(key, "is not a rigid transform (rotation not orthonormal or bad last row)")
        distance = float(np.linalg.norm(T[:3, 3]))
        if distance > max_translation_m:
            raise self.error(key, f"puts its origin {distance:.3g} m away; a rig is at most {max_translation_m:g} m "
                                  "across")
        return T

    def _number(self, value: Any, key: str, lo: float, hi: float) -> float:
        if not _is_number(value):
            raise self.error(key, f"must be a number, got {_show(value)}")
        fv = _as_float(value)
        if not math.isfinite(fv) or not lo <= fv <= hi:
            raise self.error(key, f"must be a finite number between {lo:g} and {hi:g}, got {_show(value)}")
        return fv
