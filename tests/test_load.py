"""Load: MCP clients calling every tool at once, and live diagnoses in parallel against the fakes, give the same
answers as one call at a time, without errors. Memory is measured by `python -m pathways_workload.evals.reliability`, not here."""

from __future__ import annotations

from pathways_workload.evals.load import CASES, live_parallel, mcp_concurrent


def test_mcp_answers_concurrent_clients():
    out = mcp_concurrent(clients=3, cases=CASES[:2])
    assert out["calls"] == 3 * 2 * 6
    assert not out["errors"] and not out["mismatches"], out


def test_live_diagnoses_in_parallel():
    out = live_parallel(diagnoses=12, threads=6)
    assert not out["errors"] and out["mismatches"] == 0, out
    assert out["entries_list_requests"] > 12
