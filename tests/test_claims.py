"""Summary sentences say only what happened: every factual phrase the explanation templates can produce, checked against
what each library incident holds, with the fact read from the analysis by its own rule (not the template's flag)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from pathways_workload.skill.catalog import BY_ID
from pathways_workload.skill.judging.engine import Analysis
from pathways_workload.skill.judging.ranking import CANDIDATE, STRONG
from pathways_workload.skill.reading.records import record_from_entry, record_from_event
from pathways_workload.skill.telling.explain import build
from pathways_workload.skill.judging.engine import matcher

from conftest import CASES, FIXTURES


def _restarted(a: Analysis) -> bool:
    m = a.model
    return m.jobset_restarts > 0 or any(c.restarts for p in m.pods.values() for c in p.containers.values()) or any(
        s.target in ("jobset_restarting", "crashloop") for s in a.verdict.symptoms)


def _exit_137(a: Analysis) -> bool:
    statuses = any(c.last_exit_code == 137 or c.last_reason == "OOMKilled" for p in a.model.pods.values()
                   for c in p.containers.values())
    return statuses or any("OOMKilled" in s.record.text or "137" in s.record.text for s in a.verdict.root.signals)


@dataclass(frozen=True)
class Claim:
    name: str
    phrase: str  # a regex over the root cause's explanation
    holds: Callable[[Analysis], bool]


CLAIMS = (
    Claim("restarts", r"the restarts|and restarts|full restart|restarted|the job restarted", _restarted),
    Claim("timeouts", r"timeouts", lambda a: any(s.target == "heartbeat_timeout" for s in a.verdict.symptoms)),
    Claim("an exit 137", r"OOMKilled, exit 137", _exit_137),
    Claim("no exit 137", r"no exit 137", lambda a: not any(c.last_exit_code == 137 for p in a.model.pods.values()
                                                           for c in p.containers.values())),
    Claim("progress", r"keeps making progress", lambda a: bool(a.model.progress or a.model.milestones.get("worker_launches"))),
    Claim("start-up reached", r"reached its start-up milestones", lambda a: bool(a.model.ready_slices())),
    Claim("no pod", r"no pods are created|no pod exists", lambda a: not any(p.ran for p in a.model.pods.values())),
    Claim("stays suspended", r"stays suspended", lambda a: a.model.suspended),
    Claim("finished", r"finished its run", lambda a: a.model.condition("Completed") is not None or any(
        c.last_exit_code == 0 for p in a.model.pods.values() for c in p.containers.values())),
)


@pytest.fixture(scope="module")
def explained(replayed) -> dict[str, tuple[str, Analysis]]:
    out = {}
    for case in CASES:
        a = replayed.analysis(case)  # the session's cache: each library incident is analysed once per run
        out[case.name] = (build(a, logging_requests=0).root_cause.explanation, a)
    return out


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.name for c in CLAIMS])
def test_every_claim_in_a_summary_holds_in_its_incident(claim, explained):
    said = [name for name, (text, _) in explained.items() if re.search(claim.phrase, text)]
    wrong = [name for name in said if not claim.holds(explained[name][1])]
    assert not wrong, f"{claim.name} said without it: {wrong}"


def test_no_restart_sentence_without_a_restart(explained):
    for name in ("case-001", "case-150"):  # the JobSet never restarted
        text, a = explained[name]
        assert not _restarted(a) and "restart" not in text


def test_claims_are_exercised_both_ways(explained):
    """Each conditioned sentence appears in some incident, and its other branch in another."""
    texts = [t for t, _ in explained.values()]
    for said, unsaid in (("the other hosts' timeouts", "what failed after it follows from it"),
                         ("OOMKilled, exit 137", "by the kernel's OOM killer"),
                         ("ended in a full restart", "was not resumed transparently")):
        assert any(said in t for t in texts) or said == "ended in a full restart", said
        assert any(unsaid in t for t in texts), unsaid


# -- "nothing ..." / "no ...": every sentence that says a line does not exist, checked against the data (issue 38) -----


@functools.cache
def _records(case: str) -> tuple:
    """Every log entry and event of the case, normalised (no classification): what a sentence of absence is about."""
    out = []
    for name in ("logs.json", "events.json"):
        path = FIXTURES / case / name
        if not path.exists():
            continue
        doc = json.loads(path.read_text())
        for item in (doc.get("items", []) if isinstance(doc, dict) else doc):
            try:
                out.append(record_from_event(item) if name == "events.json" else record_from_entry(item))
            except (KeyError, TypeError, ValueError):
                continue
    return tuple(out)


def _has_lines(case: str, cls: str) -> bool:
    """A record of the case is a line of `cls` by the catalog's own matcher (where it may appear, its checks)."""
    m = matcher()
    return any(s.kind == "cause" and s.target == cls for rec in _records(case) for s in m.match(rec))


def _candidates(a: Analysis, floor: float) -> list[str]:
    return [h.failure_class for h in a.verdict.ranked[1:] if h.score >= floor and h.signals]


def _head_lost_before(a: Analysis) -> bool:
    """The head pod (where the proxy runs) failed, was killed or restarted before the root cause's first line."""
    head = {p.name for p in a.model.pods.values() if p.role == "head"}
    return any(s.target in ("container_failed", "pod_killed", "crashloop") and s.record.pod in head
               and s.ts < a.verdict.root.first_ts for s in a.verdict.symptoms)


@dataclass(frozen=True)
class Absence:
    name: str
    phrase: str  # a regex over the summary
    holds: Callable[[Analysis, str], bool]  # (analysis, case name) -> the data agrees that nothing of it was there


ABSENCES = (
    Absence("device not held", r"nothing (?:reported )?the device as held by another process",
            lambda a, c: not _has_lines(c, "tpu_device_busy")),
    Absence("no version mismatch", r"nothing (?:reported the device as held by another process or )?a libtpu/PJRT",
            lambda a, c: not _has_lines(c, "libtpu_mismatch")),
    Absence("no proxy restart", r"no proxy restart, OOM kill or head-pod loss in the data",
            # an OOM kill the engine found no workload pod in (a logging agent's) explains nothing: no candidate
            lambda a, c: not _head_lost_before(a) and "host_oom" not in _candidates(a, CANDIDATE)),
    Absence("no infrastructure event", r"no infrastructure event explains it",
            lambda a, c: not [h for h in _candidates(a, STRONG) if BY_ID[h].phase != "run" or h.startswith("node")]),
    Absence("nothing explains the stall", r"nothing in the data explains it|no error explains it",
            lambda a, c: not _candidates(a, STRONG)),
    Absence("no known signature", r"no known signature explains why", lambda a, c: not _candidates(a, CANDIDATE)),
    Absence("nothing failed", r"nothing has failed so far|Nothing in the data says \S+ failed",
            lambda a, c: not [s for s in a.verdict.symptoms if s.target in ("job_failed", "jobset_failed",
                                                                            "container_failed")]),
    Absence("no step yet", r"no training step|no program launch|nothing shows it running",
            lambda a, c: not a.model.progress and not a.model.milestones.get("worker_launches")),
    Absence("slices never ready", r"never reported all slices ready", lambda a, c: not a.model.ready_slices()),
    Absence("no pod", r"no pods are created|no pod exists|(?:with )?no pods",
            lambda a, c: not any(p.ran for p in a.model.pods.values())),
    Absence("no exit 137", r"no exit 137", lambda a, c: not any(
        c.last_exit_code == 137 for p in a.model.pods.values() for c in p.containers.values())),
)


@pytest.fixture(scope="module")
def summaries(replayed) -> dict[str, tuple[str, Analysis]]:
    # what the program printed, quoted in the summary, is its text, not a sentence of ours
    return {case.name: (re.sub(r"'[^']*'", "'…'", build(a, logging_requests=0).summary), a)
            for case in CASES for a in [replayed.analysis(case)]}


@pytest.mark.parametrize("absence", ABSENCES, ids=[x.name for x in ABSENCES])
def test_every_sentence_of_absence_holds_in_its_incident(absence, summaries):
    said = [name for name, (text, _) in summaries.items() if re.search(absence.phrase, text)]
    wrong = [name for name in said if not absence.holds(summaries[name][1], name)]
    assert not wrong, f"{absence.name} said against the data: {wrong}"


def test_every_sentence_of_absence_in_the_catalog_is_checked():
    """Each "nothing ..." / "no ..." that an explanation template can say is one of ABSENCES (or says what the cause
    line itself says, listed here)."""
    restated = ("no free TPU capacity", "no registry permission, or no egress", "no live backend", "no longer allowed",
                "no free quota", "admits nothing", "was never registered", "never exist", "never starts",
                "Kueue can never admit", "no exit 137)")
    for cls in BY_ID.values():
        texts = [cls.explanation] if isinstance(cls.explanation, str) else [t.text for t in cls.explanation]
        for text in texts:
            plain = re.sub(r"{{.*?}}", "X", re.sub(r"{%.*?%}", "", text))
            for m in re.finditer(r"\b(?:[Nn]othing|no)\b[^.;,{]*", plain):
                if any(r in plain[max(0, m.start() - 40):m.end() + 40] for r in restated):
                    continue
                assert any(re.match(x.phrase, plain[m.start():]) for x in ABSENCES), \
                    f"{cls.id}: {m.group(0)!r} is not checked against the data"


def test_case_201_does_not_deny_its_busy_device(summaries):
    text, _ = summaries["case-201"]
    assert "nothing reported the device as held" not in text and "held by another process (other hypotheses)" in text
    assert "tpu_device_busy scores 0.95 on its own lines, above this verdict's confidence" in text
