"""A loopback fake of the BigQuery v2 REST calls google-cloud-bigquery makes for a query, over one `_AllLogs` view.

Served: POST /projects/P/jobs (jobs.insert, with configuration.dryRun), POST /projects/P/queries (jobs.query),
GET /projects/P/jobs/ID (jobs.get), GET /projects/P/queries/ID (jobs.getQueryResults, paged), all under
/bigquery/v2. The received GoogleSQL is parsed by sqlglot's BigQuery dialect, the table `PROJECT.DATASET._AllLogs`
is swapped for a DuckDB table shaped like Log Analytics' view (timestamp TIMESTAMPTZ at microseconds, resource a
STRUCT of type and JSON labels, labels/json_payload/proto_payload JSON, text_payload, ...), JSON_TYPE is given
BigQuery's answers ('string', 'number', ...), and the rest is transpiled to DuckDB and run (RE2 regexes on both).
A dry run answers totalBytesProcessed as BigQuery bills on demand: the stored size of every column the query
references, over the whole table (no partition pruning here). A statement other than a SELECT, an unknown table,
or SQL that does not parse or run is a 400 invalidQuery / 404 notFound with the body shape the client parses.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
import uuid
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

import duckdb
import sqlglot
from sqlglot import exp

from .loopback import JSONHandler, LoopbackServer, Request

_STRICT_UTC = r"^\d{4}-\d\d-\d\dT([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?Z$"
_TEXT = "CASE WHEN json_type(raw, '{p}') = 'VARCHAR' THEN raw ->> '{p}' END"
_TS = ("CASE WHEN regexp_matches(raw ->> '{p}', '" + _STRICT_UTC.replace("{", "{{").replace("}", "}}")
       + "') THEN TRY_CAST(raw ->> '{p}' AS TIMESTAMPTZ) END")
# The _AllLogs columns the fake holds (a subset of the real view: the ones a LogEntry from GKE fills).
COLUMNS = {
    "timestamp": _TS.format(p="$.timestamp"),
    "receive_timestamp": _TS.format(p="$.receiveTimestamp"),
    "insert_id": _TEXT.format(p="$.insertId"),
    "severity": _TEXT.format(p="$.severity"),
    "log_name": _TEXT.format(p="$.logName"),
    "log_id": "regexp_extract(raw ->> '$.logName', '/logs/(.*)$', 1)",
    "resource": "CASE WHEN json_type(raw, '$.resource') = 'OBJECT' THEN struct_pack(type := "
                + _TEXT.format(p="$.resource.type") + ", labels := raw -> '$.resource.labels') END",
    "labels": "raw -> '$.labels'",
    "text_payload": _TEXT.format(p="$.textPayload"),
    "json_payload": "raw -> '$.jsonPayload'",
    "proto_payload": "raw -> '$.protoPayload'",
    "trace": _TEXT.format(p="$.trace"),
    "span_id": _TEXT.format(p="$.spanId"),
}
_BQ_JSON_TYPE = ("CREATE MACRO bq_json_type(j) AS CASE json_type(j) WHEN 'VARCHAR' THEN 'string' WHEN 'BIGINT' THEN "
                 "'number' WHEN 'UBIGINT' THEN 'number' WHEN 'DOUBLE' THEN 'number' WHEN 'BOOLEAN' THEN 'boolean' "
                 "WHEN 'NULL' THEN 'null' WHEN 'OBJECT' THEN 'object' WHEN 'ARRAY' THEN 'array' END")
_BQ_TYPES = {"VARCHAR": "STRING", "JSON": "JSON", "TIMESTAMP WITH TIME ZONE": "TIMESTAMP", "BIGINT": "INTEGER",
             "INTEGER": "INTEGER", "DOUBLE": "FLOAT", "BOOLEAN": "BOOLEAN", "HUGEINT": "INTEGER"}


class QueryError(Exception):
    def __init__(self, status: int, reason: str, message: str):
        super().__init__(message)
        self.status, self.reason = status, reason


@dataclass
class FakeBigQuery:
    """The server state: one linked dataset's `_AllLogs` in DuckDB, the jobs run, the request log, faults."""

    entries: list[dict]
    project: str = "p"
    files: list[str] = field(default_factory=list)  # export files (a LogEntry array or JSON Lines) loaded as well
    dataset: str = "logs"
    page_size: int = 500  # rows per getQueryResults page when the client does not ask for fewer
    requests: list[Request] = field(default_factory=list)
    jobs: dict[str, dict] = field(default_factory=dict)
    sql_received: list[str] = field(default_factory=list)
    fail_sql: int = 0  # the next N non-dry queries fail with a 400 invalidQuery, as a SQL error would
    lock: threading.Lock = field(default_factory=threading.Lock)
    db_lock: threading.Lock = field(default_factory=threading.Lock)
    _translated: dict = field(default_factory=dict)

    def __post_init__(self):
        self.con = duckdb.connect(":memory:")
        self.con.execute("SET TimeZone = 'UTC'")
        self.con.execute(_BQ_JSON_TYPE)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "entries.jsonl")
            with open(path, "w", encoding="utf-8") as f:
                for e in self.entries:
                    f.write(json.dumps(e, ensure_ascii=False) + "\n")
            cols = ", ".join(f"{sql} AS {name}" for name, sql in COLUMNS.items())
            # the bench's exports are loaded from their files, not through Python dicts (1M entries and more)
            self.con.execute(f"CREATE TABLE all_logs AS SELECT {cols} FROM read_json_objects(?, format = 'auto') "
                             "AS t(raw) WHERE json_type(raw) = 'OBJECT'", [[path, *self.files]])
        # bytes per column as BigQuery counts them: strings and JSON 2 + UTF-8 bytes, timestamps 8, NULL 0
        sizes = []
        for name in COLUMNS:
            if name in ("timestamp", "receive_timestamp"):
                sizes.append(f"8 * count({name})")
            elif name == "resource":
                sizes.append("coalesce(sum(2 + strlen(resource.type)), 0) + coalesce(sum(2 + strlen("
                             "CAST(resource.labels AS VARCHAR))), 0)")
            else:
                sizes.append(f"coalesce(sum(2 + strlen(CAST({name} AS VARCHAR))), 0)")
        row = self.con.execute(f"SELECT {', '.join(sizes)} FROM all_logs").fetchone()
        self.column_bytes = dict(zip(COLUMNS, (int(v) for v in row)))

    @property
    def table(self) -> str:
        return f"{self.project}.{self.dataset}._AllLogs"

    @property
    def query_jobs(self) -> list[dict]:
        return [j for j in self.jobs.values() if not j["configuration"].get("dryRun")]

    # -- SQL ------------------------------------------------------------------------------------------------

    def translate(self, sql: str) -> tuple[str, int]:
        """The DuckDB SQL for a GoogleSQL query, and the bytes it would bill; QueryError when BigQuery would refuse."""
        if sql not in self._translated:
            self._translated[sql] = self._translate(sql)
        return self._translated[sql]

    def _translate(self, sql: str) -> tuple[str, int]:
        try:
            trees = sqlglot.parse(sql, read="bigquery")
        except sqlglot.errors.ParseError as err:
            raise QueryError(400, "invalidQuery", f"Syntax error: {str(err).splitlines()[0]}") from err
        if len(trees) != 1 or not isinstance(trees[0], exp.Query):
            raise QueryError(400, "invalidQuery", "only one SELECT statement is served here")
        tree = trees[0]
        for t in tree.find_all(exp.Table):
            name = ".".join(p.name for p in t.parts)
            if name != self.table:
                raise QueryError(404, "notFound", f"Not found: Table {name} was not found in location US")
            t.replace(exp.Table(this=exp.to_identifier("all_logs"), alias=t.args.get("alias")))
        for j in list(tree.find_all(exp.JSONType)):
            j.replace(exp.Anonymous(this="bq_json_type", expressions=[j.this]))
        used = {c.parts[0].name if len(c.parts) > 1 and c.parts[0].name in COLUMNS else c.name
                for c in tree.find_all(exp.Column)}
        if any(isinstance(s, exp.Star) for s in tree.expressions):
            used = set(COLUMNS)
        aliases = {a.alias for a in tree.find_all(exp.Alias)}
        used -= aliases - set(COLUMNS)
        unknown = sorted(u for u in used if u not in COLUMNS)
        if unknown:
            raise QueryError(400, "invalidQuery", f"Unrecognized name: {unknown[0]}")
        return tree.sql(dialect="duckdb"), sum(self.column_bytes[u] for u in used)

    def run(self, sql: str) -> tuple[list[dict], list[list]]:
        duck, _ = self.translate(sql)
        try:
            with self.db_lock:  # one DuckDB connection, one statement at a time
                cur = self.con.cursor()
                cur.execute(duck)
                fields = [_field(d[0], d[1]) for d in cur.description]
                rows = cur.fetchall()
                cur.close()
        except duckdb.Error as err:
            raise QueryError(400, "invalidQuery", " ".join(str(err).split())[:300]) from err
        return fields, [[_cell(v, f) for v, f in zip(row, fields)] for row in rows]

    # -- the REST calls -----------------------------------------------------------------------------------

    def insert(self, project: str, body: dict) -> tuple[int, dict]:
        config = body.get("configuration") or {}
        query = (config.get("query") or {}).get("query")
        if not query:
            return 400, error(400, "invalid", "configuration.query.query is required")
        if (config.get("query") or {}).get("useLegacySql"):
            return 400, error(400, "invalidQuery", "legacy SQL is not served here")
        ref = dict(body.get("jobReference") or {})
        ref.setdefault("projectId", project)
        ref.setdefault("jobId", "job_" + uuid.uuid4().hex[:12])
        ref.setdefault("location", "US")
        with self.lock:
            self.sql_received.append(query)
        try:
            if config.get("dryRun"):
                _, billed = self.translate(query)
                return 200, {"kind": "bigquery#job", "jobReference": {k: v for k, v in ref.items() if k != "jobId"},
                             "configuration": config, "status": {"state": "DONE"},
                             "statistics": {"totalBytesProcessed": str(billed),
                                            "query": {"totalBytesProcessed": str(billed), "cacheHit": False}}}
            if self.fail_sql > 0:
                self.fail_sql -= 1
                raise QueryError(400, "invalidQuery", "Function not found: REGEXP_CONTAINS_FAKE at [1:1]")
            _, billed = self.translate(query)
            fields, rows = self.run(query)
        except QueryError as err:
            return err.status, error(err.status, err.reason, str(err))
        job = {"kind": "bigquery#job", "id": f"{project}:{ref['location']}.{ref['jobId']}", "jobReference": ref,
               "configuration": config, "status": {"state": "DONE"},
               "statistics": {"totalBytesProcessed": str(billed),
                              "query": {"totalBytesProcessed": str(billed), "totalBytesBilled": str(billed),
                                        "cacheHit": False, "statementType": "SELECT"}},
               "_fields": fields, "_rows": rows}
        with self.lock:
            self.jobs[ref["jobId"]] = job
        return 200, _public(job)

    def query(self, project: str, body: dict) -> tuple[int, dict]:
        """jobs.query: a job and its first page in one call."""
        config = {"query": {"query": body.get("query"), "useLegacySql": body.get("useLegacySql", True)},
                  "dryRun": bool(body.get("dryRun"))}
        status, job = self.insert(project, {"configuration": config,
                                            "jobReference": {"projectId": project,
                                                             "location": body.get("location") or "US"}})
        if status != 200 or config["dryRun"]:
            return status, job
        return self.results(project, job["jobReference"]["jobId"], {"maxResults": [str(body.get("maxResults") or "")]})

    def results(self, project: str, job_id: str, params: dict) -> tuple[int, dict]:
        job = self.jobs.get(job_id)
        if job is None:
            return 404, error(404, "notFound", f"Not found: Job {project}:{job_id}")
        start = int((params.get("pageToken") or params.get("startIndex") or ["0"])[0] or 0)
        size = int((params.get("maxResults") or [""])[0] or self.page_size)
        rows = job["_rows"]
        page = rows[start:start + size] if size else []
        out = {"kind": "bigquery#getQueryResultsResponse", "jobReference": job["jobReference"], "jobComplete": True,
               "schema": {"fields": job["_fields"]}, "totalRows": str(len(rows)), "cacheHit": False,
               "totalBytesProcessed": job["statistics"]["totalBytesProcessed"],
               "rows": [{"f": [{"v": v} for v in r]} for r in page]}
        if size and start + size < len(rows):
            out["pageToken"] = str(start + size)
        return 200, out


def _field(name: str, t) -> dict:
    text = str(t)
    if text.startswith("STRUCT"):
        return {"name": name, "type": "RECORD", "mode": "NULLABLE",
                "fields": [_field(n, c) for n, c in t.children]}
    return {"name": name, "type": _BQ_TYPES.get(text, "STRING"), "mode": "NULLABLE"}


def _cell(value, f: dict):
    """A value as the REST API writes it: strings, JSON as its text, TIMESTAMP as int64 microseconds."""
    if value is None:
        return None
    if f["type"] == "RECORD":
        return {"f": [{"v": _cell(value.get(sub["name"]), sub)} for sub in f["fields"]]}
    if f["type"] == "TIMESTAMP":
        import datetime as dt

        delta = value - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
        return str(delta.days * 86_400_000_000 + delta.seconds * 1_000_000 + delta.microseconds)
    if f["type"] == "BOOLEAN":
        return "true" if value else "false"
    return str(value)


def _public(job: dict) -> dict:
    return {k: v for k, v in job.items() if not k.startswith("_")}


def error(code: int, reason: str, message: str) -> dict:
    return {"error": {"code": code, "message": message, "status": {400: "INVALID_ARGUMENT", 404: "NOT_FOUND"}.get(
        code, "UNKNOWN"), "errors": [{"reason": reason, "message": message, "domain": "global"}]}}


_ROUTES = [("POST", re.compile(r"^/bigquery/v2/projects/([^/]+)/jobs$"), "insert"),
           ("POST", re.compile(r"^/bigquery/v2/projects/([^/]+)/queries$"), "query"),
           ("GET", re.compile(r"^/bigquery/v2/projects/([^/]+)/jobs/([^/]+)$"), "get"),
           ("GET", re.compile(r"^/bigquery/v2/projects/([^/]+)/queries/([^/]+)$"), "results")]


def _handler(state: FakeBigQuery):
    class Handler(JSONHandler):
        def _serve(self, method: str) -> None:
            n = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(n) or b"{}") if method == "POST" else {}
            except ValueError:
                body = {}
            url = urlsplit(self.path)
            req = Request(method, url.path, body)
            with state.lock:
                state.requests.append(req)
            params = parse_qs(url.query)
            for verb, rx, name in _ROUTES:
                m = rx.match(url.path)
                if verb == method and m:
                    if name == "insert":
                        req.status, out = state.insert(m.group(1), body)
                    elif name == "query":
                        req.status, out = state.query(m.group(1), body)
                    elif name == "get":
                        job = state.jobs.get(m.group(2))
                        req.status, out = (200, _public(job)) if job else (404, error(404, "notFound", "no such job"))
                    else:
                        req.status, out = state.results(m.group(1), m.group(2), params)
                    return self._send(req.status, out)
            req.status = 404
            self._send(404, error(404, "notFound", f"no such method {method} {url.path}"))

        def do_POST(self):
            self._serve("POST")

        def do_GET(self):
            self._serve("GET")

    return Handler


class BigQueryServer(LoopbackServer):
    """Runs a FakeBigQuery on 127.0.0.1:<free port>; `url` is the client's api_endpoint."""

    def __init__(self, state: FakeBigQuery, port: int = 0):
        self.state = state
        super().__init__(_handler(state), port)


def main() -> int:
    """python -m pathways_workload.evals.fakes.bigquery_server DIR [--port N] [--dataset P.D]: the folder's entries as `P.D._AllLogs`."""
    from . import serve

    def option(ap) -> None:
        ap.add_argument("--dataset", default="logs-project.pathways_logs", metavar="PROJECT.DATASET",
                        help="the linked dataset the view is served as (default: %(default)s)")

    args = serve.arguments("pathways_workload.evals.fakes.bigquery_server", option)
    project, _, dataset = args.dataset.partition(".")
    s = serve.describe(args.folder)
    server = BigQueryServer(FakeBigQuery(s.entries, project=project, dataset=dataset), args.port)
    return serve.run(server, f"BigQuery fake: {len(s.entries)} entries of {args.folder} as {args.dataset}._AllLogs",
                     f"pathways-workload diagnose --log-analytics {args.dataset} --bigquery-endpoint {{url}} "
                     f"--project {s.project} {serve.window(s)}")


if __name__ == "__main__":
    raise SystemExit(main())
