"""Logging filters (skill.reading.query's AST) compiled to one SQL boolean, built as a sqlglot tree; exact or it says so.

- `Uncompilable` at compile time: no exact SQL form (global restrictions, SEARCH, a field the target has no column
  for, a literal out of range); the caller evaluates that filter with skill.reading.query, the reference.
- NULL at run time, for a row a leaf can't decide exactly (a non-ASCII string under a case-insensitive test, which
  needs NFKC_Casefold; a list on the path, which the reference fans out over; an integer beyond 15 digits; a timestamp
  not in gcloud's spelling). Kleene AND/OR/NOT keep that sound: rows where the expression IS TRUE match, IS NULL go
  to skill.reading.query. Every other leaf is TRUE or FALSE, never NULL by accident.
Targets: DUCKDB, the table skill.reading.logtable loads (typed columns, and `raw`, the whole entry as JSON, read where a typed
column is NULL); ALL_LOGS, Log Analytics' `_AllLogs` view in BigQuery (no raw entry: NULL there means absent).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import unquote

from sqlglot import exp

from .query import SEVERITY, And, Call, Compare, Node, Not, Or, compile_regex, parse
from .evaluate import parse_timestamp_ns

__all__ = ["ALL_LOGS", "DUCKDB", "Target", "Uncompilable", "compile_sql", "to_sql"]


class Uncompilable(ValueError):
    """The filter has a part with no exact SQL form for this target; evaluate it with skill.reading.query instead."""


@dataclass(frozen=True)
class Target:
    """Where a LogEntry's fields live: fast columns by field path (kind text, json or instant) and the raw entry."""
    dialect: str
    columns: dict[tuple[str, ...], tuple[str, str]]
    raw: str | None
    types: dict[str, tuple[str, ...]]  # JSON_TYPE's answers: string, int, float, boolean, null, object, array
    instant: Callable[[exp.Expression, str, int], exp.Expression] = field(repr=False, default=None)  # col OP ns


def _ts_compare(col: exp.Expression, op: str, ns: int, dialect: str, type_: str, unit: int, lo: int,
                hi: int) -> exp.Expression:
    """col OP ns for a column of `unit`-ns instants: the literal moved to the grid the way that keeps the answer."""
    down, up = ns - ns % unit, ns + -ns % unit
    if ns % unit and op in ("=", ":", "!="):
        return FALSE if op != "!=" else TRUE
    ns = up if op in (">=", "<") else down
    if not lo <= ns < hi:
        raise Uncompilable(f"timestamp {ns} ns is outside what the target's timestamps hold")
    t = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=ns // 1000)
    frac = f"{ns % 1_000_000_000:09d}"[:9 if unit == 1 else 6]
    text = f"{t:%Y-%m-%d %H:%M:%S}.{frac}" + ("" if dialect == "duckdb" else "+00")
    lit = exp.Cast(this=exp.Literal.string(text), to=exp.DataType.build(type_, dialect=dialect))
    return _REL[op](this=col, expression=lit)


def _columns(resource: str, **extra: tuple[str, str]) -> dict[tuple[str, ...], tuple[str, str]]:
    cols = {"insertId": ("insert_id", "text"), "timestamp": ("timestamp", "instant"), "severity": ("severity", "text"),
            "logName": ("log_name", "text"), "resource.type": (f"resource{resource}type", "text"),
            "resource.labels": (f"resource{resource}labels", "json"), "labels": ("labels", "json"),
            "textPayload": ("text_payload", "text"), "jsonPayload": ("json_payload", "json"),
            "protoPayload": ("proto_payload", "json"), **extra}
    return {tuple(k.split(".")): v for k, v in cols.items()}


DUCKDB = Target("duckdb", _columns("_"), "raw",
                {"string": ("VARCHAR",), "int": ("BIGINT", "UBIGINT"), "float": ("DOUBLE",), "boolean": ("BOOLEAN",),
                 "null": ("NULL",), "object": ("OBJECT",), "array": ("ARRAY",)},
                lambda c, op, ns: _ts_compare(c, op, ns, "duckdb", "TIMESTAMP_NS", 1, -2**63 + 1, 2**63 - 1))
ALL_LOGS = Target("bigquery", _columns(".", receiveTimestamp=("receive_timestamp", "instant")), None,
                  {"string": ("string",), "int": (), "float": ("number",), "boolean": ("boolean",), "null": ("null",),
                   "object": ("object",), "array": ("array",)},  # JSON_TYPE: one "number" for ints and floats
                  lambda c, op, ns: _ts_compare(c, op, ns, "bigquery", "TIMESTAMP", 1000, -62135596800 * 10**9,
                                                253402300800 * 10**9))

TRUE, FALSE, NULL = exp.true(), exp.false(), exp.null()
_NUM = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)  # skill.reading.query's number grammar
_TIME_FIELDS = (("timestamp",), ("receiveTimestamp",))
# gcloud's UTC spelling, which the reference compares as text, and the wider RFC 3339 it parses (here: NULL).
UTC_RE = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$"
TS_RE = r"^\d{4}-\d\d-\d\d([Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d))?$"
_REL = {"=": exp.EQ, ":": exp.EQ, "!=": exp.NEQ, "<": exp.LT, "<=": exp.LTE, ">": exp.GT, ">=": exp.GTE}


def _s(text: str) -> exp.Literal:
    return exp.Literal.string(text)


def _n(value: int) -> exp.Literal:
    return exp.Literal.number(value)


def _rx(value: exp.Expression, pattern: str) -> exp.Expression:
    return exp.RegexpLike(this=value, expression=_s(pattern))  # RE2 in both: DuckDB's regexp_matches, REGEXP_CONTAINS


def _case(*whens: tuple[exp.Expression, exp.Expression], default: exp.Expression) -> exp.Expression:
    case = exp.Case()
    for cond, then in whens:
        case = case.when(cond, then)
    return case.else_(default)


def _paren(e: exp.Expression) -> exp.Expression:
    return e if isinstance(e, (exp.Boolean, exp.Null, exp.Paren, exp.Column)) else exp.Paren(this=e)


def _norm(s: str) -> str:
    return s.lower() if s.isascii() else unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", s).casefold())


def _fold(s: exp.Expression) -> exp.Expression:
    """LOWER(s) where s is ASCII (there it is NFKC_Casefold), NULL elsewhere."""
    return _case((_rx(s, r"^[\x00-\x7f]*$"), exp.Lower(this=s)), default=NULL)


def _double(text: exp.Expression) -> exp.Expression:
    """A number's text as DOUBLE: exact for up to 15 digits or a float spelling, NULL for longer integers."""
    return _case((_rx(text, r"^[+-]?\d{1,15}$"), exp.Cast(this=text, to=exp.DataType.build("DOUBLE"))),
                 (_rx(text, r"^[+-]?\d+$"), NULL), default=exp.TryCast(this=text, to=exp.DataType.build("DOUBLE")))


def _number_literal(text: str) -> exp.Expression | None:
    if not _NUM.fullmatch(text):
        return None
    value = int(text) if re.fullmatch(r"[+-]?\d+", text) else float(text)
    if isinstance(value, int) and abs(value) > 2**53 or value in (float("inf"), float("-inf")):
        raise Uncompilable(f"number {text} has no exact DOUBLE")
    return exp.Cast(this=_s(repr(float(value))), to=exp.DataType.build("DOUBLE"))


@dataclass
class _Leaf:
    """One comparison's answer for each kind of JSON value at the path (text/number: the value's text as SQL)."""
    string: Callable[[exp.Expression], exp.Expression]
    number: Callable[[exp.Expression, exp.Expression], exp.Expression] = lambda text, is_int: FALSE
    boolean: Callable[[exp.Expression], exp.Expression] = lambda text: FALSE
    null: exp.Expression = FALSE
    object: exp.Expression = FALSE
    array: Callable[[exp.Expression], exp.Expression] = lambda v: NULL  # the reference fans out over lists
    missing: exp.Expression = FALSE
    instant: Callable[[exp.Expression], exp.Expression] | None = None


def _leaf(c: Compare, target: Target) -> _Leaf | None:
    """The leaf for c, or None when its literal can't be converted (then the comparison always fails)."""
    op, text = c.op, c.value or ""
    if op == ":*":
        return _Leaf(lambda s: TRUE, lambda t, i: TRUE, lambda b: TRUE, TRUE, TRUE,
                     lambda v: exp.Not(this=exp.Is(this=exp.JSONType(this=_get(v, (), first=True)), expression=NULL)),
                     FALSE, lambda col: TRUE)
    if op in ("=~", "!~"):
        return _regex_leaf(c, op, text)
    if c.path == ("severity",):
        return _severity_leaf(op, text, target)
    if c.path in _TIME_FIELDS:
        return _time_leaf(op, text, target)
    if c.bare and text == "NULL_VALUE":  # = and : test for JSON null, != for anything else
        return {"=": _Leaf(lambda s: FALSE, null=TRUE), ":": _Leaf(lambda s: FALSE, null=TRUE),
                "!=": _Leaf(lambda s: TRUE, lambda t, i: TRUE, lambda b: TRUE, FALSE, TRUE)}.get(op)
    return _value_leaf(op, text)


def _regex_leaf(c: Compare, op: str, text: str) -> _Leaf:
    """`=~` / `!~`: an RE2 search on the string; a LogEntry without severity is tested as DEFAULT."""
    missing = FALSE
    if c.path == ("severity",):  # a LogEntry without severity has DEFAULT, and the regex is tested on that
        hit = compile_regex(text).search("DEFAULT") is not None
        missing = TRUE if hit == (op == "=~") else FALSE
    return _Leaf(lambda s: _rx(s, text) if op == "=~" else exp.Not(this=_rx(s, text)), missing=missing)


def _severity_leaf(op: str, text: str, target: Target) -> _Leaf | None:
    """A severity ordering: names and numbers compared as levels (DEFAULT 0 ... EMERGENCY 800)."""
    rel = _REL[op]
    lit = SEVERITY.get(text, SEVERITY.get(text.upper(), int(text) if text.isdigit() and text.isascii() else None))
    if lit is None:
        return None
    def of_string(s: exp.Expression) -> exp.Expression:
        level = _case((exp.Not(this=_rx(s, r"^[\x00-\x7f]*$")), NULL),
                      *[(exp.EQ(this=exp.Upper(this=s), expression=_s(k)), _n(n)) for k, n in SEVERITY.items()],
                      (_rx(s, r"^\d{1,18}$"), exp.Cast(this=s, to=exp.DataType.build("BIGINT"))),
                      (_rx(s, r"^\d+$"), NULL), default=_n(-1))
        return exp.And(this=exp.GTE(this=level, expression=_n(0)), expression=rel(this=level, expression=_n(lit)))
    def of_number(t: exp.Expression, is_int: exp.Expression) -> exp.Expression:
        if not target.types["int"]:
            raise Uncompilable("the target's JSON does not tell integers from floats")
        return _case((exp.Not(this=is_int), FALSE), (_rx(t, r"^-?\d{1,18}$"),
                     rel(this=exp.Cast(this=t, to=exp.DataType.build("BIGINT")), expression=_n(lit))),
                     default=NULL)
    return _Leaf(of_string, of_number, missing=rel(this=_n(0), expression=_n(lit)))


def _time_leaf(op: str, text: str, target: Target) -> _Leaf | None:
    """A timestamp comparison: instants to the nanosecond, UTC spellings compared as text, others undecided."""
    rel = _REL[op]
    try:
        ns = parse_timestamp_ns(text)
        sec, frac = divmod(ns, 1_000_000_000)
        t = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=sec)
    except (ValueError, OverflowError):
        return None
    key = _s(f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}{frac:09d}")
    def of_string(s: exp.Expression) -> exp.Expression:
        digits = exp.RegexpReplace(this=exp.Substring(this=s, start=_n(20)), expression=_s("[.Z]"),
                                   replacement=_s(""))  # the fraction's digits, '' when there is none
        text_key = exp.DPipe(this=exp.Substring(this=s, start=_n(1), length=_n(19)),
                             expression=exp.Pad(this=digits, expression=_n(9), fill_pattern=_s("0"), is_left=False))
        return _case((_rx(s, UTC_RE), rel(this=exp.Paren(this=text_key), expression=key)), (_rx(s, TS_RE), NULL),
                     default=FALSE)
    return _Leaf(of_string, instant=lambda col: target.instant(col, op, ns))


def _value_leaf(op: str, text: str) -> _Leaf:
    """Any other field: case-folded strings, numbers compared numerically, booleans as true/false."""
    rel = _REL[op]
    norm, num = _norm(text), _number_literal(text)
    boolean = {"true": 1, "false": 0}.get(text.lower())

    def of_string(s: exp.Expression) -> exp.Expression:
        if op == ":":
            return TRUE if not norm else exp.GT(this=exp.StrPosition(this=_fold(s), substr=_s(norm)), expression=_n(0))
        test = rel(this=_fold(s), expression=_s(norm))
        if op == "=":
            test = exp.Or(this=exp.EQ(this=s, expression=_s(text)), expression=test)
        elif op == "!=":
            test = exp.And(this=exp.NEQ(this=s, expression=_s(text)), expression=test)
        if num is not None:
            test = _case((_rx(s, "^" + _NUM.pattern + "$"), rel(this=_double(s), expression=num)), default=test)
        return test
    return _Leaf(of_string,
                 (lambda t, i: rel(this=_double(t), expression=num)) if num is not None else (lambda t, i: FALSE),
                 (lambda b: rel(this=_case((exp.EQ(this=b, expression=_s("true")), _n(1)), default=_n(0)),
                                expression=_n(boolean)))
                 if boolean is not None else (lambda b: FALSE),
                 object=NULL if op == ":" else FALSE)


def _get(j: exp.Expression, keys: tuple[str, ...], scalar: bool = False, first: bool = False) -> exp.Expression:
    """The JSON value (or, scalar, its text) at keys under j; first: j's element 0 (j is an array)."""
    for k in keys:
        if not k or '"' in k or "\\" in k:
            raise Uncompilable(f"field name {k!r} has no exact JSON path here")
    parts = [exp.JSONPathRoot(), exp.JSONPathSubscript(this=0)] if first else \
        [exp.JSONPathRoot(), *(exp.JSONPathKey(this=k) for k in keys)]
    path = exp.JSONPath(expressions=parts)
    if not keys and not scalar and not first:
        return j
    return (exp.JSONExtractScalar if scalar else exp.JSONExtract)(this=j, expression=path)


def _in(value: exp.Expression, names: tuple[str, ...]) -> exp.Expression:
    return exp.In(this=value, expressions=[_s(n) for n in names]) if names else FALSE


def _json_test(j: exp.Expression, keys: tuple[str, ...], leaf: _Leaf, target: Target) -> exp.Expression:
    """leaf applied to the JSON value at keys under j (NULL where a list on the way would fan out)."""
    ty = exp.JSONType(this=_get(j, keys))
    types, text = target.types, _get(j, keys, scalar=True)
    on_the_way = [exp.EQ(this=exp.JSONType(this=_get(j, keys[:i])), expression=_s(types["array"][0]))
                  for i in range(0 if j.name != target.raw else 1, len(keys))]
    return _case(*[(w, NULL) for w in on_the_way], (exp.Is(this=ty, expression=NULL), leaf.missing),
                 (_in(ty, types["string"]), leaf.string(text)),
                 (_in(ty, types["int"] + types["float"]), leaf.number(text, _in(ty, types["int"]))),
                 (_in(ty, types["boolean"]), leaf.boolean(text)), (_in(ty, types["null"]), leaf.null),
                 (_in(ty, types["object"]), leaf.object), default=leaf.array(_get(j, keys)))


def _locate(path: tuple[str, ...], target: Target, leaf: _Leaf) -> exp.Expression:
    """leaf at path: through the longest fast column on it, and the raw entry where that column is NULL."""
    slow = _json_test(exp.column(target.raw), path, leaf, target) if target.raw else leaf.missing
    for n in range(len(path), 0, -1):
        if (col := target.columns.get(path[:n])) is None:
            continue
        name, kind = col
        ref = exp.column(*reversed(name.split("."))) if "." in name else exp.column(name)
        if kind == "json":
            fast = _json_test(ref, path[n:], leaf, target)
        elif n < len(path):
            break  # a path below a string or timestamp: only the raw entry knows
        elif kind == "text":
            fast = leaf.string(ref)
        elif leaf.instant is not None:
            fast = leaf.instant(ref)
        else:
            break  # a string test of a timestamp: the column holds the instant, not the spelling
        return _case((exp.Not(this=exp.Is(this=ref, expression=NULL)), fast), default=slow)
    if not target.raw:
        raise Uncompilable(f"no column holds {'.'.join(path)} exactly")
    return slow


def _log_id(arg: str, target: Target) -> exp.Expression:
    want = unquote(arg).lower()
    def of_string(s: exp.Expression) -> exp.Expression:
        prefix = r"^[^/]*/[^/]*/logs/"
        tail = exp.RegexpReplace(this=s, expression=_s(prefix), replacement=_s(""))
        for enc in ("%2F", "%2f"):
            tail = exp.Anonymous(this="REPLACE", expressions=[tail, _s(enc), _s("/")])
        return _case((exp.Not(this=_rx(s, prefix)), FALSE), (exp.Not(this=_rx(s, r"^[\x00-\x7f]*$")), NULL),
                     (exp.GT(this=exp.StrPosition(this=tail, substr=_s("%")), expression=_n(0)), NULL),
                     default=exp.EQ(this=exp.Lower(this=tail), expression=_s(want)))
    return _locate(("logName",), target, _Leaf(of_string))


def _compile(node: Node, target: Target) -> exp.Expression:
    match node:
        case And(()) | Or(()):
            return TRUE if isinstance(node, And) else FALSE
        case And(items) | Or(items):
            op = exp.And if isinstance(node, And) else exp.Or
            return functools.reduce(lambda x, y: op(this=x, expression=y), [_paren(_compile(i, target)) for i in items])
        case Not(item):
            return exp.Not(this=_paren(_compile(item, target)))
        case Compare():
            leaf = _leaf(node, target)
            return FALSE if leaf is None else _locate(node.path, target, leaf)
        case Call(name="log_id"):
            return _log_id(node.arg, target)
    raise Uncompilable(f"{type(node).__name__} ({getattr(node, 'name', '')}) is evaluated by skill.reading.query only")


def compile_sql(filter_: str | Node, target: Target = DUCKDB) -> exp.Expression:
    """The filter as a SQL boolean over target's columns: TRUE match, FALSE no match, NULL ask skill.reading.query.
    Raises Uncompilable when some part has no exact form, FilterSyntaxError when the filter is malformed."""
    return _compile(parse(filter_) if isinstance(filter_, str) else filter_, target)


def to_sql(filter_: str | Node, target: Target = DUCKDB) -> str:
    """compile_sql rendered in the target's SQL dialect."""
    return compile_sql(filter_, target).sql(dialect=target.dialect)
