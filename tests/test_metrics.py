"""Time series beside the logs (issue 42): both export formats read by content, what the series prove, and where they
decide (a stall, a quiet run, an interruption without its audit log), cited by ids that are in the input."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from pathways_workload.evals import builder
from pathways_workload.evals.harness import input_ids
from pathways_workload.evals.series_eval import judge
from pathways_workload.skill.api import analyse_replay, diagnose_replay
from pathways_workload.skill.reading.sources.metrics import SeriesSet, is_series_doc
from pathways_workload.skill.reading.sources.replay import ReplaySource
from pathways_workload.skill.understanding.metrics import series_facts

ROOT = Path(__file__).resolve().parent.parent
T0 = 1_795_000_000  # a whole minute, seconds since the epoch
NS = 1_000_000_000


def iso(s: int) -> str:
    return dt.datetime.fromtimestamp(s, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def point(t: int, value: dict) -> dict:
    return {"interval": {"startTime": iso(t - 60), "endTime": iso(t)}, "value": value}


def monitoring(metric: str, labels: dict, rtype: str, rlabels: dict, values: list, kind: str = "GAUGE",
               meta: dict | None = None) -> dict:
    pts = [point(T0 + 60 * i, v) for i, v in enumerate(values)][::-1]  # the API returns points newest first
    ts = {"metric": {"type": metric, "labels": labels}, "resource": {"type": rtype, "labels": rlabels},
          "metricKind": kind, "valueType": "INT64", "points": pts}
    if meta:
        ts["metadata"] = {"userLabels": meta}
    return ts


def prom(name: str, labels: dict, values: list[float]) -> dict:
    return {"metric": {"__name__": name, **labels}, "values": [[T0 + 60 * i, str(v)] for i, v in enumerate(values)]}


def test_both_formats_are_read_by_content_under_any_name(tmp_path):
    node = {"project_id": "p", "location": "l", "cluster_name": "c", "node_name": "n1"}
    (tmp_path / "a.json").write_text(json.dumps({"timeSeries": [monitoring(
        "kubernetes.io/node/interruption_count", {"interruption_type": "PreemptionEvent"}, "k8s_node", node,
        [{"int64Value": "0"}, {"int64Value": "1"}], meta={"gce_topology_host": "/C/B/H1"})]}))
    (tmp_path / "whatever.json").write_text(json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [
        prom("kubernetes_io:container_accelerator_duty_cycle", {"pod_name": "js-worker-0-0-x"}, [90.0, 0.0])]}}))
    src = ReplaySource(tmp_path)
    got = {s.metric: s for s in src.metrics.series}
    irq = got["kubernetes.io/node/interruption_count"]
    assert irq.points == ((T0 * NS, 0.0), ((T0 + 60) * NS, 1.0))  # oldest first, int64 strings read
    assert irq.metadata == {"gce_topology_host": "/C/B/H1"} and irq.node == "n1"
    duty = got["kubernetes.io/container/accelerator/duty_cycle"]
    assert duty.pod == "js-worker-0-0-x" and duty.points[0] == (T0 * NS, 90.0)
    assert duty.point_id(T0 * NS) == "kubernetes.io/container/accelerator/duty_cycle{pod_name=js-worker-0-0-x}@" + iso(T0)
    assert src.stats.last_ts == (T0 + 60) * NS  # the data ends with its last point


@pytest.mark.parametrize("doc, says", [
    ({"timeSeries": [{"metric": {"type": "x"}, "points": []}]}, "time series 1 has no point"),
    ({"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {"pod_name": "a"}, "values": [[1, "2"]]}]}},
     "has no __name__"),
    ({"status": "error", "errorType": "bad_data", "error": "parse error at char 3"}, "parse error at char 3"),
    ({"timeSeries": "nope"}, "timeSeries is not a list"),
])
def test_a_malformed_export_is_one_gap_line(tmp_path, doc, says):
    (tmp_path / "m.json").write_text(json.dumps(doc))
    src = ReplaySource(tmp_path)
    assert not src.metrics.series
    assert [g for g in src.stats.gaps if says in g] and all(g.startswith("m.json: ") for g in src.stats.gaps)


def test_recognition_is_by_shape():
    assert is_series_doc({"timeSeries": []}) and is_series_doc({"status": "success", "data": {}})
    assert not is_series_doc({"kind": "PodList", "items": []}) and not is_series_doc({"insertId": "a"})


def test_the_facts_the_series_prove():
    found = SeriesSet()
    node = {"cluster_name": "c", "node_name": "n1"}
    found.take({"timeSeries": [
        monitoring("kubernetes.io/node/interruption_count", {"interruption_type": "MaintenanceEvent",
                   "interruption_reason": "HW/SW Maintenance"}, "k8s_node", node,
                   [{"int64Value": "1"}, {"int64Value": "1"}, {"int64Value": "2"}], kind="CUMULATIVE",
                   meta={"gce_topology_host": "/C/B/H1"}),
        monitoring("kubernetes.io/node/status_condition", {"condition": "Ready", "status": "False"}, "k8s_node", node,
                   [{"int64Value": "0"}, {"int64Value": "1"}]),
        monitoring("kubernetes.io/node/interruption_count", {}, "k8s_node", {"node_name": "n2"}, [{"int64Value": "0"}],
                   meta={"gce_topology_host": "/C/B/H1"}),
    ]}, "m.json")
    found.take({"status": "success", "data": {"resultType": "matrix", "result": [
        prom("kubernetes_io:container_accelerator_duty_cycle", {"pod_name": "js-w-0", "accelerator_id": "0"}, [90, 91, 0, 0]),
        prom("kubernetes_io:container_accelerator_duty_cycle", {"pod_name": "js-w-0", "accelerator_id": "1"}, [80, 85, 0.5, 0]),
        prom("kubernetes_io:container_accelerator_memory_used", {"pod_name": "js-w-0", "accelerator_id": "0"}, [8e9, 15.9e9]),
        prom("kubernetes_io:container_accelerator_memory_total", {"pod_name": "js-w-0", "accelerator_id": "0"}, [16e9, 16e9]),
        prom("kube_jobset_restarts", {"jobset_name": "js"}, [0, 1]),
        prom("kubernetes_io:container_accelerator_duty_cycle", {"pod_name": "other-w-0"}, [99, 99, 99, 99]),
    ]}}, "p.json")
    f = series_facts(found, "js", None, ["js-w-0"], ["n1", "n2"])
    assert sorted(f.chips) == [("js-w-0", "0"), ("js-w-0", "1")]  # another JobSet's pod is not this workload's
    assert f.busy_times() == [T0 * NS, (T0 + 60) * NS]
    assert f.idle_since() == (T0 + 120) * NS and f.activity("js-w-0")[1] == ((T0 + 60) * NS, 91.0)
    assert f.busy_at_end((T0 + 180) * NS) and not f.busy_at_end((T0 + 600) * NS)
    assert [(i.type, i.reason, i.ts) for i in f.interruptions] == [("MaintenanceEvent", "HW/SW Maintenance", T0 * NS),
                                                                     ("MaintenanceEvent", "HW/SW Maintenance", (T0 + 120) * NS)]
    assert [(c[1], c[2], c[3]) for c in f.conditions] == [("n1", "Ready", "False")]
    assert [v for _t, v, _s in f.restarts] == [0, 1]
    assert f.repeated_hosts() == {"/C/B/H1": ["n1", "n2"]}
    assert f.headroom[0].fraction == pytest.approx(0.99375)


def _variant(tmp_path: Path, case: str, logs: bool = True, series: bool = True, audit: bool = True) -> Path:
    """A library case rebuilt with series, then cut: without its logs, its series, or its audit log."""
    out = tmp_path / case
    out.mkdir(parents=True)
    for name, text in builder.render(ROOT / "fixtures" / case / "scenario.yaml", metrics=True).items():
        if name == "expected.yaml" or (not series and name.startswith("metrics-")) or (not logs and name == "logs.json"):
            continue
        if name == "logs.json" and not audit:
            text = json.dumps([e for e in json.loads(text) if "cloudaudit" not in e["logName"]], indent=2)
        (out / name).write_text(text)
    return out


def test_a_silent_stall_is_decided_by_the_chips_alone(tmp_path):
    d = diagnose_replay(_variant(tmp_path, "case-199", logs=False))
    assert (d.failure_class, d.status) == ("workload_stalled", "stalled")
    cited = [e for e in d.evidence if e.source == "metric"]
    assert cited and "duty_cycle = 0 %" in cited[0].excerpt
    assert d.cited_ids() <= input_ids(tmp_path / "case-199")


def test_chips_busy_to_the_end_are_a_quiet_run_not_a_stall(tmp_path):
    folder = _variant(tmp_path, "case-199")
    path = folder / "metrics-duty-cycle.json"
    doc = json.loads(path.read_text())
    for r in doc["data"]["result"]:
        r["values"] = [[t, "91.0"] for t, _v in r["values"]]  # the chips never stopped: the program only went quiet
    path.write_text(json.dumps(doc))
    a = analyse_replay(folder)
    assert a.verdict.status == "healthy" and a.verdict.failure_class == "no_failure_detected"


@pytest.mark.parametrize("case, without, with_series", [
    ("case-075", "spot_preemption", "host_maintenance"),  # maintenance: the audit log was its only record
    ("case-145", "hot_swap_failure", "spot_preemption"),
])
def test_an_interruption_s_reason_names_it_without_the_audit_log(tmp_path, case, without, with_series):
    assert diagnose_replay(_variant(tmp_path / "a", case, series=False, audit=False)).failure_class == without
    d = diagnose_replay(_variant(tmp_path / "b", case, audit=False))
    assert d.failure_class == with_series
    assert any(e.source == "metric" and "interruption_type=" in e.excerpt for e in d.evidence)


@pytest.mark.parametrize("case", ["case-199", "case-111", "case-008", "case-002"])
def test_logs_and_series_are_never_worse_than_logs(tmp_path, case):
    r = judge(ROOT / "fixtures" / case, tmp_path)
    assert r.score("both") >= r.score("logs") == 2


def test_a_library_case_without_series_keeps_logs_only():
    assert not list((ROOT / "fixtures" / "case-074").glob("metrics-*.json"))


def test_shown_as_promql_a_duty_band_and_in_the_digest():
    from pathways_workload.skill.telling.explain import build
    from pathways_workload.skill.telling.html import render_html
    from pathways_workload.skill.understanding.digest import digest_of

    a = analyse_replay(ROOT / "fixtures" / "case-200", digest=True)
    d = build(a, logging_requests=0)
    assert any(c.promql and "kubernetes_io:container_accelerator_duty_cycle" in c.promql and 'pod_name=~"cpt-7x-222-lark-.*"'
               in c.promql for c in d.next_checks)  # the query a user pastes into Cloud Monitoring
    page = render_html(d, a.model)
    assert 'class="duty"' in page and "TPU duty cycle 0 %" not in page  # idle minutes are left blank
    series = digest_of(a, d)["series"]
    assert series["busy_at_end"] is False and series["idle_since"].startswith("2027-01-16T20:15")
    irq = digest_of(analyse_replay(ROOT / "fixtures" / "case-008", digest=True))["series"]["interruptions"]
    assert irq and "PreemptionEvent" in irq[0]
