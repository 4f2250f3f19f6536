"""The run's fate (issue 41), as an SRE tells it: recovered, waiting, crashing, failed, stalled, running or completed,
read from the run's lives (skill.understanding.lives) and the status row that decided. The status keeps the
contract's five values; the fate says what happened to the run and when, with the attempts behind it. Pure: no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..reading.records import Record, format_ns
from ..understanding.death import exited_zero
from ..understanding.lives import Life, Lives, relapsed_past, step_number
from ..understanding.status import EXITED, Run, before_first_step, pending_pods, recovered_since, waiting_since
from .fatal import span as _span

NS = 1_000_000_000


@dataclass
class Fate:
    state: str
    sentence: str = ""  # one sentence for the summary; "" when the status says it all
    restarts: int = 0
    attempts: list[Life] = field(default_factory=list)
    recovered_at: int | None = None
    waiting_since: int | None = None
    downtime_ns: int | None = None  # from the last step before the failure to the first step after it
    steps_redone: int | None = None  # steps the new attempt repeated (it resumed from an earlier checkpoint)
    work_lost_ns: int | None = None  # the downtime plus the redone steps at the run's step interval
    marks: list[Record] = field(default_factory=list)  # what shows the restarts, the recovery or the wait


def _hm(ns: int) -> str:
    return format_ns(ns)[11:16] if ns else "?"


def _restarts(n: int) -> str:
    return f"{n} restart{'s' if n != 1 else ''}"


def _per_step(life: Life) -> int | None:
    """How long one step takes in `life`, from its numbered progress lines (a loop may print every Nth step)."""
    pairs = [(s.ts, n) for s in life.steps if (n := step_number(s)) is not None]
    rates = sorted((t2 - t1) // (n2 - n1) for (t1, n1), (t2, n2) in zip(pairs, pairs[1:]) if n2 > n1 and t2 > t1)
    return rates[len(rates) // 2] if rates else None


def _recovered(run: Run, lv: Lives, since: int, failed_at: int) -> Fate:
    before = [s for a in lv.attempts for s in a.steps if s.ts < since]
    before = [s for s in before if s.ts <= failed_at] or before
    after = [s for s in lv.last.steps if s.ts >= since]
    f = Fate("recovered", restarts=lv.restarts, attempts=lv.attempts, recovered_at=since)
    last_before = before[-1] if before else None
    first_after = after[0]
    if last_before is not None:
        f.downtime_ns = first_after.ts - last_before.ts
        a, b = step_number(last_before), step_number(first_after)
        if a is not None and b is not None and b <= a:
            f.steps_redone = a - b
        f.work_lost_ns = f.downtime_ns + (f.steps_redone or 0) * (_per_step(lv.last) or 0)
    step = step_number(first_after)
    lost = ""
    if f.work_lost_ns is not None:
        parts = [f"{_span(f.downtime_ns or 0)} without steps"]
        if f.steps_redone:
            parts.append(f"{f.steps_redone} steps redone")
        lost = f"; about {_span(f.work_lost_ns)} of work lost ({', '.join(parts)})"
    restarts = f"after {_restarts(lv.restarts)}" if lv.restarts else "after its container restarted"
    f.sentence = (f"The run recovered: {restarts} it stepped again from {_hm(since)}"
                  f"{f' (step {step})' if step is not None else ''} and has stepped steadily for "
                  f"{_span(run.model.now - since)} to the end of the data{lost}.")
    f.marks = [s.record for s in lv.restart_marks[-1:]] + [first_after.record]
    return f


def _waiting(run: Run, lv: Lives, since: int) -> Fate:
    pods = sorted(p.name for p in pending_pods(run.model) if not p.ran)
    refused = [s for s in run.refusals if max(s.times or [s.ts]) >= since]
    what = refused[-1].record.text.split("\n")[0][:140] if refused else ""
    after = f"since the restart at {_hm(lv.timed_restarts[-1])} " if lv.timed_restarts else "since the failure "
    f = Fate("waiting", restarts=lv.restarts, attempts=lv.attempts, waiting_since=since)
    f.sentence = (f"The run is waiting for a place, not crash-looping: {after}{len(pods)} replacement pod"
                  f"{'s' if len(pods) != 1 else ''} ({', '.join(pods[:3])}{', ...' if len(pods) > 3 else ''}) "
                  f"{'have' if len(pods) != 1 else 'has'} been Pending for {_span(run.model.now - since)} while "
                  f"{'the scheduler or autoscaler refuses them' if len(pods) != 1 else 'the scheduler or autoscaler refuses it'}"
                  f"{f' (latest: {what!r})' if what else ''}; it resumes when capacity is found.")
    f.marks = list({s.record.id: s.record for s in refused[:1] + refused[-1:]}.values())
    return f


def _program_finished(run: Run) -> bool:
    """The program that stepped has ended with exit code 0, by its Pod status (its container terminated, not
    restarted): its run is complete though the JobSet may not be marked Completed yet (its servers still run)."""
    m = run.model
    stepping = {(s.record.pod, s.record.container) for s in m.progress if s.record.pod and s.record.container}
    known = [(p, c) for p, c in stepping if p in m.pods]
    return bool(known) and all(exited_zero(m, p, c) for p, c in known)


def _plain(state: str, lv: Lives) -> Fate:
    return Fate(state, restarts=lv.restarts, attempts=lv.attempts)


def _recovering(run: Run, lv: Lives, outside: bool) -> Fate | None:
    """The last attempt steps again since its last failure, too briefly to call the run recovered; `outside`: the
    cause was the machine's fault (status healthy), else the program's own and it may strike again (crashing)."""
    last_damage = run.damage[-1] if run.damage else 0
    stepping = [s for s in lv.last.steps if s.ts > last_damage]
    if not stepping:
        return None
    why = ("what ended the earlier attempt was the machine's fault, not the program's" if outside else
           "the program's own failure may strike again")
    return Fate("recovering", sentence=(
        f"The last attempt has stepped again since {_hm(stepping[0].ts)} ({len(stepping)} progress line"
        f"{'s' if len(stepping) != 1 else ''} over {_span(stepping[-1].ts - stepping[0].ts)}), too short to call the "
        f"run recovered after {_restarts(lv.restarts) if lv.restarts else 'its container restarted'}; {why}."),
        restarts=lv.restarts, attempts=lv.attempts)


def fate_of(run: Run, status: str, row: str, root_first_ts: int) -> Fate:
    """The run's fate at the end of the data, from its lives and the status row that decided."""
    lv = run.lives
    if row == "recovered after a restart" and (since := recovered_since(run)) is not None:
        return _recovered(run, lv, since, root_first_ts or since)
    if row == "stepping again after a restart" and (f := _recovering(run, lv, outside=True)) is not None:
        return f
    if row == "waiting for a place after a restart" and (since := waiting_since(run)) is not None:
        return _waiting(run, lv, since)
    if status == "failed":
        return _plain("failed", lv)
    if row == "JobSet completed":
        return _plain("completed", lv)
    if status == "healthy":
        if _program_finished(run):
            return _plain("completed", lv)  # its program exited 0 after stepping; the JobSet's own mark may still come
        return _plain("starting" if row.startswith("starting") or before_first_step(run.model) else "running", lv)
    if status == "degraded":
        return _plain("degraded", lv)
    if status == "crashing":
        if lv.restarts and not relapsed_past(lv):  # it died past here before: still crashing
            if (f := _recovering(run, lv, outside=False)) is not None:
                return f
        return _plain("crashing", lv)
    waits = any(not p.ran for p in pending_pods(run.model))
    if waits and row in ("replacement waits", "unschedulable since the last restart", "pending, or decided by absence"):
        # a restart, or a program's end before: the pods wait to come back (the scheduler's refusals are the wait)
        came_back = bool(lv.restarts) or any(s.target in EXITED for s in run.symptoms)
        if came_back and (since := waiting_since(run)) is not None:
            return _waiting(run, lv, since)
        if came_back:
            return _plain("waiting", lv)
    return _plain("stalled", lv)  # pending with no failure or restart before: not yet placed, not waiting to come back
