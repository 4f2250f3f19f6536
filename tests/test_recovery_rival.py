"""A failed recovery strongly shown but not proven, after a proven interruption (skill/judging/ranking.py): the
interruption stays the root cause, the recovery is an open rival, so the verdict is not firm and says what to check."""

from __future__ import annotations

from pathways_workload.skill.judging.ranking import Hypo, _open_recovery, explains


def test_an_unproven_failed_recovery_is_an_open_rival(diagnoses):
    # case-145: a Spot VM reclaimed (proven), the recreated workers Pending and the scheduler finding no preemption
    # victims: a hot swap that failed, or a replacement waiting for capacity the autoscaler is still adding
    d = diagnoses["case-145"]
    assert d.failure_class == "spot_preemption" and d.confidence < 0.9
    assert any("hot_swap_failure" in c.tells_apart for c in d.next_checks)


def test_open_recovery_needs_a_strong_unproven_recovery_against_a_proven_interruption():
    spot = Hypo("spot_preemption", 0.99, [], first_ts=10)
    strong = Hypo("hot_swap_failure", 0.8, [], first_ts=20)
    proven = Hypo("hot_swap_failure", 0.9, [], first_ts=20)
    weak = Hypo("hot_swap_failure", 0.6, [], first_ts=20)
    assert _open_recovery(strong, spot) and not explains(spot, strong)
    assert not _open_recovery(proven, spot) and explains(proven, spot)  # proven: it outranks the interruption
    assert not _open_recovery(weak, spot) and explains(spot, weak)  # weak: a consequence of the interruption
