"""The fault matrix (evals/faults.py) through the real clients and the loopback fakes: each fault ends in a diagnosis
whose data_gaps say what is missing, or in one actionable line, inside the deadline; never a hang or a traceback."""

from __future__ import annotations

import json

import pytest

from pathways_workload.evals.faults import MATRIX, FaultCase, run_fault, verdict
from pathways_workload.cli import main
from pathways_workload.evals.fakes.live_case import LiveCase
from pathways_workload.evals.corpus import BASE


@pytest.fixture(scope="module")
def reference():
    return run_fault(MATRIX[0])


@pytest.mark.parametrize("fc", [pytest.param(f, id=f.name, marks=[pytest.mark.xfail(strict=True, reason=f.known_bug)]
                                             if f.known_bug else []) for f in MATRIX])
def test_fault_ends_cleanly(fc: FaultCase, reference):
    out = run_fault(fc)
    assert verdict(fc, out, reference) is None
    assert out.seconds <= fc.deadline_s + 5


@pytest.mark.parametrize("arm, words", [
    (lambda lv: lv.logging.fail(403, times=100), "roles/logging.viewer"),
    (lambda lv: setattr(lv.kube, "deny", 401), "get-credentials"),
], ids=["logging-403", "kube-401"])
def test_fault_errors_are_one_line_in_the_cli(arm, words, capsys):
    with LiveCase(BASE) as lv:
        arm(lv)
        rc = main(["diagnose", "--project", lv.project, "--location", lv.location, "--cluster", lv.cluster,
                   "--jobset", lv.jobset, "--start", lv.start, "--end", lv.end, "--format", "json",
                   "--logging-endpoint", lv.logging_url, "--kube-server", lv.kube_url])
    out = capsys.readouterr()
    error = json.loads(out.out)["error"]  # --format json: the error is JSON on stdout, one line of message
    assert rc == 2 and "Traceback" not in out.err and words in error["message"] and "\n" not in error["message"]
    assert error["code"] == "source_error"
