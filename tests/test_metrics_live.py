"""Metrics live (issue 42): the real google-cloud-monitoring client against a loopback gRPC fake of
MetricService.ListTimeSeries, within --deadline and the request budget; a refused or silent endpoint is exit 2."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pathways_workload.evals.fakes.live_case import LiveCase
from pathways_workload.evals.fakes.monitoring_server import MonitoringFake
from pathways_workload.skill.reading.sources.monitoring import MAX_REQUESTS, filters

pytest.importorskip("google.cloud.monitoring_v3", reason="metrics live need google-cloud-monitoring (see README)")
ROOT = Path(__file__).resolve().parent.parent
CASE = ROOT / "fixtures" / "case-008"  # a Spot preemption whose export holds duty cycle and interruption series


def test_filters_scope_every_read_to_the_cluster_namespace_and_jobset():
    got = dict(filters("c1", "ns", "js"))
    assert len(got) == 7  # three container metrics, two node metrics, the node pools' interruptions, the restarts
    assert 'resource.type = "k8s_node_pool"' in got["kubernetes.io/node_pool/interruption_count"]
    duty = got["kubernetes.io/container/accelerator/duty_cycle"]
    assert 'resource.labels.pod_name = starts_with("js-")' in duty and 'namespace_name = "ns"' in duty
    assert all('resource.labels.cluster_name = "c1"' in f for f in got.values())


def test_live_reads_the_series_and_cites_them_like_replay():
    with LiveCase(CASE) as lv, MonitoringFake(lv.series) as fake:
        d = lv.diagnose(monitoring_endpoint=fake.url)
    assert d.failure_class == "spot_preemption"
    assert any(e.source == "metric" and "interruption_type=PreemptionEvent" in e.excerpt for e in d.evidence)
    assert 1 <= len(fake.requests) <= MAX_REQUESTS
    assert all(r["aggregation"]["alignment_period"] == "60s" for r in fake.requests)


def test_beside_a_logging_emulator_the_real_api_is_never_called():
    with LiveCase(CASE) as lv:
        d = lv.diagnose(monitoring_endpoint=None)
    assert any("Cloud Monitoring not read" in g for g in d.data_gaps)


def _cli(case: LiveCase, monitoring: str, deadline: str) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "pathways_workload", "diagnose", "--project", case.project, "--location",
                        case.location, "--cluster", case.cluster, "--jobset", case.jobset, "--namespace", case.namespace,
                        "--start", case.start, "--end", case.end, "--logging-endpoint", case.logging_url,
                        "--kube-server", case.kube_url, "--monitoring-endpoint", monitoring, "--deadline", deadline],
                       capture_output=True, text=True, cwd=ROOT, timeout=120, env=dict(os.environ))
    return p, time.monotonic() - t0


def test_a_refused_endpoint_is_one_line_and_exit_2_at_once():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with LiveCase(CASE) as lv:
        p, took = _cli(lv, f"http://127.0.0.1:{port}", "60")
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1, p.stderr
    assert "cannot reach Cloud Monitoring" in p.stderr and took < 30, took


def test_a_silent_endpoint_ends_at_the_deadline():
    with LiveCase(CASE) as lv, MonitoringFake([], silent=True) as fake:
        p, took = _cli(lv, fake.url, "4")
    assert p.returncode == 2 and "no answer within --deadline" in p.stderr, p.stderr
    assert took < 4 + 10, took  # the deadline, and the start-up of a process on a busy machine
