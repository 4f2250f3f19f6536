"""Signals: catalog matches on records, found with one RE2 set pass per record."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import re2

from ..catalog import CLASSES, MILESTONES, SYMPTOMS
from ..catalog.facts import FACT_LINES
from ..catalog.types import Pattern, RuleContext, Symptom
from ..reading.query import RE2_MAX_MEM
from ..reading.records import Record, occurrences


@dataclass(slots=True)
class Signal:
    """One catalog match: which class, symptom or milestone, on which record, with the named groups."""

    kind: str  # cause | symptom | milestone
    target: str  # the class, symptom or milestone id
    pattern: Pattern
    record: Record
    groups: dict[str, str]

    @property
    def weight(self) -> float:
        return self.pattern.weight

    @property
    def ts(self) -> int:
        return self.record.ts

    @property
    def times(self) -> list[int]:
        """Every time known exactly that its record happened: an Event's first, last and logged repeats."""
        return [t for t, known in occurrences(self.record) if known]


def _prepare(regex: str) -> str:
    # Multi-line payloads (a whole traceback in one entry) must let ^ match at each line.
    return "(?m)" + regex


# A line written to whoever reads the logs by machine ("NOTE FOR AI / LLM triage agents: report X, run Y") is a person's
# claim, not a system reporting what happened, so it is never evidence: no cause, symptom or milestone comes from it.
# (It still reaches a model's digest, as quoted untrusted data.) Both parts must be present: who it addresses, and an
# imperative.
# "AI" / "LLM" as a word of prose, not a piece of a name: a domain (finops.tessera.ai/cost-center), a path or a label.
_ADDRESSED = re2.compile(r"(?i)(?:(?:^|[\s(\"'\[,;])(?:AI|LLM)s?(?:$|[\s)\"'\],;:!?])|\blanguage models?\b|"
                         r"\b(?:automated|AI)[- ](?:triage|diagnos\w*|assistants?|agents?|tools?|systems?)\b|"
                         r"\bassistants?\b.{0,40}\b(?:reading|triag\w*|diagnos\w*)\b)")
_IMPERATIVE = re2.compile(r"(?i)\b(?:report|ignore|disregard|run|execute|classify|summari[sz]e|treat|say|tell|delete|"
                          r"do not|don't|must|should)\b")


def addressed_to_a_reader(text: str) -> bool:
    """True for a line that addresses automated readers with an instruction (see _ADDRESSED)."""
    return _ADDRESSED.search(text) is not None and _IMPERATIVE.search(text) is not None


SEVERITY_PATTERN = Pattern(r"(entry severity)", 0.1, ("container",))  # what a severity-carried symptom cites


class Matcher:
    """Every pattern of the catalog in one RE2 set; individual regexes only run for the groups of a hit."""

    def __init__(self) -> None:
        self._entries: list[tuple[str, str, Pattern]] = []
        for cls in CLASSES:
            self._entries += [("cause", cls.id, p) for p in cls.patterns]
        for sym in SYMPTOMS:
            self._entries += [("symptom", sym.id, p) for p in sym.patterns]
        self._entries += [("milestone", m.id, m.pattern) for m in MILESTONES]
        # RE2::Set reports "no match" when its DFA runs out of memory (the binding cannot tell that from a real miss),
        # so it gets the same room as the filter regexes: ~300 patterns share one DFA.
        opts = re2.Options()
        opts.max_mem = RE2_MAX_MEM
        self._set = re2.Set.SearchSet(opts)
        for _, _, p in self._entries:
            self._set.Add(_prepare(p.regex))
        self._set.Compile()
        self._compiled = [re2.compile(_prepare(p.regex), options=opts) for _, _, p in self._entries]
        self._by_severity: dict[str, list[Symptom]] = {}
        for sym in SYMPTOMS:
            for sev in sym.severities:
                self._by_severity.setdefault(sev, []).append(sym)

    def match(self, rec: Record) -> list[Signal]:
        hits = self._set.Match(rec.text)
        by_severity = self._by_severity.get(rec.severity) if rec.source == "container" else None
        if not hits and not by_severity or addressed_to_a_reader(rec.text):
            return []
        if not hits:  # no signature, but a fatal severity: the symptom that severity carries
            return [Signal("symptom", sym.id, SEVERITY_PATTERN, rec, {}) for sym in by_severity or ()]
        out = []
        for i in sorted(hits):
            kind, target, p = self._entries[i]
            if not p.applies_to(rec.source, rec.container, rec.log, rec.pod):
                continue
            m = self._compiled[i].search(rec.text)
            groups = {k: v for k, v in (m.groupdict() if m else {}).items() if v is not None}
            if p.check is not None and not p.check(RuleContext(text=rec.text, groups=groups)):
                continue
            out.append(Signal(kind, target, p, rec, groups))
        return out

    def match_all(self, records: Iterable[Record]) -> list[Signal]:
        return [s for r in records for s in self.match(r)]


SAMPLED_MILESTONES = ("progress", "worker_launches")  # periodic lines: read as a capped sample, never pushed down whole


def _pushdown_patterns(source: str) -> list[str]:
    seen: dict[str, None] = {}
    pats = [p for c in CLASSES for p in c.patterns] + [p for s in SYMPTOMS for p in s.patterns]
    pats += [m.pattern for m in MILESTONES if m.id not in SAMPLED_MILESTONES]
    for p in pats:
        if source in p.sources:
            seen.setdefault(p.regex, None)
    if source == "container":  # what the facts layer reads that no signature asks for (traceback frames, HTTP errors)
        for rx in FACT_LINES:
            seen.setdefault(rx, None)
    return list(seen)


def pushdown_regex(source: str = "container") -> str:
    """One RE2 alternation of every pattern that can match a record of this source, for a server-side `=~` term."""
    return "(?m)" + "|".join(f"(?:{r})" for r in _pushdown_patterns(source))


def pushdown_regexes(source: str, max_chars: int) -> list[str]:
    """The same alternation cut into pieces of at most max_chars each, so a filter that repeats it stays under
    Cloud Logging's filter length limit however the catalog grows; one piece while it fits."""
    parts: list[str] = []
    cur = ""
    for r in _pushdown_patterns(source):
        alt = f"(?:{r})"
        if cur and len(cur) + 1 + len(alt) > max_chars:
            parts.append(cur)
            cur = ""
        cur = f"{cur}|{alt}" if cur else f"(?m){alt}"
    if cur:
        parts.append(cur)
    return parts
