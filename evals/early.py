"""The early-export eval (issue 36, item 4): every failing incident exported again soon after its cause.

    pathways-workload eval --early-export [fixtures/] [--cases N | --only GLOB] [--out DIR]

An on-call engineer exports what is there when the alert fires, and live mode ends at "now": the failure is among the
last lines of the data, the Pod and JobSet snapshots are often missing. Each failing case is cut at its first cause
line (the earliest line of its answer key's evidence) + 60 s and + 300 s: the logs and events up to then are kept, the
Kubernetes object snapshots (Pods, the JobSet, Nodes) are dropped. The copy is diagnosed and scored:

- `healthy`: the copy was called healthy (status `healthy` or class `no_failure_detected`). Target: none. A failure
  line among the last lines of the data is not a run that went on (docs/impact.md).
- `class kept`: the copy keeps the case's class (its first cause line is in the cut by construction).

Cases out of scope, each with its reason: healthy cases (nothing to cut at), classes decided by an absence (a stall or
slices never ready: the absence cannot be seen before its wait has passed, so an early export shows none), and cases
whose key evidence is only in the dropped snapshots (nothing in the cut names the failure).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pathways_workload.skill.catalog import ABSENCE_CLASSES, HEALTHY

from .agents import Agent, RulesAgent
from .harness import Case
from .robustness import select  # noqa: F401 - the same choice of cases as --robustness and --noise
from .transforms import Copy, _ns, _ts, load, save

NS = 1_000_000_000
OFFSETS = (60, 300)  # seconds after the first cause line at which the data is cut


@dataclass
class Outcome:
    case: str
    expected: str  # the case's class
    offset: int  # seconds after the first cause line
    got: str | None = None  # the copy's class (None: skipped or an error)
    status: str | None = None
    skipped: str | None = None  # why the case is out of scope
    error: str | None = None

    @property
    def healthy(self) -> bool:
        return self.got == HEALTHY or self.status == "healthy"

    @property
    def kept(self) -> bool:
        return self.got == self.expected


def _event_times(ev: dict) -> tuple[int, int] | None:
    """(first, last) occurrence of an Event, from whichever of its time fields are set."""
    series = ev.get("series") or {}
    first = ev.get("firstTimestamp") or ev.get("eventTime") or (ev.get("metadata") or {}).get("creationTimestamp")
    last = ev.get("lastTimestamp") or series.get("lastObservedTime") or first
    if not first:
        return None
    try:
        return _ns(str(first)), _ns(str(last))
    except ValueError:
        return None


def _items(doc: object) -> list[dict]:
    """A Kubernetes list's items (or a bare array's elements)."""
    items = doc.get("items") if isinstance(doc, dict) else doc
    return items if isinstance(items, list) else []


def _is_event_list(doc: object) -> bool:
    items = doc.get("items") if isinstance(doc, dict) else doc
    return isinstance(items, list) and bool(items) and all(isinstance(i, dict) and i.get("kind", "Event") == "Event"
                                                           and ("reason" in i or "involvedObject" in i) for i in items)


def first_cause_ns(c: Copy) -> int | None:
    """When the first line of the answer key's evidence was logged (a log entry's insertId or an Event's uid)."""
    keys = {str(k) for k in (c.expected.get("evidence") or []) if isinstance(k, str)}
    ts = [_ns(str(e["timestamp"])) for e in c.logs if e.get("insertId") in keys and e.get("timestamp")]
    for doc in c.docs.values():
        if _is_event_list(doc):
            for ev in _items(doc):
                if (ev.get("metadata") or {}).get("uid") in keys and (t := _event_times(ev)):
                    ts.append(t[0])
    return min(ts) if ts else None


def jobset_name(c: Copy) -> str | None:
    """The JobSet the case is about, from its JobSet object (before the snapshots are dropped)."""
    for doc in c.docs.values():
        for obj in (doc.get("items") if isinstance(doc, dict) and "items" in doc else [doc]) or []:
            if isinstance(obj, dict) and obj.get("kind") == "JobSet":
                return (obj.get("metadata") or {}).get("name")
    return None


def cut(c: Copy, at_ns: int) -> None:
    """Keep the logs and events up to `at_ns` and drop every object snapshot, in place. An Event whose occurrences run
    past the cut keeps those before it (its count scaled by time, its last timestamp the cut)."""
    c.logs = [e for e in c.logs if e.get("timestamp") and _ns(str(e["timestamp"])) <= at_ns]
    for name, doc in list(c.docs.items()):
        if not _is_event_list(doc):
            del c.docs[name]
            continue
        kept = []
        for ev in _items(doc):
            t = _event_times(ev)
            if t is None or t[0] > at_ns:
                continue
            if t[1] > at_ns:
                count = int(ev.get("count") or 1)
                share = (at_ns - t[0]) / (t[1] - t[0]) if t[1] > t[0] else 1.0
                ev = {**ev, "count": max(1, round(count * share)),
                      "lastTimestamp": _ts(at_ns) if ev.get("lastTimestamp") else ev.get("lastTimestamp")}
            kept.append(ev)
        if isinstance(doc, dict):
            doc["items"] = kept
        else:
            c.docs[name] = kept


def scope(case: Case, c: Copy) -> str | None:
    """Why a case is out of the early-export eval's scope, or None."""
    cls = case.expected.failure_class
    if cls == HEALTHY:
        return "healthy: nothing to cut at"
    if cls in ABSENCE_CLASSES:
        return "decided by an absence: it cannot show before its wait has passed"
    if first_cause_ns(c) is None:
        return "the key evidence is only in the object snapshots"
    return None


def run_case(case: Case, agent: Agent, offset: int, tmp: Path) -> Outcome:
    out = Outcome(case.name, case.expected.failure_class, offset)
    c = load(case.path)
    if (why := scope(case, c)) is not None:
        out.skipped = why
        return out
    at = first_cause_ns(c)
    assert at is not None
    name = jobset_name(c)
    cut(c, at + offset * NS)
    folder = tmp / f"{offset}s" / case.name
    save(c, folder)
    # the engineer knows which JobSet alerted: named, as with --jobset, when the cut holds no object naming it
    run = agent.run(folder, jobset=name) if isinstance(agent, RulesAgent) else agent.run(folder)
    if run.diagnosis is None:
        out.error = run.error
    else:
        out.got, out.status = run.diagnosis.failure_class, run.diagnosis.status
    return out


def run_early(cases: list[Case], agent: Agent, offsets: tuple[int, ...] = OFFSETS) -> dict:
    with tempfile.TemporaryDirectory(prefix="pw-early-") as tmp:
        outcomes = [run_case(case, agent, off, Path(tmp)) for off in offsets for case in cases]
    return summarise(agent.name, outcomes, offsets)


def summarise(agent: str, outcomes: list[Outcome], offsets: tuple[int, ...]) -> dict:
    scored = [o for o in outcomes if o.skipped is None]
    by_offset = {}
    for off in offsets:
        mine = [o for o in scored if o.offset == off]
        classes: dict[str, dict] = {}
        for o in mine:
            row = classes.setdefault(o.expected, {"cases": 0, "healthy": 0, "class_kept": 0, "errors": 0})
            row["cases"] += 1
            row["healthy"] += o.healthy
            row["class_kept"] += o.kept
            row["errors"] += o.error is not None
        by_offset[str(off)] = {
            "cases": len(mine), "healthy": sum(o.healthy for o in mine), "class_kept": sum(o.kept for o in mine),
            "errors": sum(o.error is not None for o in mine), "classes": dict(sorted(classes.items())),
            "called_healthy": [o.case for o in mine if o.healthy],
            "class_changed": [{"case": o.case, "expected": o.expected, "got": o.got, "status": o.status}
                              for o in mine if not o.kept and o.error is None]}
    skipped: dict[str, list[str]] = {}
    for o in outcomes:
        if o.skipped and o.offset == offsets[0]:
            skipped.setdefault(o.skipped, []).append(o.case)
    gate = [f"+{off} s: {r['healthy']} failing case(s) called healthy" for off, r in by_offset.items() if r["healthy"]]
    gate += [f"+{off} s: {r['errors']} error(s)" for off, r in by_offset.items() if r["errors"]]
    return {"agent": agent, "offsets": list(offsets), "by_offset": by_offset, "skipped": skipped, "gate": gate}


def _cases(n: int) -> str:
    return f"{n} case{'' if n == 1 else 's'}"


def table(s: dict) -> str:
    out = []
    for off, r in s["by_offset"].items():
        out.append(f"early export, cut at the first cause line + {off} s (snapshots dropped): {r['cases']} cases, "
                   f"called healthy {r['healthy']}, class kept {r['class_kept']}/{r['cases']}, errors {r['errors']}")
        for name in r["called_healthy"]:
            out.append(f"  healthy: {name}")
    for why, names in s["skipped"].items():
        out.append(f"out of scope ({why}): {_cases(len(names))}")
    out.append("gate: " + ("; ".join(s["gate"]) if s["gate"] else "passed"))
    return "\n".join(out) + "\n"


def markdown(s: dict) -> str:
    offs = list(s["by_offset"])
    out = ["# Early-export eval", "",
           "Every failing case cut at its first cause line + N s, logs and events only (`pathways-workload eval "
           "--early-export`).", "",
           "| class | " + " | ".join(f"+{o} s healthy | +{o} s class kept" for o in offs) + " |",
           "|---|" + "---|---|" * len(offs)]
    classes = sorted({c for r in s["by_offset"].values() for c in r["classes"]})
    for cls in classes:
        cells = []
        for o in offs:
            row = s["by_offset"][o]["classes"].get(cls)
            cells += [f"{row['healthy']}/{row['cases']}", f"{row['class_kept']}/{row['cases']}"] if row else ["", ""]
        out.append(f"| {cls} | " + " | ".join(cells) + " |")
    tot = []
    for o in offs:
        r = s["by_offset"][o]
        tot += [f"**{r['healthy']}/{r['cases']}**", f"**{r['class_kept']}/{r['cases']}**"]
    out.append("| all | " + " | ".join(tot) + " |")
    out.append("")
    for why, names in s["skipped"].items():
        out.append(f"- out of scope ({why}): {_cases(len(names))}")
    return "\n".join(out) + "\n"


def as_json(s: dict) -> str:
    return json.dumps(s, indent=2) + "\n"


RENDERERS = {"table": table, "markdown": markdown, "json": as_json}
