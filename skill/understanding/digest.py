"""The log digest an agent reads: similar lines grouped into templates, evidence verbatim, bounded in tokens.

A template is a line with its variable parts masked (times, numbers, hex, uuids, IPs, node and pod names), so
256 hosts printing the same heartbeat timeout are one group with a count, the first and last time and a
sample of the hosts. Groups that carry a catalog signal come first (causes, then symptoms, then milestones),
then the rest by volume, until the token budget is spent; what did not fit is counted, never silently dropped.

Tokens are estimated as ceil(UTF-8 bytes / 3): log text and JSON (hex, ids, punctuation) run at about 3-4
bytes a token in current tokenizers, so the estimate errs on the large side and the 8,000 budget holds.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ..reading.records import Record, format_ns
from ..redact import redact
from .signals import Signal

SCHEMA = "pathways-workload.digest/v1"
MAX_TOKENS = 8000
TEXT_MAX = 600  # characters of one example or evidence line
HOST_SAMPLE = 3
HOST_CAP = 100_000  # distinct hosts tracked per group (far beyond any fleet); bounds memory on hostile input
WRAPPER_TOKENS = 100  # the untrusted-data frame skill.ask puts around a tool result
RANK = {"cause": 0, "symptom": 1, "milestone": 2}

_MASKS = [
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<uuid>"),
    (re.compile(r"\bgke-[a-z0-9-]+\b"), "<node>"),
    (re.compile(r"\b[a-z][a-z0-9.-]*-(?=[a-z0-9]{5}\b)(?=[a-z]*[0-9])(?=[0-9]*[a-z])[a-z0-9]{5}\b"), "<pod>"),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"), "<ip>"),
    (re.compile(r"\b0x[0-9a-f]+\b", re.I), "<hex>"),
    (re.compile(r"\b(?:0x)?(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b"), "<hex>"),
    (re.compile(r"\d+(?:\.\d+)?"), "<n>"),
    (re.compile(r"[ \t]+"), " "),
]


def template(text: str) -> str:
    """text with its variable parts masked, first line only, so lines that differ only in them group together."""
    line = text.split("\n", 1)[0][:2000]
    for rx, repl in _MASKS:
        line = rx.sub(repl, line)
    return line.strip()


def estimate_tokens(text: str) -> int:
    """ceil(UTF-8 bytes / 3), a deliberate over-estimate of a current tokenizer's count for logs and JSON."""
    return -(-len(text.encode()) // 3)


@dataclass
class Group:
    """One template: how often, when, where, and one verbatim example."""

    key: tuple[str, str, str]
    count: int = 0
    first: int = 0
    last: int = 0
    example: Record | None = None
    signal: tuple[int, str] | None = None  # (rank, target) of the strongest signal seen on it
    hosts: set[str] = field(default_factory=set)

    def add(self, rec: Record, sigs: list[Signal]) -> None:
        self.count += 1
        if rec.ts and (not self.first or rec.ts < self.first):
            self.first = rec.ts
            self.example = rec
        self.example = self.example or rec
        self.last = max(self.last, rec.ts)
        where = rec.pod or rec.node or rec.obj
        if where and len(self.hosts) < HOST_CAP:
            self.hosts.add(where)
        for s in sigs:
            best = (RANK.get(s.kind, 3), s.target)
            if self.signal is None or best < self.signal:
                self.signal = best

    def view(self) -> dict:
        ex = self.example
        out = {"template": self.key[2][:TEXT_MAX], "count": self.count, "source": self.key[0], "log": self.key[1],
               "first": format_ns(self.first), "last": format_ns(self.last)}
        if self.signal:
            out["signal"] = self.signal[1]
        if self.hosts:
            out["hosts"] = {"distinct": len(self.hosts), "sample": sorted(self.hosts)[:HOST_SAMPLE]}
        if ex is not None:
            out["example"] = {"id": ex.id, "text": redact(ex.text)[:TEXT_MAX]}
        return out


class Digest:
    """Accumulates every record the engine took; memory grows with distinct templates, not with entries."""

    def __init__(self) -> None:
        self.groups: dict[tuple[str, str, str], Group] = {}
        self.records = 0

    def add(self, rec: Record, sigs: list[Signal]) -> None:
        self.records += 1
        key = (rec.source, rec.container or rec.log, template(rec.text))
        g = self.groups.get(key)
        if g is None:
            g = self.groups[key] = Group(key)
        g.add(rec, sigs)

    def ranked(self) -> list[Group]:
        """Signal groups first (cause, symptom, milestone), then by volume, then by time."""
        return sorted(self.groups.values(), key=lambda g: (g.signal[0] if g.signal else 9, -g.count, g.first))

    def render(self, *, entries_read: int, evidence: list[Record], verdict: dict | None = None,
               max_tokens: int = MAX_TOKENS, series: dict | None = None) -> dict:
        """The digest as JSON-ready data: at most max_tokens (estimate_tokens) as the model reads it; `series`: what
        the workload's time series prove, in brief (skill.understanding.metrics.SeriesFacts.summary)."""
        doc: dict = {"schema": SCHEMA, "entries_read": entries_read, "records_grouped": self.records,
                     "groups_total": len(self.groups)}
        if verdict:
            doc["verdict"] = verdict
        if series:
            doc["series"] = series
        doc["evidence"] = [{"id": r.id, "timestamp": r.time, "resource": r.resource, "text": redact(r.text)[:TEXT_MAX]}
                           for r in evidence]
        doc["groups"] = []
        doc["omitted"] = {"groups": 0, "records": 0}
        doc["tokens_estimate"] = 0
        budget = max_tokens - WRAPPER_TOKENS
        used = estimate_tokens(_dump(doc)) + 20  # the counts below grow by a few digits at most
        ranked = self.ranked()
        for g in ranked:
            view = g.view()
            cost = estimate_tokens(_dump(view)) + 1
            if used + cost > budget:
                break
            doc["groups"].append(view)
            used += cost
        while True:  # per-group costs miss the nesting indentation; the whole document is the measure
            kept = len(doc["groups"])
            rest = ranked[kept:]
            doc["omitted"] = {"groups": len(rest), "records": sum(r.count for r in rest)}
            doc["tokens_estimate"] = as_seeded(doc)
            if doc["tokens_estimate"] <= max_tokens or not kept:
                return doc
            doc["groups"].pop()


def as_seeded(doc: dict) -> int:
    """The digest's tokens as skill.ask seeds it: under "log_digest" in the diagnose result, in its frame."""
    return estimate_tokens(json.dumps({"log_digest": doc}, ensure_ascii=False, indent=1)) + WRAPPER_TOKENS


def _dump(doc: dict) -> str:
    # The layout skill.ask's render_tool_result gives the model (indent=1), so the estimate is of what it reads.
    return json.dumps(doc, ensure_ascii=False, indent=1)


def digest_of(analysis, diagnosis=None, max_tokens: int = MAX_TOKENS) -> dict:
    """The digest of an Analysis (skill.judging.engine), its evidence taken from the diagnosis when one is given."""
    by_id = {s.record.id: s.record for s in analysis.causes + analysis.symptoms}
    by_id.update({s.record.id: s.record for sigs in analysis.model.milestones.values() for s in sigs})
    verdict = None
    ids: list[str] = []
    if diagnosis is not None:
        ids = [e.id for e in diagnosis.evidence]
        verdict = {"failure_class": diagnosis.failure_class, "status": diagnosis.status,
                   "confidence": diagnosis.confidence}
    else:
        ids = [s.record.id for s in analysis.verdict.root.strong_signals] if analysis.verdict.root else []
    evidence = [by_id[i] for i in dict.fromkeys(ids) if i in by_id]
    if analysis.digest is None:
        raise ValueError("the analysis was run without a digest: call analyse(..., digest=True)")
    facts = analysis.model.series
    return analysis.digest.render(entries_read=analysis.stats.entries_read, evidence=evidence, verdict=verdict,
                                  max_tokens=max_tokens, series=facts.summary(analysis.model.now) if facts else None)
