"""Log entries from a Log Analytics linked dataset (`PROJECT.DATASET._AllLogs`), through google-cloud-bigquery.

Each LogQuery's filter is compiled by skill.reading.sql (target ALL_LOGS) into one BigQuery boolean and run as

    SELECT <the LogEntry columns>, p IS NULL AS unsure
    FROM (SELECT <the LogEntry columns>, (<pred>) AS p FROM `P.D._AllLogs`)
    WHERE p IS NOT FALSE ORDER BY timestamp <dir>, insert_id <dir> LIMIT <n>

so BigQuery returns every row that matches and every row the SQL cannot decide; `unsure` rows are decided by
skill.reading.query (the reference evaluator) on the LogEntry rebuilt from the row. A filter with a part that has no exact
SQL form (`Uncompilable`) is loosened: that part is dropped where dropping it only widens the match (a conjunct of
an AND; an OR or NOT around it is dropped whole), the wider set is fetched without LIMIT, and every row is decided
by skill.reading.query, then ordered and cut to the query's limit here. The engine sees the same LogEntry dicts as from
Cloud Logging (camelCase; timestamps at BigQuery's microseconds).

Cost: before each query a dry run (QueryJobConfig(dry_run=True)) reports the bytes it would scan; above `max_bytes`
the diagnosis stops with a one-line SourceError naming the query. The queries run, the bytes scanned and the dry
runs' estimate are kept in `usage` and written as one line of data_gaps. A query BigQuery refuses (HTTP 400: a SQL
error) is a data gap naming it; a missing dataset, a refused permission or missing credentials are SourceErrors.

Failing fast (every call bounded by the diagnosis's Deadline): skill.reading.sources.bq_calls.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import InputError, SourceError
from ..query import parse, parse_cached
from .plan import _fields
from .scan import ROUTING, conjuncts, loosen, ordered, scan_sql, time_terms, way
from ..evaluate import compile_filter
from ..records import parse_ts
from ..sql import ALL_LOGS, Uncompilable, compile_sql
from .base import LogQuery, SourceStats
from .bq_calls import FailFast, _short, make_bigquery_client
from .cloud_logging import Deadline

if TYPE_CHECKING:
    from sqlglot.expressions import Expression

Progress = Callable[[str], None]
_DATASET = re.compile(r"(?P<project>[a-z][-a-z0-9]{4,28}[a-z0-9](?::[a-z][-a-z0-9]*)?)\.(?P<dataset>[A-Za-z0-9_]{1,1024})")
# _AllLogs column -> LogEntry field, in the order selected
_FIELDS = {"insert_id": "insertId", "timestamp": "timestamp", "receive_timestamp": "receiveTimestamp",
           "severity": "severity", "log_name": "logName", "resource": "resource", "labels": "labels",
           "text_payload": "textPayload", "json_payload": "jsonPayload", "proto_payload": "protoPayload",
           "trace": "trace", "span_id": "spanId"}


@dataclass
class Usage:
    """What the BigQuery side cost: jobs run, bytes they scanned, dry runs and what those estimated."""

    queries: int = 0
    bytes_scanned: int = 0
    dry_runs: int = 0
    bytes_estimated: int = 0
    largest: tuple[str, int] = ("", 0)  # the query with the largest estimate
    loosened: int = 0  # queries fetched through a looser SQL filter (a part was Uncompilable)
    answered_here: int = 0  # queries answered from rows an earlier scan fetched for a template containing them
    decided_here: int = 0  # rows skill.reading.query decided (SQL NULL or a loosened query)


def parse_dataset(text: str) -> tuple[str, str]:
    """'PROJECT.DATASET' -> (project, dataset); InputError for anything else."""
    m = _DATASET.fullmatch(str(text or "").strip())
    if not m:
        raise InputError(f"--log-analytics {text!r}: expected PROJECT.DATASET, the BigQuery dataset linked to a "
                         "Log Analytics bucket (e.g. my-project.pathways_logs)")
    return m["project"], m["dataset"]


def _ts(value) -> str | None:
    """A BigQuery TIMESTAMP (a UTC datetime) in Cloud Logging's spelling: Z, and 0, 3 or 6 fractional digits."""
    if not isinstance(value, dt.datetime):
        return None
    value = value.astimezone(dt.UTC)
    frac = "" if not value.microsecond else (f".{value.microsecond // 1000:03d}" if not value.microsecond % 1000
                                             else f".{value.microsecond:06d}")
    return f"{value:%Y-%m-%dT%H:%M:%S}{frac}Z"


def to_entry(row) -> dict:
    """An _AllLogs row as a LogEntry dict (camelCase, absent fields left out)."""
    entry: dict = {}
    for col, name in _FIELDS.items():
        value = row.get(col)
        if col in ("timestamp", "receive_timestamp"):
            value = _ts(value)
        elif col == "resource" and isinstance(value, dict):
            value = {k: v for k, v in (("type", value.get("type")), ("labels", value.get("labels"))) if v is not None}
        if value is not None:
            entry[name] = value
    return entry


class LogAnalyticsSource(FailFast):
    """Answers the engine's LogQuery filters with BigQuery SQL over a Log Analytics linked dataset's `_AllLogs`."""

    def __init__(self, dataset: str, *, project: str | None = None, location: str | None = None,
                 endpoint: str | None = None, client=None, max_bytes: int | None = None,
                 max_rows_per_query: int = 100_000, timeout_s: float = 120.0, progress: Progress | None = None,
                 deadline: Deadline | None = None):
        data_project, name = parse_dataset(dataset)
        if max_bytes is not None and max_bytes < 0:
            raise InputError(f"--max-bytes {max_bytes}: must be 0 or more")
        self.table = f"{data_project}.{name}._AllLogs"
        self.project = project or data_project  # the project that runs (and pays for) the jobs
        self.location = location
        self.client = client or make_bigquery_client(self.project, endpoint, location)
        self.max_bytes, self.max_rows, self.timeout_s = max_bytes, max_rows_per_query, timeout_s
        self.endpoint = endpoint
        self.deadline = deadline or Deadline(timeout_s)
        self.answered = False  # an HTTP status came back: the endpoint is there, a later connection error is transient
        self.progress = progress or (lambda _m: None)
        self.stats = SourceStats()
        self.usage = Usage()
        self._summary: str | None = None
        self._where: dict[str, tuple[str, bool]] = {}  # filter -> (its SQL condition, exact)
        self._expected: list[LogQuery] = []  # templates announced by expect()
        self._fetched: list[tuple[LogQuery, list | None]] = []  # templates fetched (None: refused or cut short)
        self._alone: set[LogQuery] = set()  # queries to read with a job of their own

    def objects(self) -> list[dict]:
        return []

    def expect(self, queries: Sequence[LogQuery]) -> None:
        """Queries the engine may send later, each wider than what it will send (a template: the later query is this
        filter AND more terms). Their rows are fetched with the next scan, so a later query they contain is answered
        here without another scan of the table. A template with `per_route` keeps only its newest (or oldest) `limit`
        rows of each route (logName, resource, labels): it answers a later query whose extra terms read only those
        fields and whose limit is no larger (the presence probes)."""
        self._expected += [q for q in queries if q not in self._expected]

    def read(self, queries: Sequence[LogQuery]) -> Iterator[tuple[LogQuery, dict]]:
        """Every query's entries: those a fetched template answers from its rows, the rest (with any templates still
        to fetch) tagged in one BigQuery scan of the window."""
        try:
            local = {q: self._cached(q) for q in queries}
            todo = [q for q in queries if local[q] is None]
            fetched = self._scan(todo) if todo else {}
            for q in queries:
                got = local[q] if local[q] is not None else fetched.get(q)
                if got is None:  # refused (a gap says so) or to be read on its own
                    if q in self._alone:
                        yield from self._read_one(q)
                    continue
                for e in got:
                    yield q, self._count(e)
                self.progress(f"Log Analytics: {q.name}: {len(got)} entries")
        finally:
            self._account()

    def _count(self, e: dict) -> dict:
        ts = parse_ts(e.get("timestamp")) or parse_ts(e.get("receiveTimestamp"))
        if ts:
            self.stats.last_ts = max(self.stats.last_ts, ts)
            self.stats.first_ts = min(self.stats.first_ts, ts) if self.stats.first_ts else ts
        self.stats.entries_read += 1
        return e

    # -- one scan for many queries ------------------------------------------------------------------------------

    def _cached(self, q: LogQuery) -> list[dict] | None:
        """q's entries from a fetched template that contains it, or None."""
        items = set(conjuncts(parse_cached(q.filter)))
        for t, rows in self._fetched:
            if rows is None:
                continue
            extra = items - set(conjuncts(parse_cached(t.filter)))
            if not items >= set(conjuncts(parse_cached(t.filter))):
                continue
            if t.per_route and not (q.limit and t.limit and q.limit <= t.limit and q.order == t.order and
                                    all((f := _fields(x)) is not None and f <= ROUTING for x in extra)):
                continue
            test = compile_filter(q.filter)
            keep = [r for r in rows if test(to_entry(r))]
            self.usage.answered_here += 1
            return self._cut(q, ordered(keep, q.order))
        return None

    def _cut(self, q: LogQuery, rows: list) -> list[dict]:
        if q.limit:
            rows = rows[:q.limit]
        elif len(rows) > self.max_rows:
            rows = rows[:self.max_rows]
            self.stats.gap(f"Log Analytics query {q.name!r} cut short at {self.max_rows} rows (the per-query cap); "
                           f"later entries were not read")
        return [to_entry(r) for r in rows]

    def _scan(self, queries: list[LogQuery]) -> dict[LogQuery, list[dict]]:
        """One BigQuery job for `queries` and the templates not fetched yet: each row tagged with the ones it may
        match (within each one's LIMIT, ranked as its own query would be), the window a top-level timestamp range."""
        templates = [t for t in self._expected if t not in [f for f, _ in self._fetched]]
        tagged = [*queries, *templates]
        conds, exact = zip(*(self._condition(q) for q in tagged))
        # a query's own LIMIT where exact; a template per route: its limit; else the per-query cap (+1: was it hit?)
        limits = [q.limit if q.limit and (ok or q.per_route) else self.max_rows + 1 for q, ok in zip(tagged, exact)]
        sql = scan_sql(self.table, list(_FIELDS), tagged, conds, limits)
        name = queries[0].name + (f" and {len(tagged) - 1} more" if len(tagged) > 1 else "")
        rows = self._run(LogQuery(name, ""), sql)
        if rows is None:  # refused: each query is read with a job of its own, as before the scans were combined
            self._fetched += [(t, None) for t in templates]
            self._alone.update(queries)
            return {}
        out: dict[LogQuery, list[dict]] = {}
        for k, q in enumerate(tagged):
            mine = [r for r in rows if r.get(f"m{k}")]
            if q in templates:  # kept only when it holds every row it stands for: not cut by the row cap, and
                # when ranked per route, no undecided row (one the reference may reject) took a route's place
                whole = exact[k] and (not any(r.get(f"u{k}") for r in mine) if q.per_route
                                      else len(mine) <= self.max_rows)
                self._fetched.append((q, mine if whole else None))
                continue
            if not exact[k]:
                self.usage.loosened += 1
            test = None
            keep, rejected = [], 0
            for r in mine:
                if exact[k] and not r.get(f"u{k}"):
                    keep.append(r)
                    continue
                test = test or compile_filter(q.filter)
                self.usage.decided_here += 1
                if test(to_entry(r)):
                    keep.append(r)
                else:
                    rejected += 1
            if exact[k] and q.limit and rejected and len(mine) >= q.limit:
                self._alone.add(q)  # undecided rows took places of its LIMIT and were not matches: read it alone
                continue
            if len(mine) > self.max_rows and not (exact[k] and q.limit):
                keep = keep[:self.max_rows + 1]
            out[q] = self._cut(q, ordered(keep, q.order))
        return out

    def _condition(self, q: LogQuery) -> tuple[str, bool]:
        """q's filter as a BigQuery condition (loosened to a superset when a part has no SQL form), and whether exact."""
        if q.filter not in self._where:
            node = parse(q.filter)
            pred: Expression | None
            try:
                pred, exact = compile_sql(node, ALL_LOGS), True
            except Uncompilable:
                looser, exact = loosen(node), False
                pred = compile_sql(looser, ALL_LOGS) if looser is not None else None
            self._where[q.filter] = ("TRUE" if pred is None else pred.sql(dialect="bigquery")), exact
        return self._where[q.filter]

    def one_scan_bytes(self, start_ns: int, end_ns: int) -> int:
        """What one scan of the window's LogEntry columns would process (a dry run): the yardstick for a diagnosis."""
        from google.cloud import bigquery

        t = time_terms(start_ns, end_ns)
        sql = f"SELECT {', '.join(_FIELDS)} FROM `{self.table}` WHERE {t}"
        dry = self.client.query(sql, job_config=bigquery.QueryJobConfig(dry_run=True, use_query_cache=False),
                                location=self.location, timeout=self.timeout_s)
        return int(dry.total_bytes_processed or 0)

    # -- one query ------------------------------------------------------------------------------------------

    def sql(self, q: LogQuery, limit: int | None) -> tuple[str, bool]:
        """The BigQuery SQL for q (LIMIT `limit`), and whether its WHERE is q's filter exactly (not loosened)."""
        cond, exact = self._condition(q)
        order = way(q)
        cols = ", ".join(_FIELDS)
        return (f"SELECT {cols}, p IS NULL AS unsure FROM (SELECT {cols}, ({cond}) AS p FROM `{self.table}`) "
                f"WHERE p IS NOT FALSE ORDER BY timestamp {order}, insert_id {order}"
                + (f" LIMIT {limit}" if limit else "")), exact

    def _read_one(self, q: LogQuery) -> Iterator[tuple[LogQuery, dict]]:
        cap = self.max_rows
        sql, exact = self.sql(q, None)
        if exact and q.limit:
            sql, _ = self.sql(q, q.limit)
        else:
            sql, _ = self.sql(q, cap + 1)
            self.usage.loosened += not exact
        rows = self._run(q, sql)
        if rows is None:
            return
        entries, rejected = self._decide(q, rows, exact)
        if exact and q.limit and rejected and len(rows) >= q.limit:
            # undecided rows took places of the LIMIT and were not matches: read the query again without it
            sql, _ = self.sql(q, cap + 1)
            rows = self._run(q, sql)
            if rows is None:
                return
            entries, _ = self._decide(q, rows, exact)
        if len(rows) > cap:
            entries = entries[:cap]
            if not q.limit:
                self.stats.gap(f"Log Analytics query {q.name!r} cut short at {cap} rows (the per-query cap); "
                               f"later entries were not read")
        if q.limit:
            entries = entries[:q.limit]
        for e in entries:
            ts = parse_ts(e.get("timestamp")) or parse_ts(e.get("receiveTimestamp"))
            if ts:
                self.stats.last_ts = max(self.stats.last_ts, ts)
                self.stats.first_ts = min(self.stats.first_ts, ts) if self.stats.first_ts else ts
            self.stats.entries_read += 1
            yield q, e
        self.progress(f"Log Analytics: {q.name}: {len(entries)} entries")

    def _decide(self, q: LogQuery, rows: list, exact: bool) -> tuple[list[dict], int]:
        """The rows' LogEntries that match q: SQL TRUE as is, the others through skill.reading.query."""
        reference = None
        out, rejected = [], 0
        for row in rows:
            entry = to_entry(row)
            if exact and not row.get("unsure"):
                out.append(entry)
                continue
            reference = reference or compile_filter(q.filter)
            self.usage.decided_here += 1
            if reference(entry):
                out.append(entry)
            else:
                rejected += 1
        return out, rejected

    def _run(self, q: LogQuery, sql: str) -> list | None:
        """Dry run, the --max-bytes check, then the query's rows; None (and a gap) when BigQuery refuses the SQL."""
        from google.api_core import exceptions as gx
        from google.auth import exceptions as auth_x
        from google.cloud import bigquery

        try:
            dry = self.client.query(sql, job_config=bigquery.QueryJobConfig(dry_run=True, use_query_cache=False),
                                    location=self.location, timeout=self._timeout(), retry=self._retry(),
                                    job_retry=None)
            self.answered = True
            estimate = int(dry.total_bytes_processed or 0)
            self.usage.dry_runs += 1
            self.usage.bytes_estimated += estimate
            if estimate > self.usage.largest[1]:
                self.usage.largest = (q.name, estimate)
            self.progress(f"Log Analytics: {q.name}: dry run: {estimate:,} bytes to scan")
            if self.max_bytes is not None and estimate > self.max_bytes:
                raise SourceError(f"Log Analytics query {q.name!r} would scan {estimate:,} bytes of {self.table}, "
                                  f"above --max-bytes {self.max_bytes:,}: narrow the window (--start/--end) or "
                                  "raise the limit")
            rows = self.client.query_and_wait(sql, location=self.location, wait_timeout=self._left(),
                                              api_timeout=self._timeout(), retry=self._retry(),
                                              job_retry=self._retry())
            out = list(rows)
            self.usage.queries += 1
            self.stats.logging_requests += 1
            self.usage.bytes_scanned += int(getattr(rows, "total_bytes_processed", None) or estimate)
            return out
        except gx.BadRequest as err:
            self.stats.gap(f"Log Analytics refused query {q.name!r} (HTTP 400: {_short(err.message, 160)}); "
                           "nothing of it was read")
            return None
        except gx.NotFound as err:
            raise SourceError(f"Log Analytics: {self.table} not found (HTTP 404: {_short(err.message, 120)}): check "
                              "--log-analytics PROJECT.DATASET (the linked dataset) and --location") from err
        except gx.Forbidden as err:
            raise SourceError(f"permission denied running BigQuery jobs on {self.table} (HTTP 403): the caller needs "
                              f"roles/bigquery.jobUser on project {self.project} and roles/bigquery.dataViewer on the "
                              "linked dataset") from err
        except gx.Unauthorized as err:
            raise SourceError("BigQuery rejected the credentials (HTTP 401): run "
                              "`gcloud auth application-default login`") from err
        except (auth_x.RefreshError, auth_x.DefaultCredentialsError, auth_x.TransportError) as err:
            raise SourceError("Google Cloud credentials could not be used for BigQuery (" + _short(str(err), 120)
                              + "): run `gcloud auth application-default login`") from err
        except Exception as err:  # noqa: BLE001 - _failure re-raises all but a connection or a deadline failure
            raise self._failure(err, q) from err

    def _account(self) -> None:
        """The one data_gaps line that says what the BigQuery side did (replaced as the reads go on)."""
        u = self.usage
        line = (f"Log Analytics: {u.queries} BigQuery queries on {self.table} scanned {u.bytes_scanned:,} bytes "
                f"({u.dry_runs} dry runs estimated {u.bytes_estimated:,}; largest {u.largest[0] or '-'} "
                f"{u.largest[1]:,})" + (f"; limit --max-bytes {self.max_bytes:,} per query" if self.max_bytes
                                         is not None else "")
                + (f"; {u.answered_here} queries answered from an earlier scan's rows" if u.answered_here else "")
                + (f"; {u.loosened} queries fetched wider and filtered exactly here" if u.loosened else "")
                + (f"; {u.decided_here} rows decided by the reference evaluator" if u.decided_here else ""))
        if self._summary in self.stats.gaps:
            self.stats.gaps[self.stats.gaps.index(self._summary)] = line
        else:
            self.stats.gaps.append(line)
        self._summary = line
