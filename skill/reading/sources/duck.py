"""Replay through DuckDB: the export's LogEntry files loaded once into a table, each LogQuery run as SQL.

The exact reader (ReplaySource) stays the reference and the fallback:
- a file DuckDB's JSON reader rejects (truncated, not UTF-8, a corrupt line, another layout), or one holding any
  value the exact reader would not count as a usable entry (not an object, a Kubernetes object, no insertId, no
  usable timestamp), or syntax DuckDB accepts and the exact reader does not (NaN, Infinity, trailing commas, very
  deep nesting), is read by the exact reader, so every skipped entry is named with its file and position;
- a filter skill.reading.sql can't compile (Uncompilable) runs on skill.reading.query over every entry, and the rows where the
  compiled SQL is NULL are decided by skill.reading.query too (both counted in `engine`).
Answers, their order and the tie-breaks of capped queries are the exact reader's: uncapped matches in file order
(query by query for one entry), then each capped query's N newest/oldest, ties broken towards the later entry.
Known residuals: duplicate keys in one object (DuckDB reads the first, the reference the last) and integers beyond
64 bits in a file the exact reader parses with json rather than orjson.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb
import orjson

from ..query import compile_filter
from ..records import parse_ts
from ..sql import DUCKDB, Uncompilable, compile_sql
from .base import LogQuery
from .plan import compile_route_filter
from .replay import ROUTE_FIELDS, Inventory, ReplaySource, _tally

__all__ = ["DuckReplaySource", "EngineStats"]

_STRICT_UTC = r"^\d{4}-\d\d-\d\dT([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?Z$"
# syntax DuckDB's reader accepts that orjson and json reject (a false alarm inside a string only costs speed)
_LAX = r",\s*[\]}]|[\[:,]\s*-?(NaN|Infinity)"
_FIELDS = ("insertId", "timestamp", "severity", "logName", "resource", "labels", "textPayload", "jsonPayload",
           "protoPayload", "kind", "receiveTimestamp")
_DROP = '{"jsonPayload":null,"protoPayload":null,"labels":null}'
_DROP_TEXT = '{"jsonPayload":null,"protoPayload":null,"labels":null,"textPayload":null}'
FILE_BITS = 40  # pos = file number << FILE_BITS | entry number: one order over every file
_ROUTE_COLS = tuple(f"route_{k}" for k in range(len(ROUTE_FIELDS)))  # an entry's routing fields, as JSON text


def _e(name: str) -> str:
    return f"e[{_FIELDS.index(name) + 1}]"


def _skeleton(key: tuple) -> dict | None:
    """The routing fields of a route as the exact reader's skeleton (absent fields left out); None if unreadable."""
    try:
        return {f: orjson.loads(v) for f, v in zip(ROUTE_FIELDS, key) if v is not None}
    except orjson.JSONDecodeError:
        return None


def _text(j: str) -> str:
    return f"CASE WHEN json_type({j}) = 'VARCHAR' THEN {j} ->> '$' END"


_ROUTE_KEY = ", ".join(f"{_e(f)}::VARCHAR AS {c}" for f, c in zip(ROUTE_FIELDS, _ROUTE_COLS))
_RESOURCE_TYPE = _e("resource") + " -> '$.type'"
# The columns skill.reading.sql's DUCKDB target reads, each set only where it holds the field exactly (as skill.reading.logtable).
_COLUMNS = {
    "insert_id": _text(_e("insertId")),
    "timestamp": f"CASE WHEN json_type({_e('timestamp')}) = 'VARCHAR' AND regexp_matches({_e('timestamp')} ->> '$', "
                 f"'{_STRICT_UTC}') THEN TRY_CAST({_e('timestamp')} ->> '$' AS TIMESTAMP_NS) END",
    "severity": _text(_e("severity")),
    "log_name": _text(_e("logName")),
    "resource_type": f"CASE WHEN json_type({_e('resource')}) = 'OBJECT' THEN {_text(_RESOURCE_TYPE)} END",
    "resource_labels": f"CASE WHEN json_type({_e('resource')}) = 'OBJECT' THEN {_e('resource')} -> '$.labels' END",
    "labels": _e("labels"),
    "text_payload": _text(_e("textPayload")),
    "json_payload": _e("jsonPayload"),
    "proto_payload": _e("protoPayload"),
}


@dataclass
class EngineStats:
    """What DuckDB did and what the reference did instead (not part of the Diagnosis; for tests and the bench)."""

    files_duckdb: int = 0
    files_exact: int = 0
    queries_sql: int = 0
    queries_uncompilable: int = 0  # run on skill.reading.query over every entry
    rows_undecided: int = 0  # rows whose compiled filter was NULL, decided by skill.reading.query
    fallbacks: list[str] | None = None  # why each exact file was not loaded


class DuckReplaySource(ReplaySource):
    """ReplaySource with the log files in DuckDB; Kubernetes objects and rejected files as the exact reader reads."""

    def __init__(self, folder: str | Path, threads: int = 1):
        self.threads = threads
        self.engine = EngineStats(fallbacks=[])
        self.con = duckdb.connect(":memory:")
        self.con.execute(f"SET threads = {max(1, int(threads))}")
        self._duck: dict[Path, int] = {}  # file -> its number (pos >> FILE_BITS)
        self._table = False
        self._route_skels: list[dict | None] = []  # entries.route -> its routing fields
        super().__init__(folder)

    # -- loading --

    def _ensure_index(self) -> None:
        if self._indexed:
            return
        self._indexed = True
        for n, path in enumerate(self._log_files):
            why = self._load(n, path)
            if why is None:
                self._duck[path] = n
                self.engine.files_duckdb += 1
                continue
            self.engine.files_exact += 1
            self.engine.fallbacks.append(f"{path.name}: {why}")
            self._index_file(path)
        if self._table:
            self._add_routes()

    def _add_routes(self) -> None:
        """Number the distinct combinations of the routing fields (few) into `entries.route`, with their skeletons.

        A skeleton is None when its JSON text does not parse back (then every query keeps the route)."""
        con, cols = self.con, _ROUTE_COLS
        keys = con.execute(f"SELECT DISTINCT {', '.join(cols)} FROM entries").fetchall()
        self._route_skels = [_skeleton(key) for key in keys]
        con.execute(f"CREATE TEMP TABLE routes ({', '.join(c + ' VARCHAR' for c in cols)}, route INTEGER)")
        con.executemany(f"INSERT INTO routes VALUES ({', '.join('?' for _ in cols)}, ?)",
                        [(*key, n) for n, key in enumerate(keys)])
        con.execute("ALTER TABLE entries ADD COLUMN route INTEGER")
        on = " AND ".join(f"entries.{c} IS NOT DISTINCT FROM routes.{c}" for c in cols)
        con.execute(f"UPDATE entries SET route = routes.route FROM routes WHERE {on}")
        con.execute("DROP TABLE routes")
        for c in cols:
            con.execute(f"ALTER TABLE entries DROP COLUMN {c}")

    def _format(self, path: Path) -> str | None:
        with open(path, "rb") as f:
            head = f.read(1 << 16).lstrip(b" \t\r\n")
        lines = path.suffix.lower() in (".jsonl", ".ndjson")
        if head[:1] == b"[" and not lines:
            return "array"
        if head[:1] == b"{" and lines:
            return "newline_delimited"
        return None

    def _load(self, n: int, path: Path) -> str | None:
        """Load one file into `entries`; None when done, else why the exact reader must read it instead."""
        fmt = self._format(path)
        if fmt is None:
            return "not a JSON array or JSON Lines of objects"
        con = self.con
        paths = ", ".join(f"'$.{f}'" for f in _FIELDS)
        cols = ", ".join(f"{sql} AS {name}" for name, sql in _COLUMNS.items())
        try:
            con.execute(f"CREATE OR REPLACE TEMP TABLE stage AS SELECT raw, json_type(raw) AS jt, e FROM "
                        f"(SELECT raw, json_extract(raw, [{paths}]) AS e FROM "
                        f"read_json_objects(?, format = '{fmt}') AS t(raw))", [str(path)])
            # `raw` is what skill.reading.sql reads where a typed column is NULL: the entry without the fields a typed
            # column holds whenever they are present (so a test of an absent payload does not parse the whole
            # entry again); `doc` is the entry as written, for the reference evaluator and the answers
            con.execute(f"CREATE OR REPLACE TEMP TABLE typed AS SELECT ({n} << {FILE_BITS}) + rowid AS pos, {cols}, "
                        f"CASE WHEN jt = 'OBJECT' THEN json_merge_patch(raw, CASE WHEN json_type({_e('textPayload')}) "
                        f"= 'VARCHAR' THEN '{_DROP_TEXT}' ELSE '{_DROP}' END) END AS raw, raw AS doc, jt, "
                        f"{_e('kind')} AS kind, {_ROUTE_KEY} FROM stage")
        except duckdb.Error as err:
            return f"DuckDB: {str(err).splitlines()[0][:120]}"
        finally:
            con.execute("DROP TABLE IF EXISTS stage")
        bad = con.execute(
            f"SELECT count(*), count(*) FILTER (WHERE jt IS DISTINCT FROM 'OBJECT' OR kind IS NOT NULL OR "
            f"insert_id IS NULL OR insert_id = '' OR regexp_matches(doc, '{_LAX}') OR (length(doc) > 2000 AND "
            f"length(doc) - length(replace(replace(doc, '{{', ''), '[', '')) > 500)) FROM typed").fetchone()
        if not bad[0] or bad[1]:
            con.execute("DROP TABLE typed")
            return "empty" if not bad[0] else f"{bad[1]} values the exact reader must report"
        # the instant: DuckDB's for gcloud's UTC spelling, parse_ts (as the exact reader) for any other
        con.execute("ALTER TABLE typed ADD COLUMN ts BIGINT")
        con.execute("UPDATE typed SET ts = epoch_ns(timestamp) WHERE timestamp IS NOT NULL")
        odd = con.execute("SELECT pos, doc FROM typed WHERE ts IS NULL OR ts = 0").fetchall()
        fixed = []
        for pos, raw in odd:
            doc = orjson.loads(raw)
            ts = parse_ts(doc.get("timestamp")) or parse_ts(doc.get("receiveTimestamp"))
            if not ts:
                con.execute("DROP TABLE typed")
                return "an entry without a usable timestamp"
            fixed.append((ts, pos))
        if fixed:
            con.executemany("UPDATE typed SET ts = ? WHERE pos = ?", fixed)
        con.execute("ALTER TABLE typed DROP COLUMN jt")
        con.execute("ALTER TABLE typed DROP COLUMN kind")
        if self._table:
            con.execute("INSERT INTO entries SELECT * FROM typed")
        else:
            con.execute("CREATE TEMP TABLE entries AS SELECT * FROM typed")
            self._table = True
        count, lo, hi = con.execute("SELECT count(*), min(ts), max(ts) FROM typed").fetchone()
        con.execute("DROP TABLE typed")
        for ts in (lo, max(0, hi)):  # as the exact reader counts a file
            if ts:
                self.stats.last_ts = max(self.stats.last_ts, ts)
                self.stats.first_ts = min(self.stats.first_ts, ts) if self.stats.first_ts else ts
        self.stats.entries_read += count
        self._counted.add(path)
        return None

    # -- reading --

    def iter_timed(self) -> Iterator[tuple[int, dict]]:
        self._ensure_index()
        for n, path in enumerate(self._log_files):
            if path not in self._duck:
                yield from self._file_timed(path)
                continue
            cur = self.con.execute("SELECT ts, doc FROM entries WHERE pos >> ? = ? ORDER BY pos", [FILE_BITS, n])
            while rows := cur.fetchmany(10_000):
                for ts, raw in rows:
                    yield ts, orjson.loads(raw)

    def inventory(self) -> Inventory:
        self._ensure_index()
        inv = Inventory(Counter(), Counter(), Counter(), Counter(), Counter())
        routes = {}
        if self._table:
            paths = ", ".join(f"'$.{f}'" for f in ROUTE_FIELDS)
            for n, route, count in self.con.execute(
                    f"SELECT pos >> {FILE_BITS} AS n, r, count(*) FROM (SELECT pos, json_extract(doc, [{paths}]) AS r "
                    f"FROM entries) GROUP BY n, r ORDER BY n, min(pos)").fetchall():
                routes.setdefault(n, []).append((route, count))
        for n, path in enumerate(self._log_files):
            if path not in self._duck:
                idx = self._index.get(path)
                if idx is None:
                    for _ts, entry in self._slow_timed(path):
                        _tally(inv, entry, 1)
                else:
                    for rid, c in idx.route_counts().items():
                        _tally(inv, self._skeletons[rid], c)
                continue
            for route, count in routes.get(n, []):
                skel = {k: orjson.loads(v) for k, v in zip(ROUTE_FIELDS, route) if v is not None}
                _tally(inv, skel, count)
        return inv

    def read(self, queries: Sequence[LogQuery]) -> Iterator[tuple[LogQuery, dict]]:
        """Every query's matches, in the order and with the caps of ReplaySource.read."""
        self._ensure_index()
        exact_files = [(n, p) for n, p in enumerate(self._log_files) if p not in self._duck]
        preds = [compile_filter(q.filter) for q in queries]
        found: list[list[tuple[int, int, dict]]] = [[] for _ in queries]  # (ts, pos, entry) per query
        if self._table:
            routes = self._routes_of(queries)
            for i, q in enumerate(queries):
                found[i] = self._sql(q, preds[i], routes[i])
        for n, path in exact_files:
            for k, (ts, entry) in enumerate(self._file_timed(path)):
                for i, pred in enumerate(preds):
                    if pred(entry):
                        found[i].append((ts, n << FILE_BITS | k, entry))
        uncapped = [(pos, i, e) for i, q in enumerate(queries) if q.limit is None for _ts, pos, e in found[i]]
        uncapped.sort(key=lambda t: (t[0], t[1]))
        for _pos, i, entry in uncapped:
            yield queries[i], entry
        for i, q in enumerate(queries):
            if q.limit is None:
                continue
            key = (lambda t: (t[0], t[1])) if q.order == "desc" else (lambda t: (-t[0], t[1]))
            for _ts, _pos, entry in heapq.nlargest(q.limit, found[i], key=key):
                yield q, entry

    def _routes_of(self, queries: Sequence[LogQuery]) -> list[list[int]]:
        """Per query, the routes (entries.route) whose entries it can match: the exact reader's planner
        (ReplaySource._plan) decided once per route; a route whose skeleton is unknown is kept for every query."""
        possible = [compile_route_filter(q.filter, ROUTE_FIELDS) for q in queries]
        out: list[list[int]] = [[] for _ in queries]
        for rid, skel in enumerate(self._route_skels):
            hits = range(len(queries)) if skel is None else [i for i, _ in self._plan(skel, queries, possible)]
            for i in hits:
                out[i].append(rid)
        return out

    def _sql(self, q: LogQuery, pred, routes: list[int]) -> list[tuple[int, int, dict]]:
        """(ts, pos, entry) for the loaded entries q matches: for a capped query, enough to take its N from.

        Only the rows of `routes` are tested: an entry of any other route can't match (its routing fields make the
        filter false), so the compiled filter is not evaluated on it."""
        try:
            where = compile_sql(q.filter, DUCKDB).sql(dialect="duckdb")
            self.engine.queries_sql += 1
        except Uncompilable:
            where = "NULL"
            self.engine.queries_uncompilable += 1
        if not routes:
            return []
        scope = "" if len(routes) == len(self._route_skels) else f" WHERE route IN ({', '.join(map(str, routes))})"
        inner = f"SELECT pos, ts, doc, ({where}) AS p FROM entries{scope}"
        rows = []
        if q.limit is None:
            rows += self.con.execute(f"SELECT ts, pos, doc, p FROM ({inner}) WHERE p IS NOT FALSE").fetchall()
        else:
            order = "ts DESC, pos DESC" if q.order == "desc" else "ts ASC, pos DESC"
            rows += self.con.execute(f"SELECT ts, pos, doc, p FROM ({inner}) WHERE p ORDER BY {order} "
                                     f"LIMIT {int(q.limit)}").fetchall()
            rows += self.con.execute(f"SELECT ts, pos, doc, p FROM ({inner}) WHERE p IS NULL").fetchall()
        out = []
        for ts, pos, raw, p in rows:
            entry = orjson.loads(raw)
            if p is None:
                self.engine.rows_undecided += 1
                if not pred(entry):
                    continue
            out.append((ts, pos, entry))
        return out
