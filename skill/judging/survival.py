"""Whether the run was seen going on after a failure line (issue 36): the impact table applied to each cause line,
the verdict's "too soon to tell" when the data ends right after its cause, and a weak failure line after the run's
last sign of life, which a healthy verdict may not ignore. Survival is shown, never assumed. Pure: no I/O."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..catalog import ABSENCE_CLASSES, UNKNOWN
from ..catalog.places import KILLED_FOR_MEMORY, SIDECAR
from ..understanding.death import KILLED, exited_zero, ignored_reports, in_ignored_report
from ..understanding.facts import GLOG
from ..understanding.model import Workload
from ..understanding.status import BACKOFF_RESET_NS, HELPER_NS, STALL_WINDOW_NS, back_after
from ..understanding.signals import Signal
from .fatal import secs, span
from .impact import CAUSE_LEAD_NS, RAN_ON_ELSEWHERE_NS, RAN_ON_LINES, RAN_ON_NS, Line, judge
from .ranking import Hypo

NS = 1_000_000_000
# The Pathways servers a run cannot live without (their containers in every launcher's layout: xpk, gcluster,
# PathwaysJob, pathwaysutils): their death ends the run whatever the client prints after it.
SERVERS = frozenset({"pathways-worker", "pathways-rm", "pathways-proxy"})
TOO_SOON_CONFIDENCE = 0.7  # a cause among the last lines of the data, with nothing after it: it may yet be survived


_VARIABLE = re.compile(r"0x[0-9a-fA-F]+|[0-9a-f]{8,}|\d+(?:\.\d+)?")


def wording(text: str) -> str:
    """A line's wording with its glog prefix, numbers, hex and ids masked: the same failure on its next occurrence."""
    return _VARIABLE.sub("#", GLOG.sub("", text.split("\n", 1)[0]))[:200].strip()


def _stream(s: Signal) -> tuple:
    r = s.record
    return (r.source, r.pod, r.container) if r.source == "container" else (r.source, r.node or r.obj, r.log)


def _exited_clean(model: Workload, s: Signal) -> bool:
    return exited_zero(model, s.record.pod, s.record.container)


def survival(model: Workload, causes: list[Signal], damage: tuple[int, ...],
             symptoms: Sequence[Signal] = ()) -> Callable[[Signal], str | None]:
    """A judge of cause lines: why the run survived one (the impact row's reason), or None when it is linked.

    Repetition is evidence (issue 41): a line whose wording the same stream printed before, that occurrence survived
    by the table and the program stepped between the two, is survived at its later occurrence too, unless a failure
    follows it: "too soon to tell" is for a kind of line the run has not yet been seen to survive."""
    # Only the client's step lines show the run advancing past a line: the executors' periodic launch reports come from
    # every host, and one that still reports says nothing of a collective that another host never joined.
    steps = tuple(sorted({s.ts for s in model.progress}))
    finished = model.completed_at()
    later = later_other(causes)
    stepping = {(s.record.pod, s.record.container) for s in model.progress}  # the programs whose steps are read

    def by_table(s: Signal) -> str | None:
        own = s.record.source == "container" and (s.record.pod, s.record.container) in stepping
        line = Line(s, steps, damage, finished, later.get(s.record.id), own,
                    s.record.source == "container" and in_ignored_report(s, reports), _exited_clean(model, s))
        verdict, _row, why = judge(line)
        return why if verdict == "survived" else None

    reports = ignored_reports(list(symptoms))
    seen: dict[tuple, list[Signal]] = {}
    for c in sorted(causes, key=lambda c: c.ts):
        seen.setdefault((_stream(c), wording(c.record.text)), []).append(c)

    def survived(s: Signal) -> str | None:
        why = by_table(s)
        if why is not None:
            return why
        if any(s.ts <= d <= s.ts + CAUSE_LEAD_NS for d in damage):
            return None  # something failed right after it: this occurrence may be the one that hurt
        same = seen.get((_stream(s), wording(s.record.text)), [])
        before = [p for p in same if p.ts < s.ts]
        stepped = [p for p in before if any(p.ts < t < s.ts for t in steps) and by_table(p) is not None]
        if not stepped:
            return None
        return (f"the run has stepped past the same line before: {len(before)} earlier occurrence"
                f"{'s' if len(before) != 1 else ''} of it (the first {span(s.ts - before[0].ts)} earlier), each "
                "followed by progress, so this one is no new failure")

    return survived


def deaths_survived(model: Workload, deaths: list[Signal], failures: Sequence[Signal] = ()) -> dict[str, str]:
    """Whose death matters (issue 41): a program's death (its fatal last words, or its container's end as the kubelet or
    the Pod object report it: killed for memory, exited, backed off before its restart) that the stepping program went on past is a helper's (a
    data-loader subprocess, a sidecar), not the run's: {the death's id: why}. The death of a Pathways
    server (worker, resource manager, proxy) is never judged here: the run cannot live without them. A death in the
    stepping program's own container needs the table's "ran on" (3 progress lines over 30 s: the stepping process is
    alive); a death in another container, that long of progress over the stall window (what it fed may run out), or
    over the kubelet's 10-minute back-off reset when that container is back (`status.back_after`: what it fed is fed again)."""
    steps = tuple(sorted({s.ts for s in model.progress}))
    stepping = {(s.record.pod, s.record.container) for s in model.progress}
    out: dict[str, str] = {}
    for d in deaths:
        r = d.record
        if not r.container or r.container in SERVERS or r.pod is None:
            continue
        own = (r.pod, r.container) in stepping
        if r.source != "container" and own:
            continue  # the stepping program's own container ended: a restart after it is a recovery, not survival
        first = min(d.times or [d.ts])  # an Event folded over many deaths: the first of them, the rest repeat it
        after = [t for t in steps if t > first]
        need = RAN_ON_NS if own else (BACKOFF_RESET_NS if back_after(model, [*deaths, *failures], r.pod, r.container, first)
                                      else RAN_ON_ELSEWHERE_NS)
        if len(after) >= RAN_ON_LINES and after[-1] - first >= need:
            who = "a process in the stepping program's container" if own else f"the {r.container} container"
            out[r.id] = (f"{who} died, and the stepping program went on past it: {len(after)} progress lines over "
                         f"{span(after[-1] - first)} after it, so it was not the run's death")
    _died_so_before(deaths, steps, out)
    # ... and what its container's failure set off (its exit, its restart, its back-off), around that death
    helpers = {(d.record.pod, d.record.container): (d.ts, out[d.record.id]) for d in deaths if d.record.id in out}
    # the node's reports of the same end (the kernel's kill, node-problem-detector's), which name no pod: on the
    # helper's node, within a minute of it
    nodes = {model.pods[p].node: at_why for (p, _), at_why in helpers.items() if p in model.pods and model.pods[p].node}
    for f in failures:
        at, why = helpers.get((f.record.pod, f.record.container), (None, ""))
        if at is not None and f.record.id not in out and any(at - HELPER_NS <= t <= at + HELPER_NS for t in f.times):
            out[f.record.id] = why
        elif f.record.pod is None and f.record.node in nodes and f.record.id not in out:
            at, why = nodes[f.record.node]
            if any(abs(t - at) <= NODE_REPORT_NS for t in f.times):
                out[f.record.id] = why
    return out


NODE_REPORT_NS = 60 * NS  # the kernel's kill and the kubelet's report of the container's end come within a minute


def _died_so_before(deaths: list[Signal], steps: tuple[int, ...], out: dict[str, str]) -> None:
    """Repetition is evidence for deaths too: a helper container's death told in the same words (numbers and ids
    masked) as an earlier death of that container the run survived, or reported by the kubelet or the Pod object (its
    back-off, its termination: no cause of their own), with steps between the two, is survived as well (a sidecar
    crash-looping beside a run that steps on: its latest death is no more the run's than the first)."""
    survived = [d for d in deaths if d.record.id in out]
    for d in sorted(deaths, key=lambda d: d.ts):
        r = d.record
        if r.id in out or not r.container or r.container in SERVERS:
            continue
        # the same words, or the kubelet's or the Pod object's report of the container's end, which says no cause
        told = r.source in ("event", "object")
        before = [p for p in survived if (p.record.pod, p.record.container) == (r.pod, r.container) and p.ts < d.ts
                  and (told or wording(p.record.text) == wording(r.text)) and any(p.ts < t < d.ts for t in steps)]
        if before:
            out[r.id] = (f"the {r.container} container died the same way before ({len(before)} time"
                         f"{'s' if len(before) != 1 else ''}, the first {span(d.ts - before[0].ts)} earlier) and the "
                         "stepping program went on past each: not the run's death")
            survived.append(d)


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


def is_sidecar(container: str | None) -> bool:
    """A colocated Python sidecar's container (colocated-python-sidecar, as every launcher names it)."""
    return "colocated" in (container or "") or "sidecar" in (container or "")


def death_class(death: Signal) -> str:
    """The class a helper's death would point to had it hurt the run: a colocated Python sidecar's is that class, a
    kernel's OOM kill host memory."""
    if death.pattern is KILLED:
        return KILLED_FOR_MEMORY
    return SIDECAR if is_sidecar(death.record.container) else UNKNOWN
