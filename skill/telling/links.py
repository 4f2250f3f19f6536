"""A cited record as the contract's evidence item, with the Logs Explorer link whose query finds exactly that entry."""

from __future__ import annotations

from typing import cast
from urllib.parse import quote as urlquote

from ..diagnosis import Evidence, EvidenceSource
from ..reading.query import quote
from ..reading.records import Record, format_ns
from .excerpt import excerpt

LINK_MARGIN_NS = 10 * 60 * 1_000_000_000


def logs_explorer_link(r: Record, project: str | None) -> str | None:
    """A Logs Explorer URL whose query finds exactly this entry, with the cursor on its time; None for object facts.

    The form is the one the console produces when you copy a link to a query:
    https://console.cloud.google.com/logs/query;query=...;cursorTimestamp=...;startTime=...;endTime=...?project=P
    An Event exported by kubectl is cited by its uid, which the events log keeps as jsonPayload.metadata.uid.
    """
    if not project or r.source in ("object", "metric"):
        return None
    if r.source == "event" and r.log == "events":
        query = f'logName="projects/{project}/logs/events"\n(insertId={quote(r.id)} OR jsonPayload.metadata.uid={quote(r.id)})'
    else:
        query = f"insertId={quote(r.id)}"
    parts = [f"query={urlquote(query, safe='')}"]
    if r.ts:
        parts += [f"cursorTimestamp={r.time}", f"startTime={format_ns(r.ts - LINK_MARGIN_NS)}",
                  f"endTime={format_ns(r.ts + LINK_MARGIN_NS)}"]
    return f"https://console.cloud.google.com/logs/query;{';'.join(parts)}?project={urlquote(project, safe='')}"


def query_link(filter_: str, project: str | None) -> str | None:
    """A Logs Explorer URL that runs a whole Logging filter (the console's own link form); None without a project."""
    if not project:
        return None
    return (f"https://console.cloud.google.com/logs/query;query={urlquote(filter_, safe='')}"
            f"?project={urlquote(project, safe='')}")


def evidence_item(r: Record, project: str | None = None) -> Evidence:
    """The record as cited evidence: its id, time, source, resource, a redacted excerpt and its Logs Explorer link."""
    return Evidence(id=r.id, timestamp=r.time or None, source=cast(EvidenceSource, r.source), resource=r.resource, excerpt=excerpt(r.text),
                    link=logs_explorer_link(r, project or r.project))
