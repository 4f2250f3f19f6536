"""Did the run suffer from a line? Each cause signal is linked to damage or judged survived, by one ordered table.

A line that names a failure is a cause unless the run is *seen* going on after it: progress after the line, the JobSet
completing, or the same program stepping past it and later failing of something else. Only then is it `survived`: an
observation, not a cause, reported with why it is not the cause, so a reader still sees it. The absence of a later
failure is not such evidence (an export made when the alert fires, live mode ending at "now"): a line among the last of
the data stays linked, and the diagnosis says when it is too soon to tell whether the run recovers. The first row that holds decides; docs/impact.md is generated from
the rows (`python -m pathways_workload.skill.references`), and tests/test_impact.py has a test per row. Pure: no I/O."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass

from ..understanding.signals import Signal

NS = 1_000_000_000
CAUSE_LEAD_NS = 180 * NS  # a cause may be logged up to this long after the failure it explains (clocks, buffering)
RAN_ON_LINES = 3  # progress lines after a line, before anything failed, that show the program ran on ...
RAN_ON_NS = 30 * NS  # ... over at least this long (a client may print a step or two it dispatched before the fault)
# A line the stepping program did not print itself (a node's kernel, a serial console, another host's worker) tells of
# a condition its steps do not end: the program may step for minutes before it reaches it. Such a line is survived
# only after this long of progress (the stall window).
RAN_ON_ELSEWHERE_NS = 15 * 60 * NS


@dataclass(frozen=True)
class Line:
    """What the rows read about one cause signal: when the program was seen running, and what failed when."""

    signal: Signal
    activity: tuple[int, ...]  # sorted times of the client's progress (step) lines
    damage: tuple[int, ...]  # sorted times of failure symptoms (a container failed, the JobSet failed or restarted ...)
    finished: int | None = None  # when the JobSet completed successfully (its Completed condition), if it did
    next_other: int | None = None  # the next line of the same program (container) that names another failure, if any
    own: bool = True  # printed by the program whose steps are read (its pod and container), not by another component
    ignored: bool = False  # part of CPython's report of an exception it ignored ("Exception ignored in: ...")
    exited_clean: bool = False  # the container that printed it later ended with exit code 0 (its Pod status)

    @property
    def ts(self) -> int:
        return self.signal.ts

    @property
    def next_damage(self) -> int | None:
        i = bisect_right(self.damage, self.ts)  # both tuples are sorted: a line is judged in O(log n)
        return self.damage[i] if i < len(self.damage) else None

    @property
    def ran_on(self) -> tuple[int, ...]:
        """Activity after the line and before the next failure (or the end of the data)."""
        nxt = self.next_damage
        end = bisect_left(self.activity, nxt) if nxt is not None else len(self.activity)
        return self.activity[bisect_right(self.activity, self.ts):end]


@dataclass(frozen=True)
class Row:
    verdict: str  # linked | survived
    name: str
    when: str  # the rule in words, for the docs
    holds: Callable[[Line], bool]
    why: Callable[[Line], str] = lambda line: ""


def _minutes(ns: int) -> str:
    return f"{ns / (60 * NS):.0f} min" if ns >= 60 * NS else f"{ns / NS:.0f} s"


def _ran_on(line: Line) -> bool:
    after = line.ran_on
    return len(after) >= RAN_ON_LINES and after[-1] - line.ts >= (RAN_ON_NS if line.own else RAN_ON_ELSEWHERE_NS)


def _ran_on_why(line: Line) -> str:
    after = line.ran_on
    until = "before anything failed" if line.next_damage is not None else "and nothing failed after it"
    return (f"the program ran on after it: {len(after)} progress lines over {_minutes(after[-1] - line.ts)} "
            f"{until}")


WIND_DOWN_NS = 60 * NS  # what JobSet completion stops (SIGTERM, exit 143) lands this close to its Completed time


def _finished(line: Line) -> bool:
    nxt = line.next_damage
    return (line.finished is not None and line.ts <= line.finished
            and (nxt is None or nxt >= line.finished - WIND_DOWN_NS))


def _finished_why(line: Line) -> str:
    assert line.finished is not None
    return (f"the run finished after it: the JobSet completed {_minutes(line.finished - line.ts)} later and nothing "
            "failed before it wound down")


def _went_on(line: Line) -> bool:
    nxt = line.next_other
    return nxt is not None and any(line.ts < a < nxt for a in line.activity)


def _went_on_why(line: Line) -> str:
    assert line.next_other is not None
    n = sum(1 for a in line.activity if line.ts < a < line.next_other)
    return (f"the program went on past it: it stepped again ({n} progress line{'s' if n != 1 else ''}) and only "
            f"{_minutes(line.next_other - line.ts)} later failed of something else")


ROWS: tuple[Row, ...] = (
    Row("survived", "ignored by the interpreter", "the line is part of CPython's report of an exception it ignored "
        "(sys.unraisablehook's \"Exception ignored in: ...\", e.g. in a __del__ or at interpreter shutdown): the "
        "exception was never raised into the program, which went on (or was already exiting)",
        lambda line: line.ignored,
        lambda line: "CPython reported it as an exception it ignored (\"Exception ignored in: ...\"): it was never "
                     "raised into the program"),
    Row("linked", "never ran", "nothing shows the program running at any time (no step line): "
        "the line may be why it never started", lambda line: not line.activity),
    Row("linked", "a failure just before", f"a failure was seen up to {CAUSE_LEAD_NS // NS} s before the line: the "
        "line may be that failure's own account, logged late",
        lambda line: any(line.ts - CAUSE_LEAD_NS <= d <= line.ts for d in line.damage)),
    Row("survived", "went on to fail of something else", "the same program stepped again after the line and later "
        "printed a line of another failure: it handled this one and went on, and what it failed of is the later one",
        _went_on, _went_on_why),
    Row("survived", "finished after it", "the JobSet completed successfully after the line and nothing failed "
        f"before its wind-down (what completion stops, within {WIND_DOWN_NS // NS} s of it): the run did its work",
        _finished, _finished_why),
    Row("survived", "exited cleanly after it", "the container that printed the line later ended with exit code 0 "
        "(its Pod status: terminated, reason Completed) and nothing failed after the line: the program finished its "
        "work", lambda line: line.exited_clean and line.next_damage is None,
        lambda line: "the program that printed it exited 0 afterwards (its container terminated: Completed) and "
                     "nothing failed after it"),
    Row("survived", "ran on after it", f"at least {RAN_ON_LINES} progress lines over {RAN_ON_NS // NS} s or "
        "more came after the line, before anything failed, when the stepping program printed it; over "
        f"{RAN_ON_ELSEWHERE_NS // NS // 60} min or more when another component did (a node, a console, another "
        "host), whose condition the program may take minutes to reach: the program was not stopped by it",
        _ran_on, _ran_on_why),
    Row("linked", "otherwise", "something failed after the line with too little progress in between, progress "
        "stopped after it, or the data ends before the run is seen going on: the absence of a later failure is not "
        "evidence that the run survived (the diagnosis says when it is too soon to tell)", lambda line: True),
)


def judge(line: Line) -> tuple[str, str, str]:
    """(linked | survived, the row's name, why it is not the cause when survived)."""
    row = next(r for r in ROWS if r.holds(line))
    return row.verdict, row.name, row.why(line)


def table() -> str:
    """The rows as a Markdown table, for the generated docs."""
    out = ["| # | impact | row | holds when |", "|---|---|---|---|"]
    out += [f"| {i} | `{r.verdict}` | {r.name} | {r.when} |" for i, r in enumerate(ROWS, 1)]
    return "\n".join(out)
