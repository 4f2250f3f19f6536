"""Progress notes of a live read on stderr: nothing for a quick run, a note per step and a heartbeat for a slow one.

The sources send step notes (`Cloud Logging: reading signatures ...`). A run that ends (or fails) within `after`
seconds prints none of them, so a quick answer or a fast failure is its one line. Past that, the step under way and
each later one are printed, and while one call blocks (a slow page, a connect timeout, a backoff) a "still waiting"
line follows every `every` seconds of silence, with the time spent and what is left of the deadline. The CLI turns
this on when stderr is a terminal; `--verbose` prints every note at once, terminal or not.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class Heartbeat:
    """`with Heartbeat(write, deadline_s) as hb: diagnose_live(..., progress=hb.say)`; `enabled=False`: silent."""

    def __init__(self, write: Callable[[str], None], deadline_s: float, *, prefix: str = "[live] ",
                 after: float = 3.0, every: float = 5.0, enabled: bool = True,
                 clock: Callable[[], float] = time.monotonic):
        self.write, self.prefix, self.after, self.every, self.enabled = write, prefix, after, every, enabled
        self.clock = clock
        self.start = clock()
        self.end = self.start + deadline_s
        self.note, self.pending, self.last_at = "starting", False, self.start
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def say(self, note: str) -> None:
        """A step note: printed once the run has lasted `after` seconds; until then only remembered."""
        if not self.enabled:
            return
        with self.lock:
            self.note, self.last_at = note, self.clock()
            self.pending = self.last_at - self.start < self.after
            if not self.pending:
                self.write(self.prefix + note)

    def _beat(self) -> None:
        while not self.stop.wait(min(0.5, self.after or 0.5)):
            with self.lock:
                now = self.clock()
                if self.pending and now - self.start >= self.after:
                    self.pending = False  # the run got slow: show the step it is on
                    self.write(self.prefix + self.note)
                elif now - self.last_at >= self.every and now - self.start >= self.after:
                    self.last_at = now
                    self.write(f"{self.prefix}still waiting: {now - self.start:.0f} s so far, "
                               f"{max(0.0, self.end - now):.0f} s left of --deadline; last step: {self.note}")

    def __enter__(self) -> Heartbeat:
        if self.enabled:
            self.thread = threading.Thread(target=self._beat, name="heartbeat", daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(2)
