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

Failing fast: every call gets the diagnosis's Deadline (the API timeout and the client's retry series end with it),
and only 429/500/502/503/504 and transient network errors are retried; an endpoint no connection could be made to
(refused, unknown host, TLS, connect timeout) before it ever answered is one SourceError at once, as in
cloud_logging.py, instead of google-cloud-bigquery's default ten-minute retry series.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from ...errors import InputError, SourceError
from ..query import And, Node, Not, Or, parse
from ..evaluate import compile_filter
from ..records import parse_ts
from ..sql import ALL_LOGS, Uncompilable, compile_sql
from .base import LogQuery, SourceStats, connection_failure, google_client
from .cloud_logging import Deadline

if TYPE_CHECKING:
    from sqlglot.expressions import Expression

Progress = Callable[[str], None]
DEFAULT_ENDPOINT = "https://bigquery.googleapis.com"
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
    decided_here: int = 0  # rows skill.reading.query decided (SQL NULL or a loosened query)


def parse_dataset(text: str) -> tuple[str, str]:
    """'PROJECT.DATASET' -> (project, dataset); InputError for anything else."""
    m = _DATASET.fullmatch(str(text or "").strip())
    if not m:
        raise InputError(f"--log-analytics {text!r}: expected PROJECT.DATASET, the BigQuery dataset linked to a "
                         "Log Analytics bucket (e.g. my-project.pathways_logs)")
    return m["project"], m["dataset"]


def make_bigquery_client(project: str, endpoint: str | None = None, location: str | None = None):
    """A google.cloud.bigquery Client: ADC, or anonymous for a plain http:// endpoint (an emulator or a fake)."""
    try:
        from google.cloud import bigquery
    except ImportError as err:
        raise SourceError("--log-analytics needs google-cloud-bigquery: pip install google-cloud-bigquery "
                          "(see README, 'Log Analytics')") from err
    options = {"api_endpoint": endpoint.rstrip("/")} if endpoint else None
    return google_client(bigquery.Client, endpoint, project=project, client_options=options, location=location)


def loosen(node: Node) -> Node | None:
    """A filter matching at least what node matches, built only from parts with an exact SQL form; None: none is."""
    match node:
        case And(items):
            kept = [k for k in (loosen(i) for i in items) if k is not None]
            return And(tuple(kept)) if kept else None
        case Or(items):
            loose = [loosen(i) for i in items]
            return None if any(k is None for k in loose) else Or(tuple(cast(list[Node], loose)))
        case Not(item):
            return node if _exact(item) else None
    return node if _exact(node) else None


def _exact(node: Node) -> bool:
    try:
        compile_sql(node, ALL_LOGS)
        return True
    except Uncompilable:
        return False


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


class LogAnalyticsSource:
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

    def objects(self) -> list[dict]:
        return []

    def read(self, queries: Sequence[LogQuery]) -> Iterator[tuple[LogQuery, dict]]:
        try:
            for q in queries:
                yield from self._read_one(q)
        finally:
            self._account()

    # -- one query ------------------------------------------------------------------------------------------

    def sql(self, q: LogQuery, limit: int | None) -> tuple[str, bool]:
        """The BigQuery SQL for q (LIMIT `limit`), and whether its WHERE is q's filter exactly (not loosened)."""
        if q.filter not in self._where:
            node = parse(q.filter)
            pred: Expression | None
            try:
                pred, exact = compile_sql(node, ALL_LOGS), True
            except Uncompilable:
                looser, exact = loosen(node), False
                pred = compile_sql(looser, ALL_LOGS) if looser is not None else None
            self._where[q.filter] = ("TRUE" if pred is None else pred.sql(dialect="bigquery")), exact
        cond, exact = self._where[q.filter]
        way = "DESC" if q.order == "desc" else "ASC"
        cols = ", ".join(_FIELDS)
        return (f"SELECT {cols}, p IS NULL AS unsure FROM (SELECT {cols}, ({cond}) AS p FROM `{self.table}`) "
                f"WHERE p IS NOT FALSE ORDER BY timestamp {way}, insert_id {way}"
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

    def _left(self) -> float:
        return max(0.5, self.deadline.remaining())

    def _timeout(self) -> float:
        """One HTTP request's timeout: the per-request limit, within what is left of the deadline."""
        return min(self.timeout_s, self._left())

    def _retry(self):
        """google-cloud-bigquery's retry for one call: transient failures only, ending with the deadline."""
        from google.api_core.retry import Retry

        return Retry(predicate=self._transient, initial=1.0, maximum=8.0, timeout=self._left())

    def _transient(self, err: BaseException) -> bool:
        """Worth another attempt: 429/500/502/503/504, or a network error once the endpoint has answered."""
        from google.api_core import exceptions as gx
        import requests

        if isinstance(err, (gx.TooManyRequests, gx.InternalServerError, gx.BadGateway, gx.ServiceUnavailable,
                            gx.GatewayTimeout)):
            self.answered = True
            return True
        if isinstance(err, (requests.exceptions.ConnectionError, requests.exceptions.Timeout)):
            return self.answered or connection_failure(err) is None
        return False

    def _failure(self, err: Exception, q: LogQuery) -> Exception:
        """A SourceError for an endpoint that cannot be reached or a deadline that passed; else `err` itself."""
        from google.api_core import exceptions as gx
        import requests

        why = connection_failure(err)
        if why and not self.answered:
            return SourceError(self._unreachable(why))
        if isinstance(err, (gx.RetryError, requests.exceptions.ConnectionError, requests.exceptions.Timeout,
                            gx.ServerError, gx.TooManyRequests, gx.DeadlineExceeded, TimeoutError)) \
                or self.deadline.expired():
            cause = getattr(err, "cause", None) or err
            last = _short(f"{type(cause).__name__}: {cause}", 120)
            return SourceError(f"Log Analytics query {q.name!r} on {self.table} did not finish within the "
                               f"{self.deadline.seconds:g} s --deadline ({last}): retry later, raise --deadline or "
                               "narrow the window")
        return err

    def _unreachable(self, why: str) -> str:
        """One line for an endpoint no connection could be made to, with what to check for that kind of failure."""
        flag = "--bigquery-endpoint (or PATHWAYS_WORKLOAD_BIGQUERY_ENDPOINT)"
        given = self.endpoint is not None
        fix = {
            "connection refused": f"nothing listens there: check {flag}, or leave it unset for the real API"
                                  if given else "check the network and proxy (HTTPS_PROXY) settings",
            "unknown host": f"the host name does not resolve: check {flag} and DNS" if given
                            else "the host name does not resolve: check DNS and the proxy (HTTPS_PROXY) settings",
            "TLS handshake failed": "check the scheme (http:// for a plain-HTTP emulator) and the CA bundle "
                                    "(REQUESTS_CA_BUNDLE)",
        }.get(why, "check the network path and proxy (HTTPS_PROXY) settings" + (f", and {flag}" if given else ""))
        return f"cannot reach BigQuery at {self.endpoint or DEFAULT_ENDPOINT} ({why}): {fix}"

    def _account(self) -> None:
        """The one data_gaps line that says what the BigQuery side did (replaced as the reads go on)."""
        u = self.usage
        line = (f"Log Analytics: {u.queries} BigQuery queries on {self.table} scanned {u.bytes_scanned:,} bytes "
                f"({u.dry_runs} dry runs estimated {u.bytes_estimated:,}; largest {u.largest[0] or '-'} "
                f"{u.largest[1]:,})" + (f"; limit --max-bytes {self.max_bytes:,} per query" if self.max_bytes
                                         is not None else "")
                + (f"; {u.loosened} queries fetched wider and filtered exactly here" if u.loosened else "")
                + (f"; {u.decided_here} rows decided by the reference evaluator" if u.decided_here else ""))
        if self._summary in self.stats.gaps:
            self.stats.gaps[self.stats.gaps.index(self._summary)] = line
        else:
            self.stats.gaps.append(line)
        self._summary = line


def _short(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"
