"""One measurement of one incident, run in its own process so sizes and modes don't pollute each other's RSS.

    python -m pathways_workload.bench.measure replay|scan|duckdb-scan|baseline|live|log-analytics FOLDER

Prints one JSON object on stdout. `replay` is the real path (skill.api), `scan` the exact reader's bare scan (split
and decode every element, nothing else), `duckdb-scan` DuckDB's, `baseline` the naive one (stdlib json and
one Python `re` search per catalog pattern per line), `live` the live path against the loopback fake Cloud Logging
and Kubernetes servers of evals/fakes (the fake evaluates each filter over the whole export).
"""

from __future__ import annotations

import json
import random
import re
import resource
import sys
import time
from pathlib import Path

BASELINE_CAP = 100_000  # entries the baseline reads; its rate per entry does not depend on the file size


def _rss_mib() -> float:
    """Peak RSS of this process image: VmHWM (getrusage's maxrss survives exec, so it would count the parent)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _verdict(d, analysis=None) -> dict:
    from pathways_workload.skill.understanding.digest import template

    by_id = {}
    if analysis is not None:
        by_id = {s.record.id: s.record for s in analysis.causes + analysis.symptoms}
    shape = {e.id: f"{e.source}|{template(by_id[e.id].text if e.id in by_id else e.excerpt)}" for e in d.evidence}
    root = d.hypotheses[0].evidence if d.hypotheses else []
    return {"failure_class": d.failure_class, "status": d.status,
            "entities": sorted(e.kind for e in d.root_cause.entities),
            "evidence_ids": [e.id for e in d.evidence], "evidence_templates": list(shape.values()),
            "root_evidence_templates": [shape.get(i, i) for i in root]}


def replay(folder: Path) -> dict:
    from pathways_workload.skill.api import analyse_replay
    from pathways_workload.skill.ask import render_tool_result
    from pathways_workload.skill.understanding.digest import digest_of, estimate_tokens
    from pathways_workload.skill.telling.explain import build

    t0, c0 = time.perf_counter(), _cpu()
    analysis = analyse_replay(folder, digest=True)
    d = build(analysis, logging_requests=0)
    seconds, cpu = time.perf_counter() - t0, _cpu() - c0
    digest = digest_of(analysis, d)
    # what skill.ask adds to the seeded diagnose result (the digest under "log_digest"), measured on the rendering
    received = (estimate_tokens(render_tool_result("diagnose", {**d.to_json_dict(), "log_digest": digest}))
                - estimate_tokens(render_tool_result("diagnose", d.to_json_dict())))
    return {"seconds": seconds, "cpu_seconds": cpu, "entries": analysis.stats.entries_read,
            "peak_rss_mib": _rss_mib(), "digest_tokens": received,
            "digest_groups": len(digest["groups"]), "digest_groups_total": digest["groups_total"],
            **_verdict(d, analysis)}


def _patterns() -> tuple[list[re.Pattern], int]:
    from pathways_workload.skill.catalog import CLASSES, MILESTONES, SYMPTOMS

    regexes = [p.regex for c in CLASSES for p in c.patterns] + [p.regex for s in SYMPTOMS for p in s.patterns]
    regexes += [m.pattern.regex for m in MILESTONES]
    out, bad = [], 0
    for rx in regexes:
        try:
            out.append(re.compile(rx, re.M))
        except re.error:  # RE2-only syntax; the baseline just has fewer patterns to run (flattering it)
            bad += 1
    return out, bad


def _iter_array(path: Path):
    """The elements of a JSON array, decoded one by one with the standard library."""
    dec = json.JSONDecoder()
    with open(path, encoding="utf-8") as f:
        buf, pos = f.read(1 << 20), 0
        pos = buf.index("[") + 1
        while True:
            while pos < len(buf) and buf[pos] in " \t\r\n,":
                pos += 1
            if pos < len(buf) and buf[pos] == "]":
                return
            try:
                obj, pos = dec.raw_decode(buf, pos)
            except json.JSONDecodeError:
                more = f.read(1 << 20)
                if not more:
                    return
                buf, pos = buf[pos:] + more, 0
                continue
            yield obj


def baseline(folder: Path) -> dict:
    pats, bad = _patterns()
    t0, c0, n, hits = time.perf_counter(), _cpu(), 0, 0
    for entry in _iter_array(folder / "logs.json"):
        jp = entry.get("jsonPayload") or {}
        text = entry.get("textPayload") or (jp.get("message") or jp.get("MESSAGE") or "" if isinstance(jp, dict) else "")
        for p in pats:
            if p.search(text):
                hits += 1
        n += 1
        if n >= BASELINE_CAP:
            break
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "cpu_seconds": _cpu() - c0, "entries": n, "entries_per_second": n / seconds,
            "patterns": len(pats), "patterns_python_re_rejects": bad, "hits": hits, "peak_rss_mib": _rss_mib()}


def live(folder: Path) -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from pathways_workload.skill.diagnose_live import diagnose_live
    from pathways_workload.skill.reading.records import format_ns, parse_ts
    from pathways_workload.skill.reading.sources.base import LogQuery
    from pathways_workload.skill.reading.sources.cloud_logging import Limits
    from pathways_workload.skill.reading.sources.replay import ReplaySource
    from pathways_workload.evals.fakes.kube_server import FakeKube, KubeServer, load_objects
    from pathways_workload.evals.fakes.logging_server import FakeLogging, LoggingServer

    source = ReplaySource(folder)
    inv = source.inventory()

    class FileLogging(FakeLogging):
        """The fake Cloud Logging over an export folder: each filter evaluated over every entry of it."""

        def matching(self, filt: str, order: str) -> list[dict]:
            key = (filt, order)
            if key not in self._cache:
                rows = [e for _q, e in source.read([LogQuery("fake", filt)])]
                rows.sort(key=lambda e: (parse_ts(e.get("timestamp")), e.get("insertId", "")),
                          reverse=order == "timestamp desc")
                self._cache[key] = rows
            return self._cache[key]

    project = inv.projects.most_common(1)[0][0]
    objects = load_objects(folder)
    jobset = next(o["metadata"]["name"] for o in objects if o.get("kind") == "JobSet")
    logging = FileLogging([], project=project)
    limits = Limits(backoff_initial_s=0.001, backoff_max_s=0.005, rate_per_minute=60_000, burst=1000)
    t0 = time.perf_counter()
    with LoggingServer(logging) as ls, KubeServer(FakeKube(objects)) as ks:
        d = diagnose_live(project, inv.locations.most_common(1)[0][0], inv.clusters.most_common(1)[0][0], jobset,
                          namespace="default", start=format_ns(source.stats.first_ts),
                          end=format_ns(source.stats.last_ts), logging_endpoint=ls.url, kube_server=ks.url,
                          limits=limits, rng=random.Random(7))
    pages: dict[str, list[int]] = {}
    for req in logging.list_requests:
        filt = (req.body or {}).get("filter", "")
        pages.setdefault(filt, []).append(req.entries)
    per_query = sorted(([len(v), sum(v), f[:90]] for f, v in pages.items()), reverse=True)
    return {"seconds": time.perf_counter() - t0, "live_requests": len(logging.list_requests),
            "live_pages_per_query": per_query,
            "live_entries_transferred": logging.entries_sent, "data_gaps": d.data_gaps, **_verdict(d)}


def log_analytics(folder: Path) -> dict:
    """The Log Analytics path (diagnose_log_analytics, the real google-cloud-bigquery client) against the loopback
    BigQuery fake holding the export as `_AllLogs` (loaded from the files by DuckDB), the objects from the Kubernetes
    fake: BigQuery jobs, bytes they processed (the fake bills every referenced column of the whole table, as on-demand
    BigQuery does without partition pruning), and one scan of the window's LogEntry columns for scale."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from pathways_workload.skill.diagnose_live import diagnose_log_analytics
    from pathways_workload.skill.reading.records import format_ns
    from pathways_workload.skill.reading.sources.log_analytics import _FIELDS, LogAnalyticsSource
    from pathways_workload.skill.reading.sources.replay import ReplaySource
    from pathways_workload.evals.fakes.bigquery_server import BigQueryServer, FakeBigQuery
    from pathways_workload.evals.fakes.kube_server import FakeKube, KubeServer, load_objects

    source = ReplaySource(folder)
    inv = source.inventory()
    objects = load_objects(folder)
    jobset = next(o["metadata"]["name"] for o in objects if o.get("kind") == "JobSet")
    t0 = time.perf_counter()
    bq = FakeBigQuery([], project="logs-project", dataset="pathways_logs", files=[str(p) for p in source._log_files])
    load = time.perf_counter() - t0
    t1, c1 = time.perf_counter(), _cpu()
    with BigQueryServer(bq) as srv, KubeServer(FakeKube(objects)) as ks:
        d = diagnose_log_analytics("logs-project.pathways_logs", inv.clusters.most_common(1)[0][0], jobset,
                                   namespace="default", start=format_ns(source.stats.first_ts),
                                   end=format_ns(source.stats.last_ts), location=inv.locations.most_common(1)[0][0],
                                   project=inv.projects.most_common(1)[0][0], kube=True, kube_server=ks.url,
                                   bigquery_endpoint=srv.url, deadline_s=3000)
        seconds, cpu = time.perf_counter() - t1, _cpu() - c1
        one = LogAnalyticsSource("logs-project.pathways_logs", endpoint=srv.url).one_scan_bytes(
            source.stats.first_ts, source.stats.last_ts)
    jobs = bq.query_jobs
    return {"seconds": seconds, "cpu_seconds": cpu, "load_seconds": load, "log_analytics_queries": len(jobs),
            "log_analytics_bytes": sum(int(j["statistics"]["totalBytesProcessed"]) for j in jobs),
            "log_analytics_one_scan_bytes": one, "columns_bytes": sum(bq.column_bytes[c] for c in _FIELDS),
            "rows": sum(len(j["_rows"]) for j in jobs), "peak_rss_mib": _rss_mib(), **_verdict(d)}


def scan(folder: Path) -> dict:
    """The exact reader's bare scan of the export's log files, its physical reference: every element split off on
    gcloud's layout and decoded with orjson (skill.reading.sources.files.iter_spans), nothing else."""
    from pathways_workload.skill.reading.sources.files import iter_spans
    from pathways_workload.skill.reading.sources.replay import ReplaySource

    files = ReplaySource(Path(folder))._log_files
    t0, c0 = time.perf_counter(), _cpu()
    n = sum(1 for path in files for _ in iter_spans(path))
    return {"seconds": time.perf_counter() - t0, "cpu_seconds": _cpu() - c0, "entries": n,
            "peak_rss_mib": _rss_mib()}


def duckdb_scan(folder: Path) -> dict:
    """DuckDB's bare scan of the same files on one thread, what a vectorised reader costs: read_json with the
    routing fields projected (payloads kept as JSON), a count, and one RE2 regexp over textPayload."""
    import duckdb

    from pathways_workload.skill.reading.sources.replay import ReplaySource

    files = [str(p) for p in ReplaySource(Path(folder))._log_files]
    t0, c0 = time.perf_counter(), _cpu()
    con = duckdb.connect(":memory:")
    con.execute("SET threads = 1")
    row = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE regexp_matches(textPayload, 'FATAL|Traceback|DEADLINE_EXCEEDED')) "
        "FROM read_json(?, format = 'auto', columns = {insertId: 'VARCHAR', timestamp: 'VARCHAR', "
        "severity: 'VARCHAR', logName: 'VARCHAR', resource: 'JSON', labels: 'JSON', textPayload: 'VARCHAR', "
        "jsonPayload: 'JSON'})", [files]).fetchone()
    assert row is not None  # a count always has a row
    n, hits = row
    return {"seconds": time.perf_counter() - t0, "cpu_seconds": _cpu() - c0, "entries": n, "hits": hits,
            "peak_rss_mib": _rss_mib()}


def main(argv: list[str] | None = None) -> int:
    mode, folder = (argv or sys.argv[1:])[:2]
    fn = {"replay": replay, "baseline": baseline, "live": live, "scan": scan, "duckdb-scan": duckdb_scan,
          "log-analytics": log_analytics}[mode]
    print(json.dumps(fn(Path(folder))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
