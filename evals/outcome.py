"""What one hostile input or injected fault ended in, and running it bounded in time (reliability and faults)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

HANG_S = 60.0


@dataclass
class Outcome:
    """What one input or fault ended in."""

    name: str
    outcome: str  # diagnosis | error | crash | hang
    detail: str = ""
    failure_class: str | None = None
    items_in: int | None = None
    accounted: int | None = None  # entries read + reported skipped + objects kept
    skipped: int = 0
    gaps: list[str] = field(default_factory=list)
    seconds: float = 0.0
    known_bug: str | None = None

    @property
    def lost(self) -> int:
        if self.items_in is None or self.accounted is None:
            return 0
        return max(0, self.items_in - self.accounted)

    @property
    def miscounted(self) -> int:
        if self.items_in is None or self.accounted is None or self.outcome != "diagnosis":
            return 0
        return abs(self.items_in - self.accounted)


def bounded(fn, limit_s: float = HANG_S):
    """fn() in a daemon thread: (value, error, seconds, finished)."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as err:  # noqa: BLE001 - recorded and classified by the caller
            box["error"] = err

    t0 = time.monotonic()
    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(limit_s)
    return box.get("value"), box.get("error"), time.monotonic() - t0, not th.is_alive()


def classify_error(err: BaseException | None) -> tuple[str, str]:
    from pathways_workload.skill.errors import PathwaysWorkloadError

    if err is None:
        return "diagnosis", ""
    text = str(err)
    if isinstance(err, PathwaysWorkloadError) and "\n" not in text and "Traceback" not in text:
        return "error", text
    return "crash", f"{type(err).__name__}: {text[:300]}"
