"""`mallvi bench --station twin` checks its options before anything runs."""

from __future__ import annotations

import pytest

from mallvi.bench.bench_config import BenchConfig
from mallvi.cli import main


def test_the_twin_bench_needs_a_calibration_a_graph_agent_and_real_perception() -> None:
    with pytest.raises(ValueError, match="--calibration"):
        BenchConfig(tier="planning", tasks=("stack_blocks_two",), episodes=1, station="twin")
    with pytest.raises(ValueError, match="graph agents"):
        BenchConfig(tier="planning", tasks=("stack_blocks_two",), episodes=1, station="twin", agent="expert",
                    calibration="c.yaml")
    with pytest.raises(ValueError, match="perceives like a rig"):
        BenchConfig(tier="planning", tasks=("stack_blocks_two",), episodes=1, station="twin", perception="sim",
                    calibration="c.yaml")
    cfg = BenchConfig(tier="planning", tasks=("stack_blocks_two",), episodes=1, station="twin", calibration="c.yaml")
    assert cfg.identity()["station"] == "twin"  # a sim run's episodes are not resumed as twin episodes


def test_the_cli_refuses_a_twin_bench_without_calibration(tmp_path: object, capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    code = main(["bench", "--tier", "fine", "--tasks", "stack_blocks_two", "--episodes", "1",
                 "--station", "twin", "--out", str(tmp_path), "--quiet"])
    assert code == 2
    assert "--calibration" in capsys.readouterr().err
