"""The one pipeline behind every entry point (replay, live, Log Analytics): the workload's evidence read from a
source and analysed, with everything the caller knows about the workload (its place too) in the Scope before
classification, and the caller's checks and notes applied in one place."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from .judging.engine import Analysis, analyse
from .reading.sources.base import Source
from .understanding.queries import Scope


def run(source: Source, scope: Scope, objects: list[dict], *, now_ns: int | None, digest: bool = False,
        nothing_read: Callable[[], Exception] | None = None, gaps: tuple[str, ...] = ()) -> Analysis:
    """Analyse the workload `scope` names from `source` (whose `objects` were read already).

    nothing_read: the error to raise when neither a log entry nor an object was read (a verdict from no evidence
    would read as healthy); gaps: the caller's own data gaps, reported after the run's."""
    analysis = analyse(source, scope, objects, now_ns=now_ns, digest=digest)
    if nothing_read is not None and not objects and not source.stats.entries_read:
        raise nothing_read()
    if gaps:
        analysis.stats = replace(analysis.stats, gaps=analysis.stats.gaps + gaps)
    return analysis
