"""Summary sentences say only what happened: every factual phrase the explanation templates can produce, checked against
what each library incident holds, with the fact read from the analysis by its own rule (not the template's flag)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from skill.judging.engine import Analysis
from skill.telling.explain import build

from conftest import CASES


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
