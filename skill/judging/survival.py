"""Whether the run was seen going on after a failure line (issue 36): the impact table applied to each cause line,
the verdict's "too soon to tell" when the data ends right after its cause, and a weak failure line after the run's
last sign of life, which a healthy verdict may not ignore. Survival is shown, never assumed. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Callable

from ..catalog import ABSENCE_CLASSES
from ..understanding.facts import GLOG
from ..understanding.model import Workload
from ..understanding.status import STALL_WINDOW_NS
from ..understanding.signals import Signal
from .fatal import secs
from .impact import CAUSE_LEAD_NS, Line, judge
from .ranking import Hypo

NS = 1_000_000_000
TOO_SOON_CONFIDENCE = 0.7  # a cause among the last lines of the data, with nothing after it: it may yet be survived


def survival(model: Workload, causes: list[Signal], damage: tuple[int, ...]) -> Callable[[Signal], str | None]:
    """A judge of cause lines: why the run survived one (the impact row's reason), or None when it is linked."""
    # Only the client's step lines show the run advancing past a line: the executors' periodic launch reports come from
    # every host, and one that still reports says nothing of a collective that another host never joined.
    steps = tuple(sorted({s.ts for s in model.progress}))
    done = model.condition("Completed") if model.terminal_state != "Failed" else None
    finished = int(done["ts"]) if done and done.get("ts") else None
    later = later_other(causes)
    stepping = {(s.record.pod, s.record.container) for s in model.progress}  # the programs whose steps are read

    def survived(s: Signal) -> str | None:
        own = s.record.source == "container" and (s.record.pod, s.record.container) in stepping
        verdict, _row, why = judge(Line(s, steps, damage, finished, later.get(s.record.id), own))
        return why if verdict == "survived" else None

    return survived


def later_other(causes: list[Signal]) -> dict[str, int]:
    """For each container cause line, when the same program (pod and container) next printed another failure line at
    least as strong (another exception, not the same line again): the one it may have gone on past to fail of."""
    streams: dict[tuple[str | None, str | None], list[Signal]] = {}
    for s in causes:
        if s.record.source == "container" and not s.pattern.support:
            streams.setdefault((s.record.pod, s.record.container), []).append(s)
    out: dict[str, int] = {}
    for sigs in streams.values():
        sigs.sort(key=lambda s: s.ts)
        for i, s in enumerate(sigs):
            nxt = next((o.ts for o in sigs[i + 1:] if o.record.text != s.record.text and o.ts > s.ts
                        and o.weight >= s.weight), None)
            if nxt is not None:
                out[s.record.id] = nxt
    return out




def after_last_life(model: Workload, causes: list[Signal], act: list[int], keep: Callable[[Signal], bool],
                    score: Callable[[list[Signal]], float]) -> tuple[Hypo, str] | None:
    """Health needs the run seen going on after its last failure-looking line: a catalog line below a candidate's
    weight (a failed connection attempt, a retry) that came after the run's last sign of life (a step, a program
    launch, a start-up milestone) and that counts (`keep`: not a resolved blip, not survived) is what the data ends on. Its class is the
    verdict at its own low score, and too soon to tell; None when there is no such line."""
    stepped = act[-1] if act else 0
    milestones = [m for sigs in model.milestones.values() for m in sigs]
    anywhere = max((m.ts for m in milestones), default=0)
    own: dict[tuple[str | None, str | None], int] = {}
    for m in milestones:
        if m.record.source == "container":
            key = (m.record.pod, m.record.container)
            own[key] = max(own.get(key, 0), m.ts)

    def life(s: Signal) -> int:
        """The run's last sign of life before the line could show it survived: a step or program launch, and the
        start-up milestones of the program that printed it (of any component, for a line not from a program)."""
        mine = own.get((s.record.pod, s.record.container), 0) if s.record.source == "container" else anywhere
        return max(stepped, mine)

    late: dict[str, list[Signal]] = {}
    for s in causes:
        if s.ts <= life(s) or not keep(s):
            continue
        late.setdefault(s.target, []).append(s)
    if not late:
        return None
    cid, sigs = max(late.items(), key=lambda kv: (score(kv[1]), -kv[1][0].ts))
    sigs.sort(key=lambda s: s.ts)
    gap = model.now - sigs[-1].ts
    h = Hypo(cid, min(score(sigs), TOO_SOON_CONFIDENCE), sigs, sigs[0].ts,
             f"'{GLOG.sub('', sigs[-1].record.text)[:120].strip()}' after the run's last sign of life")
    return h, (f"Too soon to tell whether the run recovers: its last sign of life came before this line, the data ends "
               f"{secs(gap)} after it, and nothing after it shows the run failing or going on; export a later window, "
               "or read the pods' status, to see which.")


def too_soon_after(model: Workload, root: Hypo, damage: tuple[int, ...]) -> str | None:
    """The root's lines are among the last of the data: nothing failed with or after them, and the data ends less than
    the stall window after them, so nothing shows whether the run goes on (the line is still a cause: survival is
    never assumed). None when something failed with it, or the data runs on long enough to see the run not go on."""
    if root.failure_class in ABSENCE_CLASSES or not (lines := root.strong_signals):
        return None
    first, last = min(s.ts for s in lines), max(s.ts for s in lines)
    if any(d >= first - CAUSE_LEAD_NS for d in damage):
        return None
    gap = model.now - last
    if gap >= STALL_WINDOW_NS:
        return None
    return (f"Too soon to tell whether the run recovers: the data ends {secs(gap)} after its last line of this cause, "
            "and nothing after it shows the run failing or going on (no later failure, progress, or completion); "
            "export a later window, or read the pods' status, to see which.")
