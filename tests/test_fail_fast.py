"""Every source is bounded by --deadline and fails fast (issue 38): a refused, unknown or silent endpoint of BigQuery
(Log Analytics) and of the Anthropic API, a missing dataset, missing credentials: one line, exit 2, within seconds.
A silent endpoint says it did not answer within --deadline, on every source (issue 43). Cloud Logging and the
Kubernetes API have their other failures in tests/test_live.py."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.conftest import ROOT

LA = ["diagnose", "--log-analytics", "logs-project.pathways_logs", "--cluster", "c", "--jobset", "j"]


def _refused_url(scheme: str = "http") -> str:
    """A loopback port nothing listens on: bound for a free number, then closed, so a connection is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"{scheme}://127.0.0.1:{port}"


@contextmanager
def _silent_url() -> Iterator[str]:
    """A loopback port that takes connections (the kernel's backlog) and never answers a byte."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(64)
        yield f"http://127.0.0.1:{s.getsockname()[1]}"


def _cli(*args: str, env: dict | None = None) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "pathways_workload", *args], capture_output=True, text=True, cwd=ROOT,
                       timeout=120, env={**os.environ, **(env or {})})
    return p, time.monotonic() - t0


def _one_line(p: subprocess.CompletedProcess) -> str:
    assert p.returncode == 2 and p.stdout == "", (p.returncode, p.stdout, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    return lines[0]


bigquery = pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("google.cloud.bigquery") is None,
    reason="--log-analytics needs google-cloud-bigquery (see README)")


@bigquery
@pytest.mark.parametrize("via", ["flag", "env"])
def test_refused_bigquery_endpoint_is_one_line_fast(via):
    url = _refused_url()
    args, env = (["--bigquery-endpoint", url], None) if via == "flag" else ([], {
        "PATHWAYS_WORKLOAD_BIGQUERY_ENDPOINT": url})
    p, took = _cli(*LA, *args, env=env)
    line = _one_line(p)
    assert f"cannot reach BigQuery at {url} (connection refused)" in line and "--bigquery-endpoint" in line
    assert took < 10, took  # it retried for over 13 minutes before


@bigquery
def test_unknown_bigquery_host_is_one_line_fast():
    p, took = _cli(*LA, "--bigquery-endpoint", "http://no-such-host.invalid:9050")
    assert "(unknown host)" in _one_line(p) and took < 10, took


@bigquery
def test_silent_bigquery_endpoint_ends_at_the_deadline():
    with _silent_url() as url:
        p, took = _cli(*LA, "--bigquery-endpoint", url, "--deadline", "3")
    line = _one_line(p)
    assert "did not finish within the 3 s --deadline" in line and took < 10, took


LIVE = ["diagnose", "--project", "p", "--location", "l", "--cluster", "c", "--jobset", "j", "--deadline", "5"]


def test_silent_cloud_logging_endpoint_ends_at_the_deadline_and_says_so():
    with _silent_url() as url:
        p, took = _cli(*LIVE, "--logging-endpoint", url, "--no-kube")
    line = _one_line(p)
    assert f"Cloud Logging at {url} query 'control-plane' did not finish within the 5 s --deadline (" in line
    assert "check --project" not in line and took < 5 + 7, took  # the flags were not what was wrong


def test_silent_kubernetes_api_ends_at_the_deadline_and_says_so():
    with _silent_url() as url:
        p, took = _cli(*LIVE, "--logging-endpoint", url, "--kube-server", url)
    line = _one_line(p)  # the API server is read first; its attempts each had a share of the deadline
    assert f"Kubernetes API at {url} read of JobSet default/j did not finish within the 5 s --deadline" in line
    assert "pass --no-kube" in line and "unreachable" not in line and took < 5 + 7, took


@bigquery
def test_missing_dataset_is_one_line_fast():
    from pathways_workload.evals.fakes.bigquery_server import BigQueryServer, FakeBigQuery

    entry = {"insertId": "a1", "timestamp": "2026-01-01T00:00:00Z", "textPayload": "x",
             "logName": "projects/logs-project/logs/stdout", "resource": {"type": "k8s_container", "labels": {}}}
    with BigQueryServer(FakeBigQuery([entry], project="logs-project", dataset="pathways_logs")) as srv:
        p, took = _cli("diagnose", "--log-analytics", "logs-project.nope", "--cluster", "c", "--jobset", "j",
                       "--bigquery-endpoint", srv.url)
    assert "logs-project.nope._AllLogs not found (HTTP 404" in _one_line(p) and took < 10, took


@bigquery
def test_missing_credentials_for_bigquery_is_one_line_fast(tmp_path):
    # no endpoint: Application Default Credentials; none are to be found, and the metadata server is a refused port
    metadata = _refused_url().removeprefix("http://")
    env = {"HOME": str(tmp_path), "CLOUDSDK_CONFIG": str(tmp_path / "gcloud"), "GCE_METADATA_HOST": metadata,
           "GCE_METADATA_IP": metadata, "GOOGLE_APPLICATION_CREDENTIALS": "", "PATHWAYS_WORKLOAD_BIGQUERY_ENDPOINT": ""}
    p, took = _cli(*LA, env=env)
    assert "no Google Cloud credentials found" in _one_line(p) and took < 10, took


def test_refused_anthropic_endpoint_is_one_line_fast():
    url = _refused_url()
    p, took = _cli("ask", "why?", "--replay", "fixtures/case-001",
                   env={"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test"})
    line = _one_line(p)
    assert f"cannot reach the Anthropic API at {url} (connection refused)" in line and "ANTHROPIC_BASE_URL" in line
    assert took < 10, took


def test_silent_anthropic_endpoint_ends_at_the_deadline():
    with _silent_url() as url:
        p, took = _cli("ask", "why?", "--replay", "fixtures/case-001", "--deadline", "6",
                       env={"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test"})
    assert took < 6 + 6, took  # the deadline, and the start-up of a process on a busy machine
    if p.returncode == 0:  # the replay's own analysis spent the deadline first: the deterministic answer, said so
        assert json.loads(p.stdout)["stop"] == "deadline"
    else:
        assert "did not answer step 1 within the --deadline" in _one_line(p)
