"""diagnose --log-analytics: the real google-cloud-bigquery client against a loopback BigQuery fake (sqlglot's
BigQuery-to-DuckDB transpiler over the fixture's entries in a table shaped like `_AllLogs`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("google.cloud.bigquery", reason="--log-analytics needs google-cloud-bigquery (see README)")

from pathways_workload.evals.fakes.bigquery_server import BigQueryServer, FakeBigQuery  # noqa: E402
from pathways_workload.evals.fakes.live_case import LiveCase  # noqa: E402
from pathways_workload.skill.diagnose_live import diagnose_log_analytics  # noqa: E402
from pathways_workload.skill.errors import InputError, SourceError  # noqa: E402
from pathways_workload.skill.reading.evaluate import compile_filter  # noqa: E402
from pathways_workload.skill.reading.sources.base import LogQuery  # noqa: E402
from pathways_workload.skill.reading.sources.log_analytics import _FIELDS, LogAnalyticsSource, loosen  # noqa: E402
from pathways_workload.skill.reading.query import parse  # noqa: E402
from tests.conftest import CASES, expected  # noqa: E402

DATASET = "logs-project.pathways_logs"
EQUAL_CASES = [c for c in CASES if c.name in ("case-001", "case-004", "case-010")]


class Case:
    """A fixture served twice: its entries as `_AllLogs` in FakeBigQuery, its objects by the Kubernetes fake."""

    def __init__(self, case: Path):
        self.lv = LiveCase(case)
        self.bq = FakeBigQuery(self.lv.entries, project="logs-project", dataset="pathways_logs")

    def __enter__(self):
        self.lv.__enter__()
        self.srv = BigQueryServer(self.bq).__enter__()
        return self

    def __exit__(self, *exc):
        self.srv.__exit__(*exc)
        self.lv.__exit__(*exc)

    def diagnose(self, **kw):
        lv = self.lv
        args = dict(namespace=lv.namespace, start=lv.start, end=lv.end, location=lv.location, kube=True,
                    project=lv.project, kube_server=lv.kube_url, bigquery_endpoint=self.srv.url,
                    monitoring_endpoint=lv.monitoring_url)
        return diagnose_log_analytics(DATASET, lv.cluster, lv.jobset, **{**args, **kw})


@pytest.mark.parametrize("case", EQUAL_CASES, ids=[c.name for c in EQUAL_CASES])
def test_log_analytics_equals_replay(case, replayed):
    with Case(case) as c:
        d = c.diagnose()
    replay = replayed.diagnosis(case)
    assert (d.failure_class, d.status) == (replay.failure_class, replay.status)
    assert [e.id for e in d.evidence] == [e.id for e in replay.evidence]
    assert d.failure_class == expected(case)["failure_class"]
    jobs = c.bq.query_jobs
    assert d.budget.logging_requests == len(jobs) > 0
    dry = [r for r in c.bq.requests if r.method == "POST" and (r.body.get("configuration") or {}).get("dryRun")]
    assert len(dry) == len(jobs)  # one dry run before every query
    scanned = sum(int(j["statistics"]["totalBytesProcessed"]) for j in jobs)
    line = next(g for g in d.data_gaps if g.startswith("Log Analytics: "))
    assert f"{len(jobs)} BigQuery queries on {DATASET}._AllLogs scanned {scanned:,} bytes" in line
    assert all("_AllLogs" in sql and sql.lstrip().startswith("SELECT") for sql in c.bq.sql_received)
    # one scan for phases one to three (the node reads and presence probes answered from its rows), one for four/five
    assert len(jobs) <= 2
    one_scan = sum(c.bq.column_bytes[col] for col in _FIELDS)
    assert scanned <= 2 * one_scan
    assert all(" WHERE timestamp >= " in sql for sql in c.bq.sql_received)  # the window is a top-level range


def test_max_bytes_refuses_before_any_query_runs():
    with Case(EQUAL_CASES[0]) as c:
        with pytest.raises(SourceError) as err:
            c.diagnose(max_bytes=1000)
    msg = str(err.value)
    assert "\n" not in msg and "'control-plane and 12 more'" in msg and "above --max-bytes 1,000" in msg
    assert not c.bq.query_jobs  # only the dry run went out


def test_sql_error_is_a_data_gap():
    with Case(EQUAL_CASES[0]) as c:
        c.bq.fail_sql = 1
        d = c.diagnose()
    # the one scan of phase one was refused; its queries were then read one by one, as before scans were combined
    assert any(g.startswith("Log Analytics refused query 'control-plane and 12 more' (HTTP 400") for g in d.data_gaps)
    assert d.failure_class == expected(EQUAL_CASES[0])["failure_class"]


def test_unknown_dataset_is_one_line():
    with Case(EQUAL_CASES[0]) as c:
        with pytest.raises(SourceError) as err:
            diagnose_log_analytics(
                "logs-project.nope", c.lv.cluster, c.lv.jobset, start=c.lv.start, end=c.lv.end,
                bigquery_endpoint=c.srv.url)
    assert "not found" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(InputError):
        LogAnalyticsSource("not a dataset", client=object())


def test_undecided_and_uncompilable_filters_match_the_reference():
    """SQL NULL rows (non-ASCII under ':') and a SEARCH (no SQL form: fetched wider) are decided by skill.reading.query."""
    with Case(EQUAL_CASES[0]) as c:
        src = LogAnalyticsSource(DATASET, endpoint=c.srv.url)
        window = f'timestamp>="{c.lv.start}" timestamp<="{c.lv.end}"'
        filters = {"folded": f'{window} textPayload:"Ä"',
                   "search": f'{window} resource.type="k8s_container" SEARCH("error")',
                   "not-search": f'{window} NOT SEARCH("error")',
                   "limited": f'{window} SEARCH("error")'}
        got = {}
        for name, f in filters.items():
            q = LogQuery(name, f, "desc" if name == "limited" else "asc", 5 if name == "limited" else None)
            got[name] = [e["insertId"] for _, e in src.read([q])]
    for name, f in filters.items():
        ref = compile_filter(f)
        want = [e["insertId"] for e in c.lv.entries if ref(e)]
        if name == "limited":
            assert len(got[name]) == min(5, len(want)) and set(got[name]) <= set(want)
        else:
            assert sorted(got[name]) == sorted(want), name
    assert src.usage.loosened == 3 and src.usage.decided_here > 0
    assert loosen(parse('severity="ERROR" SEARCH("x")')) is not None and loosen(parse('NOT SEARCH("x")')) is None


def test_cli_log_analytics_one_line_errors(capsys, monkeypatch):
    from pathways_workload.cli import main

    assert main(["diagnose", "--log-analytics", "nodot", "--cluster", "c", "--jobset", "j", "--format", "json"]) == 2
    assert "PROJECT.DATASET" in json.loads(capsys.readouterr().out)["error"]["message"]
    with Case(EQUAL_CASES[0]) as c:
        monkeypatch.setenv("PATHWAYS_WORKLOAD_BIGQUERY_ENDPOINT", c.srv.url)
        rc = main(["diagnose", "--log-analytics", DATASET, "--cluster", c.lv.cluster, "--jobset", c.lv.jobset,
                   "--start", c.lv.start, "--end", c.lv.end, "--max-bytes", "10", "--format", "json", "--verbose"])
    out, err = capsys.readouterr()
    assert rc == 2 and "above --max-bytes 10" in json.loads(out)["error"]["message"]
    assert "[log-analytics]" in err and "dry run" in err
