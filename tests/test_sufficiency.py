"""Honest verdicts: never healthy without evidence of health, waiting lines as a stall, next checks when unsure."""

from __future__ import annotations

import json
import shutil

from pathways_workload.skill.api import diagnose_replay
from pathways_workload.skill.reading.records import format_ns, parse_ts

from conftest import ROOT

CASE = ROOT / "fixtures" / "case-005"  # a start-up whose slices never all become ready


def _short_export(tmp_path, minutes: int, waiting: bool):
    """The first minutes of the case after the resource manager serves, logs only (no pods or JobSet exported)."""
    logs = json.loads((CASE / "logs.json").read_text())
    serving = min(parse_ts(e["timestamp"]) for e in logs if "serving on [::]:29001" in e.get("textPayload", ""))
    end = serving + minutes * 60 * 10**9
    kept = [e for e in logs if parse_ts(e["timestamp"]) <= end and "program launches" not in e.get("textPayload", "")]
    rm = next(e for e in kept if e["resource"]["labels"].get("container_name") == "pathways-rm")
    if waiting:
        for i in range(1, 2 * minutes):
            ts = serving + i * 30 * 10**9
            kept.append({**rm, "insertId": f"wait{i}", "timestamp": format_ns(ts),
                         "textPayload": f"I1122 03:0{i // 2}:00.000000 1 resource_manager.cc:512] Still waiting for "
                                        "1 more slice to register (1/2 slices ready)"})
    (tmp_path / "logs.json").write_text(json.dumps(kept))
    shutil.copy(CASE / "events.json", tmp_path / "events.json")
    return tmp_path


def test_a_short_export_of_a_waiting_start_up_is_a_stall_not_health(tmp_path):
    d = diagnose_replay(_short_export(tmp_path, 4, waiting=True))
    assert (d.failure_class, d.status) == ("slices_not_ready", "stalled")
    assert d.confidence < 0.9 and d.next_checks  # unsure, and says what to check
    assert not d.sufficiency.sufficient and "judged only 10 min after" in " ".join(d.sufficiency.reasons)


def test_a_short_export_with_no_progress_and_no_failure_is_never_healthy(tmp_path):
    d = diagnose_replay(_short_export(tmp_path, 4, waiting=False))
    assert d.status != "healthy"
    assert not d.sufficiency.sufficient


def test_a_firm_verdict_is_sufficient_and_carries_no_next_checks():
    d = diagnose_replay(ROOT / "fixtures" / "case-001")
    assert d.confidence >= 0.9 and d.sufficiency.sufficient and d.next_checks == []


def test_an_unknown_failure_says_what_to_read_next():
    d = diagnose_replay(ROOT / "fixtures" / "case-013")
    assert d.failure_class == "unknown_failure" and not d.sufficiency.sufficient
    assert any(c.command and "kubectl logs" in c.command for c in d.next_checks)


def test_at_before_the_data_is_an_error_and_after_it_a_gap():
    import pytest

    from pathways_workload.skill.errors import InputError
    with pytest.raises(InputError, match="before the data starts"):
        diagnose_replay(CASE, at="2020-01-01T00:00:00Z")
    d = diagnose_replay(CASE, at="2030-01-01T00:00:00Z")
    assert any("after the last entry" in g for g in d.data_gaps)


def test_two_jobsets_of_two_clusters_are_each_diagnosed_where_they_ran(tmp_path):
    from pathways_workload.skill.api import analyse_replay
    a, b = ROOT / "fixtures" / "case-001", ROOT / "fixtures" / "case-004"
    logs = []
    for case in (a, b):
        logs += json.loads((case / "logs.json").read_text())
    (tmp_path / "logs.json").write_text(json.dumps(logs))
    for case in (a, b):
        alone = analyse_replay(case).model
        mixed = analyse_replay(tmp_path, jobset=alone.jobset).model
        assert (mixed.cluster, mixed.project, mixed.location) == (alone.cluster, alone.project, alone.location)
