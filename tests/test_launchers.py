"""Every launcher's JobSet layout: the engine finds the head, the workers, their slices and hosts, and the verdict."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pathways_workload.evals.builder.launchers import LAUNCHERS

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CASES = {"case-202": "gcluster", "case-203": "gcluster-headless", "case-204": "pathways-job",
         "case-205": "pathwaysutils", "case-206": "manual"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_launcher_layout_understood(case: str, replayed) -> None:
    scenario = yaml.safe_load((FIXTURES / case / "scenario.yaml").read_text())
    wl = scenario["workload"]
    assert wl["launcher"] == CASES[case] and wl["launcher"] in LAUNCHERS
    result = replayed.analysis(FIXTURES / case)
    pods = result.model.pods.values()
    assert sum(p.role == "head" for p in pods) == 1
    assert not [p.name for p in pods if p.role == "other"]
    workers = {(p.slice, p.host) for p in pods if p.role == "worker"}
    assert workers == {(s, h) for s in range(wl["slices"]) for h in range(wl["hosts_per_slice"])}
    expected = yaml.safe_load((FIXTURES / case / "expected.yaml").read_text())
    assert (result.verdict.failure_class, result.verdict.status) == (expected["failure_class"], expected["status"])
