"""Each loopback fake starts with one command on an export folder and prints the diagnose command that reads through
it (issue 38): the README's two commands give the replay verdict, with no cloud project."""

from __future__ import annotations

import importlib.util
import shlex
import subprocess
import sys

import pytest

from pathways_workload.cli import main

from conftest import FIXTURES, ROOT, expected

CASE = FIXTURES / "case-001"


def _start(module: str, *args: str) -> tuple[subprocess.Popen, str, str]:
    """The fake running on CASE; its first line (where it listens) and the command it suggests."""
    p = subprocess.Popen([sys.executable, "-m", module, str(CASE), *args], cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert p.stdout is not None
    first, _, command = p.stdout.readline(), p.stdout.readline(), p.stdout.readline().strip()
    assert first and command.startswith("pathways-workload diagnose "), (first, p.stderr.read() if p.poll() else "")
    return p, first, command


def _diagnose(command: str, capsys) -> dict:
    import json

    argv = shlex.split(command)[1:] + ["--format", "json"]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.skipif(importlib.util.find_spec("google.cloud.bigquery") is None, reason="needs google-cloud-bigquery")
def test_bigquery_fake_and_log_analytics_in_two_commands(capsys):
    p, first, command = _start("pathways_workload.evals.fakes.bigquery_server")
    try:
        assert "as logs-project.pathways_logs._AllLogs at http://127.0.0.1:" in first
        d = _diagnose(command, capsys)
    finally:
        p.terminate()
        p.wait(10)
    assert d["failure_class"] == expected(CASE)["failure_class"] and d["budget"]["logging_requests"] > 0


def test_logging_and_kube_fakes_serve_a_live_diagnosis(capsys):
    logs, first, command = _start("pathways_workload.evals.fakes.logging_server")
    kube, _, kube_command = _start("pathways_workload.evals.fakes.kube_server")
    try:
        url = first.split(" at ")[1].split()[0]
        d = _diagnose(kube_command.replace("LOGGING_FAKE_URL", url), capsys)
        no_kube = _diagnose(command, capsys)
    finally:
        for p in (logs, kube):
            p.terminate()
            p.wait(10)
    assert d["failure_class"] == no_kube["failure_class"] == expected(CASE)["failure_class"]


def test_a_folder_without_entries_is_one_line(tmp_path):
    p = subprocess.run([sys.executable, "-m", "pathways_workload.evals.fakes.logging_server", str(tmp_path)], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and p.stderr.strip().count("\n") == 0 and "no log entries" in p.stderr


def test_the_monitoring_fake_serves_the_series_beside_the_logging_fake(capsys):
    logs, first, _ = _start("pathways_workload.evals.fakes.logging_server")
    mon, mon_first, command = _start("pathways_workload.evals.fakes.monitoring_server")
    try:
        assert "Cloud Monitoring fake" in mon_first and "gRPC" in mon_first
        d = _diagnose(command.replace("LOGGING_FAKE_URL", first.split(" at ")[1].split()[0]), capsys)
    finally:
        for p in (logs, mon):
            p.terminate()
            p.wait(10)
    assert d["failure_class"] == expected(CASE)["failure_class"]
    assert not any("Cloud Monitoring" in g for g in d["data_gaps"])  # the series were read
