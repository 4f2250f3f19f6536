"""Public entry points: diagnose an export folder, or a live workload through injected sources."""

from __future__ import annotations

from pathlib import Path

from .diagnosis import Diagnosis
from .judging.engine import Analysis, resolve_jobset
from .errors import InputError
from .pipeline import run
from .telling.explain import build
from .understanding.queries import Scope
from .reading.records import format_ns, parse_ts, time_arg
from .reading.sources.replay import ReplaySource


def diagnose_replay(folder: str | Path, *, jobset: str | None = None, at: str | None = None) -> Diagnosis:
    """Diagnose an exported incident folder; "now" is the end of the data unless `at` says otherwise."""
    return build(analyse_replay(folder, jobset=jobset, at=at), logging_requests=0)


def analyse_replay(folder: str | Path, *, jobset: str | None = None, at: str | None = None,
                   namespace: str | None = None, digest: bool = False) -> Analysis:
    """The analysis of an export folder, before it becomes a Diagnosis (the tools reuse it)."""
    source = ReplaySource(folder)
    objects = source.objects()
    inventory = source.inventory()
    if not objects and not source.stats.entries_read and not inventory.jobsets and not source.stats.last_ts:
        detail = "; ".join(source.stats.gaps[:3])
        raise InputError(f"{folder}: no usable log entries or Kubernetes objects" + (f" ({detail})" if detail else ""))
    name = resolve_jobset(source, objects, jobset, inventory)
    explicit = namespace
    namespace = inventory.namespaces.most_common(1)[0][0] if inventory.namespaces else None
    for o in objects:
        if o.get("kind") in ("JobSet", "Pod") and (o["metadata"].get("name") == name or
                                                    (o["metadata"].get("labels") or {}).get("jobset.sigs.k8s.io/jobset-name") == name):
            namespace = o["metadata"].get("namespace") or namespace
            break
    namespace = explicit or namespace
    now = time_arg("--at", at)
    last = source.stats.last_ts or _latest_object_ts(objects)
    _check_at(now, source.stats.first_ts, last)
    end = now or last
    start = source.stats.first_ts or end
    cluster, project, location = inventory.place(name)
    scope = Scope(jobset=name, start_ns=start, end_ns=end, namespace=namespace, cluster=cluster, project=project,
                  location=location)
    gaps: tuple[str, ...] = ()
    if now and last and now > last + AT_MARGIN_NS:
        gaps = (f"--at {format_ns(now)} is {(now - last) // NS // 60} min after the last entry ({format_ns(last)}): "
                "nothing after the export is known, so a stall judged as of --at assumes nothing happened in between",)
    return run(source, scope, objects, now_ns=end, digest=digest, gaps=gaps)


NS = 1_000_000_000
AT_MARGIN_NS = 60 * NS


def _check_at(now: int | None, first: int, last: int) -> None:
    """--at before the data starts leaves nothing to judge: an error, not a verdict on an empty window."""
    if now and first and now < first:
        raise InputError(f"--at {format_ns(now)} is before the data starts ({format_ns(first)}): nothing was logged "
                         f"by then; pick a time between {format_ns(first)} and {format_ns(last)}")


def _latest_object_ts(objects: list[dict]) -> int:
    best = 0
    for o in objects:
        for key in ("lastTimestamp", "eventTime"):
            best = max(best, parse_ts(o.get(key)))
        for c in (o.get("status") or {}).get("conditions") or []:
            best = max(best, parse_ts(c.get("lastTransitionTime")))
    return best
