"""One BigQuery scan for many LogQueries (Log Analytics): each row of the window tagged with the queries it may match,
each query's LIMIT applied as its own ORDER BY would rank it, and the window a top-level timestamp range.

    SELECT <cols>, (p0 IS NOT FALSE AND r0 <= N0) AS m0, p0 IS NULL AS u0, ...
    FROM (SELECT <cols>, p0, ..., ROW_NUMBER() OVER (PARTITION BY p0 IS NOT FALSE [, route] ORDER BY timestamp, insert_id)
          AS r0, ... FROM (SELECT <cols>, (<pred0>) AS p0, ... FROM `P.D._AllLogs` WHERE timestamp >= T0 AND timestamp <= T1))
    WHERE (p0 IS NOT FALSE AND r0 <= N0) OR ...

BigQuery bills the referenced columns of the partitions read once, whatever the number of queries tagged.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from sqlglot import exp

from typing import cast

from ..query import And, Compare, Node, Not, Or, parse_cached
from ..sql import ALL_LOGS, Uncompilable, compile_sql
from .base import LogQuery
from .plan import _timestamp_bound


ROUTING = frozenset({"logName", "resource", "labels"})  # what a per-route template's partition holds


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


def way(q: LogQuery) -> str:
    return "DESC" if q.order == "desc" else "ASC"


def conjuncts(node: Node) -> tuple[Node, ...]:
    return node.items if isinstance(node, And) else (node,)


def ordered(rows: list, order: str) -> list:
    """Rows in a query's order: timestamp, then insert_id (NULL first ascending, last descending, as BigQuery)."""
    return sorted(rows, key=lambda r: (r.get("timestamp") or _EPOCH, r.get("insert_id") or ""),
                  reverse=order == "desc")


_EPOCH = dt.datetime(1, 1, 1, tzinfo=dt.UTC)


def hull(node: Node) -> tuple[int, int] | None:
    """[lo, hi] ns holding the timestamp of every entry node can match, or None (no bound)."""
    match node:
        case And(items):
            spans = [h for h in map(hull, items) if h is not None]
            if not spans:
                return None
            return max(s[0] for s in spans), min(s[1] for s in spans)
        case Or(items):
            parts = [hull(i) for i in items]
            bounded = [h for h in parts if h is not None]
            if not parts or len(bounded) < len(parts):
                return None
            return min(s[0] for s in bounded), max(s[1] for s in bounded)
        case Compare(path=("timestamp",), op=op) if (ns := _timestamp_bound(node)) is not None:
            return {">=": (ns, MAX_NS), ">": (ns + 1, MAX_NS), "<=": (0, ns), "<": (0, ns - 1)}[op]
    return None


MAX_NS = 253402300799 * 10**9


def window_sql(nodes: Sequence[Node]) -> str:
    """' WHERE <timestamp range>' holding every entry any of the filters can match (so BigQuery can prune the
    table's partitions), or '' when one of them has no time bound."""
    spans = [hull(n) for n in nodes]
    if not spans or any(s is None for s in spans):
        return ""
    lo, hi = min(s[0] for s in spans if s), max(s[1] for s in spans if s)
    return " WHERE " + time_terms(lo, hi)


def time_terms(lo: int, hi: int) -> str:
    col = exp.column("timestamp")
    terms = [ALL_LOGS.instant(col, ">=", lo)] if lo > 0 else []
    terms += [ALL_LOGS.instant(col, "<=", hi)] if hi < MAX_NS else []
    return " AND ".join(t.sql(dialect="bigquery") for t in terms) or "TRUE"


def scan_sql(table: str, fields: Sequence[str], tagged: Sequence[LogQuery], conds: Sequence[str],
             limits: Sequence[int]) -> str:
    """The one SELECT that tags each row of the window with the queries it may match (m<k>: within query k's
    LIMIT as its own ORDER BY ranks it; u<k>: SQL could not decide the row)."""
    cols = ", ".join(fields)
    preds = ", ".join(f"({c}) AS p{k}" for k, c in enumerate(conds))
    ranks = ", ".join(
        f"ROW_NUMBER() OVER (PARTITION BY p{k} IS NOT FALSE"
        + (", log_name, TO_JSON_STRING(resource), TO_JSON_STRING(labels)" if q.per_route else "")
        + f" ORDER BY timestamp {way(q)}, insert_id {way(q)}) AS r{k}" for k, q in enumerate(tagged))
    tags = ", ".join(f"(p{k} IS NOT FALSE AND r{k} <= {n}) AS m{k}, p{k} IS NULL AS u{k}"
                     for k, n in enumerate(limits))
    keep = " OR ".join(f"(p{k} IS NOT FALSE AND r{k} <= {n})" for k, n in enumerate(limits))
    where = window_sql([parse_cached(q.filter) for q in tagged])
    pcols = ", ".join(f"p{k}" for k in range(len(tagged)))
    return (f"SELECT {cols}, {tags} FROM (SELECT {cols}, {pcols}, {ranks} FROM "
            f"(SELECT {cols}, {preds} FROM `{table}`{where})) WHERE {keep}")
