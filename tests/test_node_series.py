"""The node and JobSet series as signals (issue 42): a node's Ready condition, the pressure conditions, the JobSet's
restart gauge, a node pool's interruption count and one physical host behind several failed node names."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pathways_workload.skill.api import diagnose_replay
from pathways_workload.skill.reading.sources.metrics import SeriesSet
from pathways_workload.skill.understanding.metrics import series_facts, signals
from pathways_workload.skill.understanding.model import Workload
from pathways_workload.skill.understanding.node_series import condition_signals, restart_signals

from test_metrics import NS, T0, iso, monitoring, prom

ROOT = Path(__file__).resolve().parent.parent
NODE = {"cluster_name": "c", "node_name": "n1"}


def _facts(*series: dict, prometheus: tuple = (), nodes=("n1",)):
    found = SeriesSet()
    found.take({"timeSeries": list(series)}, "m.json")
    if prometheus:
        found.take({"status": "success", "data": {"resultType": "matrix", "result": list(prometheus)}}, "p.json")
    return series_facts(found, "js", None, ["js-w-0"], nodes)


def _condition(cond: str, status: str, values: list[int]) -> dict:
    return monitoring("kubernetes.io/node/status_condition", {"condition": cond, "status": status}, "k8s_node", NODE,
                      [{"int64Value": str(v)} for v in values])


@pytest.mark.parametrize("cond, status, heard, target, weight, support", [
    ("Ready", "Unknown", set(), "node_lost", 0.7, False),  # nothing else from the node side: the series speak
    ("Ready", "False", {"n1"}, "node_lost", 0.3, True),  # the node's own records speak first
    ("MemoryPressure", "True", set(), "host_oom", 0.3, True),  # a pressure condition only supports
    ("DiskPressure", "True", set(), "head_pod_evicted", 0.3, True),
])
def test_a_node_condition_is_a_signal(cond, status, heard, target, weight, support):
    [s] = condition_signals(_facts(_condition(cond, status, [0, 1, 1])), heard)
    assert (s.target, s.weight, s.pattern.support) == (target, weight, support)
    assert s.record.id == f"kubernetes.io/node/status_condition{{condition={cond},node_name=n1,status={status}}}@{iso(T0 + 60)}"
    assert s.record.obj == "n1"
    assert s.ts == (T0 + 60) * NS - 30 * NS  # within the first sample that shows it


def test_ready_true_says_nothing():
    assert condition_signals(_facts(_condition("Ready", "True", [1, 1])), set()) == []


def test_the_restart_gauge_counts_and_places_restarts():
    facts = _facts(prometheus=(prom("kube_jobset_restarts", {"jobset_name": "js"}, [0, 0, 1, 1, 2]),))
    model = Workload(jobset="js")
    got = restart_signals(facts, model)
    assert model.jobset_restarts == 2  # no JobSet object: the gauge counts them
    assert [(s.target, s.ts) for s in got] == [("jobset_restarting", (T0 + 90) * NS), ("jobset_restarting", (T0 + 210) * NS)]


def test_the_gauge_places_no_restart_the_events_show():
    facts = _facts(prometheus=(prom("kube_jobset_restarts", {"jobset_name": "js"}, [0, 1]),))
    model = Workload(jobset="js", jobset_uid="u", jobset_restarts=1)
    model.symptoms = restart_signals(facts, Workload(jobset="js"))
    assert restart_signals(facts, model) == [] and model.jobset_restarts == 1


def test_a_node_pool_s_interruption_is_the_workload_s_by_its_pool():
    pool = {"cluster_name": "c", "nodepool_name": "tpu-np-1"}
    other = {"cluster_name": "c", "nodepool_name": "cpu-np"}
    irq = {"interruption_type": "PreemptionEvent", "interruption_reason": "Preemption"}
    facts = _facts(monitoring("kubernetes.io/node_pool/interruption_count", irq, "k8s_node_pool", pool,
                              [{"int64Value": "0"}, {"int64Value": "1"}]),
                   monitoring("kubernetes.io/node_pool/interruption_count", irq, "k8s_node_pool", other,
                              [{"int64Value": "1"}]),
                   nodes=("gke-c-tpu-np-1-0a1b2c3d-x7k2",))
    assert [(i.pool, i.ts) for i in facts.interruptions] == [("tpu-np-1", (T0 + 60) * NS)]
    [s] = signals(facts)
    assert s.target == "spot_preemption" and s.record.kind == "NodePool" and s.record.obj == "tpu-np-1"


def _without_series(case: str, tmp_path: Path) -> Path:
    out = tmp_path / case
    shutil.copytree(ROOT / "fixtures" / case, out)
    for f in out.glob("metrics-*.json"):
        f.unlink()
    return out


@pytest.mark.parametrize("case, logs_only, with_series", [
    ("case-290", ("unknown_failure", "failed"), ("node_lost", "failed")),  # Ready=Unknown, no node record exported
    # the restart gauge; without it the head's new pod name shows the restart too (skill.understanding.lives)
    ("case-291", ("tpu_hardware_failure", "healthy"), ("tpu_hardware_failure", "healthy")),
    ("case-293", ("node_lost", "failed"), ("spot_preemption", "failed")),  # the node pool's count alone
])
def test_the_series_decide_where_the_logs_cannot(tmp_path, case, logs_only, with_series):
    d = diagnose_replay(_without_series(case, tmp_path))
    assert (d.failure_class, d.status) == logs_only
    d = diagnose_replay(ROOT / "fixtures" / case)
    assert (d.failure_class, d.status) == with_series
    assert any(e.source == "metric" for e in d.evidence) or d.fate.state == "recovered"


def test_one_host_under_two_failed_node_names_is_named():
    d = diagnose_replay(ROOT / "fixtures" / "case-292")
    [check] = [c for c in d.next_checks if "gce_topology_host" in c.question]
    assert "resourceStatus.physicalHost" in (check.command or "") and check.question.count("gke-moss-v4-c2-tpu-np-0-") == 2


def test_the_digest_names_a_node_not_ready_and_a_pool_s_interruption():
    from pathways_workload.skill.api import analyse_replay
    from pathways_workload.skill.understanding.digest import digest_of

    series = digest_of(analyse_replay(ROOT / "fixtures" / "case-290", digest=True))["series"]
    assert series["node_conditions"] == ["gke-tam-tpu-e1-tpu-np-0-e86a2a8a-2ek3 Ready=Unknown from 2026-12-04T11:19:00Z"]
    series = digest_of(analyse_replay(ROOT / "fixtures" / "case-293", digest=True))["series"]
    assert series["interruptions"] == ["2026-12-05T21:36:00Z node pool tpu-np-1: PreemptionEvent (Preemption)"]


def test_a_pool_s_count_of_the_node_s_own_interruption_is_counted_once():
    irq = {"interruption_type": "PreemptionEvent", "interruption_reason": "Preemption"}
    node = "gke-c-tpu-np-1-0a1b2c3d-x7k2"
    facts = _facts(monitoring("kubernetes.io/node_pool/interruption_count", irq, "k8s_node_pool",
                              {"cluster_name": "c", "nodepool_name": "tpu-np-1"}, [{"int64Value": "1"}]),
                   monitoring("kubernetes.io/node/interruption_count", irq, "k8s_node",
                              {"cluster_name": "c", "node_name": node}, [{"int64Value": "1"}]), nodes=(node,))
    assert [(i.node, i.pool) for i in facts.interruptions] == [(node, "")]
