"""The run's state as the status rows read it: when the program was seen running, whether it ran at the end, what
refused its pods a place: the Run that skill/understanding/status.py's table reads. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Sequence

from ..catalog import CLASSES
from ..understanding.model import Workload
from ..understanding.signals import Signal
from ..understanding.status import STALL_WINDOW_NS, Run


def activity(model: Workload) -> list[int]:
    """When the program was seen running: the client's progress lines and the workers' program-launch reports.

    Both are read as capped samples of the newest lines, so the list starts with the earliest full "n/n slices ready"
    line when there is one: programs run only after it, and it is always read whole."""
    act = model.running_times()
    ready = [s.ts for s in model.ready_slices()]
    if act and ready and min(ready) < act[0]:
        act.insert(0, min(ready))
    return act


def running_at_end(model: Workload, act: list[int], have: set[str]) -> bool:
    """The JobSet did not fail and the program was still running at the end of the data."""
    return (bool(act) and not model.condition("Failed") and "jobset_failed" not in have
            and model.now - act[-1] <= STALL_WINDOW_NS)


SCHEDULING = frozenset(c.id for c in CLASSES if c.phase in ("scheduling", "admission"))


def refusals(symptoms: list[Signal], causes: Sequence[Signal]) -> list[Signal]:
    """What refused the run's pods a place: the scheduler's refusals and the lines of scheduling-phase classes."""
    return sorted([s for s in symptoms if s.target == "unschedulable"] +
                  [s for s in causes if s.target in SCHEDULING], key=lambda s: s.ts)


def run_of(model: Workload, symptoms: list[Signal], root: str, act: list[int] | None = None,
           causes: Sequence[Signal] = ()) -> Run:
    """What the status rows read (skill.understanding.status). `act`: activity(model), when the caller has it."""
    act = activity(model) if act is None else act
    return Run(model, symptoms, root, act, running_at_end(model, act, {s.target for s in symptoms}),
               refusals(symptoms, list(causes)))
