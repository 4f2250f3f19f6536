"""The Logging query language evaluated: a filter parsed by skill/reading/query.py compiled to a fast predicate over
raw LogEntry dicts (the semantics are stated in that module's docstring), and the RE2 patterns its `=~` terms use."""

from __future__ import annotations

import datetime as dt
import functools
import operator
import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import unquote

import re2

from .literals import screened
from .query import (SEVERITY, And, Call, Compare, Node, Not, Or, Restriction, compile_regex, fold, parse_cached,
                    search_terms, words)

__all__ = ["Predicate", "compile_filter", "compile_node", "matches", "parse_timestamp_ns", "regex_bytes_test",
           "utc_spelled"]

Predicate = Callable[[dict], bool]

# --- values ---------------------------------------------------------------------------------------------------

_MISSING: Any = object()
_NUM = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_TS = re.compile(r"(\d{4})-(\d\d)-(\d\d)(?:[Tt ](\d\d):(\d\d):(\d\d)(?:\.(\d+))?([Zz]|[+-]\d\d:\d\d))?", re.ASCII)
_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z", re.ASCII)
_EPOCH_DAYS = dt.date(1970, 1, 1).toordinal()
_REL = {"=": operator.eq, ":": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}
_TIME_FIELDS = {("timestamp",), ("receiveTimestamp",)}


def parse_timestamp_ns(s: str) -> int:
    """RFC 3339 (Z or +-hh:mm, fraction kept to the ns) or YYYY-MM-DD (midnight UTC) as ns since the epoch."""
    if not (m := _TS.fullmatch(s) if isinstance(s, str) else None):
        raise ValueError(f"not an RFC 3339 timestamp: {s!r}")
    y, mo, d, h, mi, sec, frac, off = m.groups()
    try:
        days = dt.date(int(y), int(mo), int(d)).toordinal() - _EPOCH_DAYS
    except ValueError:
        raise ValueError(f"not a calendar date: {s!r}") from None
    h, mi, sec = int(h or 0), int(mi or 0), int(sec or 0)
    oh, om = (int(off[1:3]), int(off[4:6])) if off and off not in "Zz" else (0, 0)
    if h > 23 or mi > 59 or sec > 59 or oh > 23 or om > 59:
        raise ValueError(f"not a time of day or UTC offset: {s!r}")
    offset = (oh * 3600 + om * 60) * (-1 if off and off[0] == "-" else 1)
    return (days * 86400 + h * 3600 + mi * 60 + sec - offset) * 1_000_000_000 + int((frac or "")[:9].ljust(9, "0"))


@functools.lru_cache(maxsize=8192)  # every query of a replay pass re-reads the same entry's timestamp
def _entry_ts(s: str) -> int | None:
    try:
        return parse_timestamp_ns(s)
    except ValueError:
        return None


def _utc_key(ns: int) -> str | None:
    """ns as 'YYYY-MM-DDTHH:MM:SS' + 9 fraction digits (UTC): the key that _UTC-spelled entries compare by."""
    sec, frac = divmod(ns, 1_000_000_000)
    try:
        t = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=sec)
    except OverflowError:
        return None
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}{frac:09d}"


def _number(s: str) -> int | float | None:
    if not _NUM.fullmatch(s):
        return None
    try:
        return int(s)
    except ValueError:
        return float(s)


def _severity(v: object) -> int | None:
    if type(v) is not str:
        return v if type(v) is int else None
    n = SEVERITY.get(v)
    return n if n is not None else SEVERITY.get(v.upper(), int(v) if v.isdigit() and v.isascii() else None)


def _flat(values: list) -> Iterator[Any]:
    for v in values:
        yield from _flat(v) if type(v) is list else (v,)


def _leaves(obj: Any) -> Iterator[str]:
    """Every scalar under obj as text (JSON spelling for booleans), for global restrictions and SEARCH."""
    stack = [obj]
    while stack:
        if (t := type(o := stack.pop())) is str:
            yield o
        elif t is dict or t is list:
            stack.extend(o.values() if t is dict else o)
        elif o is not None:
            yield ("true" if o else "false") if t is bool else str(o)


def _walk(obj: Any, keys: tuple[str, ...]) -> Any:
    """Slow path of a getter: fans out over lists on the way (repeated fields)."""
    if type(obj) is dict and keys[0] not in obj:  # the common miss (no jsonPayload) needs no fan-out
        return _MISSING
    level = [obj]
    for k in keys:
        if not (level := [o[k] for o in _flat(level) if type(o) is dict and k in o]):
            return _MISSING
    return level[0] if len(level) == 1 else level


def _getter(keys: tuple[str, ...]) -> Callable[[dict], Any]:
    if len(keys) == 1:
        def get_one(e: dict, key: str = keys[0]) -> Any:
            return e.get(key, _MISSING)
        return get_one

    def get(e: dict) -> Any:
        cur: Any = e
        try:  # the common case (plain nested dicts) costs one subscription per segment
            for k in keys:
                cur = cur[k]
            return cur
        except (KeyError, TypeError, IndexError):
            return _walk(e, keys)
    return get


# --- evaluation -----------------------------------------------------------------------------------------------

def _scalar_test(c: Compare) -> Callable[[Any], bool] | None:
    """A test of one scalar value for c, or None when the literal can't be converted (the comparison always fails)."""
    op, text = c.op, c.value or ""
    if op in ("=~", "!~"):
        return _regex_test(compile_regex(text), op == "=~")
    rel = _REL[op]
    if c.path == ("severity",):
        lit = _severity(text)
        return None if lit is None else lambda v: (n := _severity(v)) is not None and rel(n, lit)
    if c.path in _TIME_FIELDS:
        try:
            ns = parse_timestamp_ns(text)
        except ValueError:
            return None
        key = _utc_key(ns)

        def ts_test(v: Any) -> bool:
            if type(v) is not str:
                return False
            if key is not None and _UTC.fullmatch(v):  # gcloud's spelling: fixed width, so text order is time order
                return rel(v[:19] + v[20:-1].ljust(9, "0"), key)
            return (n := _entry_ts(v)) is not None and rel(n, ns)
        return ts_test
    if c.bare and text == "NULL_VALUE":
        return {"=": lambda v: v is None, ":": lambda v: v is None, "!=": lambda v: v is not None}.get(op)
    norm, num, boolean = fold(text), _number(text), {"true": True, "false": False}.get(text.lower())

    def test(v: Any) -> bool:
        t = type(v)
        if t is str:
            if op == ":":
                return norm in fold(v)
            if num is not None and (n := _number(v)) is not None:
                return rel(n, num)
            return rel(fold(v), norm)
        if t is bool:
            return boolean is not None and rel(v, boolean)
        if t is int or t is float:
            return num is not None and rel(v, num)
        if t is dict:  # `jsonPayload:"text"` searches the whole object
            return op == ":" and any(norm in fold(s) for s in _leaves(v))
        return False  # JSON null equals only NULL_VALUE
    return test


def _regex_test(rx: Any, want: bool) -> Callable[[Any], bool]:
    """Whether a string field matches rx (== want); RE2's matcher called on the UTF-8 bytes, as re2.search does,
    without building a Match object (the hot test of every replay pass)."""
    on_bytes = _regex_bytes_test(rx, want)
    return lambda v: type(v) is str and on_bytes(v.encode())


def _regex_bytes_test(rx: Any, want: bool) -> Callable[[bytes], bool]:
    """Whether the UTF-8 bytes of a string match rx (== want)."""
    raw, anchor = getattr(rx, "_regexp", None), getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
    if raw is None or anchor is None:  # another google-re2 layout: the public API, same answers
        search = rx.search
        return lambda b: (search(b.decode()) is not None) == want
    match = raw.Match
    return screened(lambda b: (match(anchor, b, 0, len(b))[0][0] != -1) == want, rx.pattern, want)


def _compare(c: Compare) -> Predicate:
    get = _getter(c.path)
    if c.op == ":*":
        return lambda e: (v := get(e)) is not _MISSING and v != []
    if (test := _scalar_test(c)) is None:
        return lambda e: False
    default = "DEFAULT" if c.path == ("severity",) else _MISSING  # a LogEntry field, so defaulted, not missing

    def pred(e: dict) -> bool:
        if (v := get(e)) is _MISSING and (v := default) is _MISSING:
            return False
        return any(test(x) for x in _flat(v)) if type(v) is list else test(v)
    text = c.value or ""
    typed = c.path == ("severity",) or c.path in _TIME_FIELDS or _number(text) is not None
    if c.op not in ("=", "!=") or typed or c.bare and text == "NULL_VALUE":
        return pred
    norm, want = fold(text), c.op == "="

    def string_eq(e: dict) -> bool:  # the hot case, fused: exact spelling first, normalised only if that fails
        if type(v := get(e)) is str:
            return (v == text or fold(v) == norm) is want
        return pred(e)
    return string_eq


def _call(c: Call) -> Predicate:
    if c.name == "log_id":
        want = unquote(c.arg).lower()

        def log_id(e: dict) -> bool:
            name = e.get("logName")
            parts = name.split("/", 3) if type(name) is str else ()  # projects/P/logs/ID, ID URL-encoded
            return len(parts) == 4 and parts[2] == "logs" and unquote(parts[3]).lower() == want
        return log_id
    loose, phrases = search_terms(c.arg)
    get = _getter(c.path) if c.path else (lambda e: e)

    def search(e: dict) -> bool:
        if (v := get(e)) is _MISSING:
            return False
        token_lists = [words(s) for s in _leaves(v)]
        have = {t for toks in token_lists for t in toks}
        joined = [f" {' '.join(toks)} " for toks in token_lists] if phrases else []
        return all(t in have for t in loose) and all(any(p in j for j in joined) for p in phrases)
    return search


def _cost(node: Node) -> int:
    """Rough evaluation cost, so AND/OR try cheap equality tests before regexes and whole-entry scans."""
    match node:
        case Compare(path=path, op=op):
            return {":*": 0, "=~": 4, "!~": 4, ":": 3}.get(op, 2 if path in _TIME_FIELDS else 1)
        case Not(item):
            return _cost(item)
        case And(items) | Or(items):
            return max(map(_cost, items), default=0)
        case Call(name="log_id"):
            return 1
    return 5


def _combine(preds: list[Predicate], every: bool) -> Predicate:
    if len(preds) == 1:
        return preds[0]
    if len(preds) == 2:
        a, b = preds
        return (lambda e: a(e) and b(e)) if every else (lambda e: a(e) or b(e))

    def loop(e: dict) -> bool:
        for p in preds:  # a plain loop: all()/any() over a generator costs a frame per item
            if (not p(e)) is every:  # `not` makes a bool of whatever a predicate returned
                return not every
        return every
    return loop


def _compile(node: Node) -> Predicate:
    match node:
        case Compare():
            return _compare(node)
        case Not(item):
            inner = _compile(item)
            return lambda e: not inner(e)
        case And(()):
            return lambda e: True
        case And(items) | Or(items):
            return _combine([_compile(i) for i in sorted(items, key=_cost)], isinstance(node, And))
        case Restriction(text):
            norm = fold(text)
            return lambda e: any(norm in fold(s) for s in _leaves(e))
        case Call():
            return _call(node)
    raise AssertionError(node)


@functools.lru_cache(maxsize=512)
def compile_filter(text: str) -> Predicate:
    """A fast predicate over raw LogEntry dicts for a filter (parsed once, cached); raises FilterSyntaxError."""
    return _compile(parse_cached(text))


@functools.lru_cache(maxsize=4096)
def compile_node(node: Node) -> Predicate:
    """A predicate for an already parsed filter (cached; nodes are immutable)."""
    return _compile(node)


def regex_bytes_test(pattern: str, want: bool) -> Callable[[bytes], bool]:
    """Whether the UTF-8 bytes of a string match the RE2 pattern (== want), without decoding them."""
    return _regex_bytes_test(compile_regex(pattern), want)


def utc_spelled(value: object) -> bool:
    """Whether a timestamp is in the fixed-width UTC form that timestamp comparisons read as its instant."""
    return type(value) is str and _UTC.fullmatch(value) is not None


def matches(text: str, entry: dict) -> bool:
    """Whether entry satisfies the filter text."""
    return compile_filter(text)(entry)
