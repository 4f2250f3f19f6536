"""The early-export eval (evals/early.py, `pathways-workload eval --early-export`): every failing library incident cut
soon after its first cause line, logs and events only, is never called healthy (issue 36)."""

from __future__ import annotations

import json

import pytest

from pathways_workload.evals import early
from pathways_workload.evals.agents import RulesAgent
from pathways_workload.evals.harness import load_cases
from pathways_workload.evals.transforms import load
from pathways_workload.cli import main

from conftest import FIXTURES


def test_a_cut_keeps_logs_and_events_up_to_the_cut_and_drops_the_snapshots():
    c = load(FIXTURES / "case-001")
    at = early.first_cause_ns(c)
    assert at is not None and early.jobset_name(c) == "lm8b-pt-r14"
    early.cut(c, at + 60 * early.NS)
    assert set(c.docs) == {"events.json"}
    assert c.logs and max(early._ns(e["timestamp"]) for e in c.logs) <= at + 60 * early.NS
    for ev in c.docs["events.json"]["items"]:  # type: ignore[index]
        first, last = early._event_times(ev)  # type: ignore[misc]
        assert first <= at + 60 * early.NS and last <= at + 60 * early.NS


@pytest.fixture(scope="module")
def summary():
    return early.run_early(load_cases([FIXTURES]), RulesAgent())


@pytest.mark.parametrize("offset", [str(o) for o in early.OFFSETS])
def test_no_failing_incident_cut_early_is_called_healthy(summary, offset):
    row = summary["by_offset"][offset]
    assert row["cases"] > 150 and row["errors"] == 0
    assert row["called_healthy"] == [], row["called_healthy"]
    # the first cause line is in the cut: the class is kept (the few that change are named in the summary)
    assert row["class_kept"] >= row["cases"] - 5, row["class_changed"]


def test_out_of_scope_cases_say_why(summary):
    assert set(summary["skipped"]) <= {"healthy: nothing to cut at",
                                       "decided by an absence: it cannot show before its wait has passed",
                                       "the key evidence is only in the object snapshots"}


def test_the_eval_command(capsys):
    assert main(["eval", str(FIXTURES), "--early-export", "--only", "case-00[1-4]", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["gate"] == [] and out["by_offset"]["60"]["cases"] >= 3
