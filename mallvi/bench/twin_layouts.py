"""Which of a benchmark run's tasks a twin calibration serves, checked once before any episode.

Each task's scene stands its arms ``arm_spacing_m`` apart (0.6 m or 0.7 m); a calibration serves the tasks whose
twin has its mounts (``twin.twin_calibration``). ``check_twin_calibration`` loads the file once (bounded, typed,
plausible) and refuses a run that names a task of another layout, listing the layouts it needs and the command
that calibrates each.
"""

from __future__ import annotations

from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.tasks import get_task


def check_twin_calibration(cfg: BenchConfig) -> None:
    """Refuse (ValueError naming the file, the key or the tasks) a twin run whose calibration is unusable or
    serves not every task; nothing for a simulator run."""
    if cfg.station != "twin" or cfg.calibration is None:
        return
    from mallvi.robot_drivers.calibration.calibration_files import calibrated_layout, load_rig_calibration
    from mallvi.twin.twin_calibration import calibrate_command, layout_refusal, twin_calibration

    path = cfg.calibration
    calib = load_rig_calibration(path)
    served: list[str] = []
    needs: dict[float, list[str]] = {}  # arm spacing -> the tasks of that layout it does not serve
    for name in cfg.tasks:
        spec = get_task(name).scene_spec(cfg.randomization)
        if layout_refusal(calib, path, spec.name, spec.arm_spacing_m) is not None:
            needs.setdefault(round(float(spec.arm_spacing_m), 3), []).append(name)
        elif not served:
            twin_calibration(path, spec.name, spec.arm_spacing_m)  # both arms, the bases near the table
            served.append(name)
        else:
            served.append(name)
    if not needs:
        return
    made_for = calibrated_layout(calib, "").describe()
    lines = [f"the calibration {path!r} was made for arms {made_for}; it serves "
             f"{', '.join(served) if served else 'none of the tasks asked for'}, and not the tasks below, whose "
             "twins stand their arms elsewhere. Calibrate each layout and run its tasks with its own calibration:"]
    for spacing, tasks in sorted(needs.items()):
        lines.append(f"  arms {spacing:.2f} m apart ({', '.join(tasks)}): `{calibrate_command(tasks[0])}`, then "
                     f"`mallvi bench ... --tasks {','.join(tasks)} --calibration calibration_{tasks[0]}.yaml`")
    raise ValueError("\n".join(lines))
