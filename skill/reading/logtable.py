"""LogEntries in a DuckDB table whose columns skill.reading.sql's DUCKDB target reads, and filters run over it.

Each entry is read whole as JSON (`raw`) by DuckDB's JSON reader, and the fields the workload's queries test are
projected into typed columns. A typed column is set only where it holds the field exactly, as reached without
passing through a list: a string column only from a JSON string, `timestamp` only from gcloud's UTC spelling of a
valid instant (DuckDB would read '24:00:00' as the next day), `resource_labels` only under an object `resource`.
Where one is NULL the compiled filter consults `raw`, so null, absent and oddly typed fields keep their meaning.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import cast
from collections.abc import Iterable

import duckdb

from .evaluate import compile_filter
from .sql import DUCKDB, compile_sql

__all__ = ["connect", "load_entries", "load_export", "select"]

_STRICT_UTC = r"^\d{4}-\d\d-\d\dT([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?Z$"


def _text(path: str) -> str:
    return f"CASE WHEN json_type(raw, '{path}') = 'VARCHAR' THEN raw ->> '{path}' END"


_COLUMNS = {
    "insert_id": _text("$.insertId"),
    "timestamp": f"CASE WHEN json_type(raw, '$.timestamp') = 'VARCHAR' AND regexp_matches(raw ->> '$.timestamp', "
                 f"'{_STRICT_UTC}') THEN TRY_CAST(raw ->> '$.timestamp' AS TIMESTAMP_NS) END",
    "severity": _text("$.severity"),
    "log_name": _text("$.logName"),
    "resource_type": f"CASE WHEN json_type(raw, '$.resource') = 'OBJECT' THEN {_text('$.resource.type')} END",
    "resource_labels": "CASE WHEN json_type(raw, '$.resource') = 'OBJECT' THEN raw -> '$.resource.labels' END",
    "labels": "raw -> '$.labels'",
    "text_payload": _text("$.textPayload"),
    "json_payload": "raw -> '$.jsonPayload'",
    "proto_payload": "raw -> '$.protoPayload'",
}


def connect(threads: int | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection (one thread per `threads`, DuckDB's choice when None)."""
    con = duckdb.connect(":memory:")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    return con


def load_export(con: duckdb.DuckDBPyConnection, path: str | os.PathLike, table: str = "entries") -> int:
    """Load an export (a JSON array of LogEntries or JSON Lines) into `table`; returns the row count.

    DuckDB's reader raises duckdb.Error on a file it can't read (not JSON, truncated); the caller falls back."""
    cols = ", ".join(f"{sql} AS {name}" for name, sql in _COLUMNS.items())
    con.execute(f'CREATE OR REPLACE TABLE "{table}" AS SELECT {cols}, raw FROM '
                f"read_json_objects(?, format = 'auto') AS t(raw) WHERE json_type(raw) = 'OBJECT'", [os.fspath(path)])
    return cast(tuple, con.execute(f'SELECT count(*) FROM "{table}"').fetchone())[0]  # count(*) always has its row


def load_entries(con: duckdb.DuckDBPyConnection, entries: Iterable[dict], table: str = "entries") -> int:
    """Load LogEntry dicts into `table` (through a JSON Lines file, so the same reader as an export)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "entries.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for e in entries:
                f.write(json.dumps(e, ensure_ascii=False) + "\n")
        return load_export(con, path, table)


def select(con: duckdb.DuckDBPyConnection, filter_: str, table: str = "entries") -> tuple[list[str], list[dict]]:
    """The insert ids the compiled filter matches, and the entries it could not decide, which skill.reading.query then
    tests (their insert ids are added to the first list when they match). Raises skill.reading.sql.Uncompilable."""
    pred = compile_sql(filter_, DUCKDB).sql(dialect="duckdb")
    rows = con.execute(f'SELECT insert_id, CASE WHEN p IS NULL THEN raw END FROM (SELECT insert_id, raw, ({pred}) AS p '
                       f'FROM "{table}") WHERE p IS NOT FALSE').fetchall()
    unsure = [json.loads(raw) for _, raw in rows if raw is not None]
    reference = compile_filter(filter_)
    return [i for i, raw in rows if raw is None] + [e.get("insertId") for e in unsure if reference(e)], unsure
