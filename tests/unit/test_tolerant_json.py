"""The tolerant JSON-lines reader: every damaged or hostile line is named by its number, nothing raises past it,
nothing blocks, and a long line is skipped without being held in memory."""

from __future__ import annotations

import json
import os
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from mallvi.tracing.tolerant_json import JsonFileError, JsonLimits, iter_jsonl, load_json_file, parse_json


def _lines(path: Path) -> list[tuple[int, object, str | None, bool]]:
    return [(x.line, x.value, x.problem, x.torn) for x in iter_jsonl(path)]


def test_each_bad_line_is_named_and_the_good_ones_around_it_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "episodes.jsonl"
    good = json.dumps({"task": "t", "seed": 1})
    path.write_bytes(
        (good + "\n").encode()
        + b'{"seed": ' + b"9" * 5000 + b"}\n"  # a 5000-digit integer
        + b"[" * 10_000 + b"]" * 10_000 + b"\n"  # 10k deep
        + b'{"name": "caf\xe9"}\n'  # Latin-1, not UTF-8
        + b"\n"  # blank: skipped
        + b'{"task": "t", "seed": 2, "score": NaN}\n'  # what Python's json writes: accepted
        + b'{"task": "t", "se'  # torn tail
    )
    got = _lines(path)
    assert got[0] == (1, {"task": "t", "seed": 1}, None, False)
    assert got[1][0] == 2 and got[1][2] is not None and "5000 digits" in got[1][2]
    assert got[2][0] == 3 and got[2][2] is not None and "nested deeper than 64" in got[2][2]
    assert got[3][0] == 4 and got[3][2] is not None and "not valid UTF-8" in got[3][2]
    assert got[4][0] == 6 and got[4][2] is None and got[4][1]["seed"] == 2  # type: ignore[index]
    assert got[5][0] == 7 and got[5][3] is True  # the torn last line is marked, not silently parsed as whole
    assert len(got) == 6


def test_digits_and_brackets_inside_strings_are_text_not_numbers_or_nesting() -> None:
    text = json.dumps({"note": "[" * 500 + "7" * 500, "ok": [[1]]})
    assert parse_json(text)["ok"] == [[1]]


def test_a_line_over_the_limit_is_skipped_without_being_held(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    with open(path, "wb") as fh:
        fh.write(b'{"a": 1}\n')
        fh.write(b'{"blob": "' + b"x" * (20 * 1024 * 1024) + b'"}\n')
        fh.write(b'{"a": 3}\n')
    tracemalloc.start()
    try:
        got = _lines(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [g[0] for g in got] == [1, 2, 3]
    assert got[1][2] == f"longer than {8 * 1024 * 1024:,} bytes" and got[2][1] == {"a": 3}
    assert peak < 12 * 1024 * 1024  # not the 20 MB line


def test_a_fifo_named_like_a_data_file_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "episodes.jsonl"
    os.mkfifo(fifo)
    outcome: list[BaseException | None] = []

    def read() -> None:
        try:
            list(iter_jsonl(fifo))
            outcome.append(None)
        except BaseException as e:  # the test reads what was raised
            outcome.append(e)

    t0 = time.monotonic()
    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(timeout=5)
    assert outcome, "reading a FIFO blocked"
    assert isinstance(outcome[0], JsonFileError) and "not a regular file" in str(outcome[0])
    assert time.monotonic() - t0 < 5


def test_a_whole_file_names_the_line_of_its_problem(tmp_path: Path) -> None:
    run_json = tmp_path / "run.json"
    run_json.write_text('{\n  "identity": {\n    "seed_start": ' + "1" * 5000 + "\n  }\n}\n")
    with pytest.raises(JsonFileError) as e:
        load_json_file(run_json)
    assert str(e.value).startswith(f"{run_json} line 3: a number of 5000 digits")
    run_json.write_text('{"identity":\n' + "[" * 10_000 + "]" * 10_000 + "}")
    with pytest.raises(JsonFileError, match="line 2: nested deeper than 64 levels"):
        load_json_file(run_json)
    run_json.write_text('{"a": 1,\n "b": }')
    with pytest.raises(JsonFileError, match="line 2: not valid JSON"):
        load_json_file(run_json)
    with pytest.raises(JsonFileError, match="larger than 10 bytes"):
        load_json_file(run_json, JsonLimits(max_file_bytes=10))
