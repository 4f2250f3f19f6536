"""The Logging query language (Cloud Logging filters): parsed once, compiled to a predicate over raw LogEntry dicts.

Semantics follow https://cloud.google.com/logging/docs/view/logging-query-language ("the LQL page") and
https://cloud.google.com/logging/docs/view/troubleshoot-lql:
- Precedence: "The NOT operator has the highest precedence, followed by OR and AND in that order", so
  `"a" OR NOT "b" AND NOT "c" OR "d"` is `("a" OR (NOT "b")) AND ((NOT "c") OR "d")`. Omitted AND (adjacent terms,
  also across lines) is AND. "Boolean operators always need to be capitalized. Lowercase and, or, and not are parsed
  as search terms." `--` starts a comment; `-` is NOT.
- Strings: "Comparisons ignore letter case ... normalized using NFKC_CF" ("The resource type must be exactly "gae_app"
  except for letter case"), so `=`, `!=` and the orderings are case-insensitive; `:` is the same test on a substring.
  `=~`/`!~` are RE2 searches, "case sensitive and not anchored by default", on string fields only.
- `field OP (v1 OR v2)` applies the field and operator to each value. Arrays: "each member of the array is compared
  ... joined together using the OR operator". Numbers compare numerically when both sides are numbers.
- Missing fields: comparisons on them fail, so `NOT f=x` is true and `f!=x` false; only `severity` is defaulted (to
  DEFAULT). A value that can't be converted (bad timestamp, unknown severity) makes the comparison fail, not the filter:
  "If an attempted conversion fails, then the comparison fails."
- Timestamps are instants to the nanosecond (RFC 3339 with Z or +-hh:mm; YYYY-MM-DD is midnight UTC).
- log_id("a/b") matches logName .../logs/a%2Fb ("you don't need to URL escape the [LOG_ID]"), ignoring case.
- Approximations: SEARCH splits text into alphanumeric tokens (Cloud Logging's analyzer is richer) and treats a
  backticked phrase as a token sequence; a global restriction is a case-insensitive substring test on every scalar.
- Unknown escapes in string literals keep their backslash, so a hand-written `=~"\\d+"` means what it looks like.
"""

from __future__ import annotations

import datetime as dt
import functools
import operator
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple
from urllib.parse import unquote

import re2

from ..errors import FilterSyntaxError
from .literals import screened

__all__ = ["And", "Call", "Compare", "Node", "Not", "Or", "Predicate", "Restriction", "SEVERITY", "compile_filter",
           "compile_node", "escape", "matches", "parse", "parse_cached", "parse_timestamp_ns", "quote",
           "regex_bytes_test", "regex_literal", "utc_spelled"]

MAX_LENGTH = 20_000  # Cloud Logging rejects longer filters; so do we, so replay never accepts what live would not
MAX_DEPTH = 64  # nested parentheses; far beyond any real filter, far below Python's recursion limit
SEVERITY = {"DEFAULT": 0, "DEBUG": 100, "INFO": 200, "NOTICE": 300, "WARNING": 400, "ERROR": 500, "CRITICAL": 600,
            "ALERT": 700, "EMERGENCY": 800}
Predicate = Callable[[dict], bool]


@dataclass(frozen=True, slots=True)
class And:
    """All items hold; the empty And (an empty filter) matches everything."""
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Or:
    """Some item holds."""
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Not:
    """The item does not hold."""
    item: Node


@dataclass(frozen=True, slots=True)
class Compare:
    """`path op value`; op ':*' tests presence (value None); bare marks an unquoted value (NULL_VALUE is one)."""
    path: tuple[str, ...]
    op: str
    value: str | None
    bare: bool = False


@dataclass(frozen=True, slots=True)
class Restriction:
    """A global restriction: some scalar anywhere in the entry contains this text."""
    text: str


@dataclass(frozen=True, slots=True)
class Call:
    """A function: `log_id(arg)`, or `search(arg)` over the entry or over `path`."""
    name: str
    arg: str
    path: tuple[str, ...] | None = None


Node = And | Or | Not | Compare | Restriction | Call


class _Lit(NamedTuple):  # a value inside `f OP (...)`, before the field and operator are distributed over it
    text: str
    bare: bool
    pos: int


class _Tok(NamedTuple):
    kind: str  # word str op ( ) , * - eof
    val: str
    start: int
    end: int


# --- lexing and quoting ---------------------------------------------------------------------------------------

_LEX = re.compile(r'(?P<ws>\s+)|(?P<comment>--[^\n]*)|(?P<str>")|(?P<op>=~|!~|!=|<=|>=|[=<>:])|(?P<punct>[(),*-])'
                  r'|(?P<word>[^\s()"=!<>:~,*]+)')
_STR_BODY = re.compile(r'((?:[^"\\]++|\\.)*+)"', re.S)  # possessive: an unclosed string must fail in linear time
_SEGMENT = re.compile(r'"((?:[^"\\]++|\\.)*+)"|([^."]+)', re.S)
_ESC = re.compile(r"\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|(.))", re.S)
_SIMPLE_ESC = {"n": "\n", "r": "\r", "t": "\t", "f": "\f", "v": "\v", '"': '"', "'": "'", "\\": "\\"}
_NEEDS_ESC = re.compile(r'[\\"\x00-\x1f\x7f-\x9f\u2028\u2029]')
_QUOTE_ESC = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _unescape(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        if hexa := m.group(1) or m.group(2) or m.group(3):
            return chr(int(hexa, 16)) if int(hexa, 16) <= 0x10FFFF else m.group(0)
        return _SIMPLE_ESC.get(m.group(4), m.group(0))
    return _ESC.sub(one, body)


def _syntax_error(text: str, pos: int, msg: str) -> FilterSyntaxError:
    pos = max(0, min(pos, len(text)))
    around = f"{text[max(0, pos - 30):pos]} ⟨here⟩ {text[pos:pos + 30]}"
    # Escaped so the message stays on one line whatever the filter holds.
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in around)
    msg = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(msg))  # RE2's message may quote a newline
    return FilterSyntaxError(f"invalid filter at position {pos}: {msg}: {shown}", text, pos)


def _lex(text: str) -> list[_Tok]:
    toks, i = [], 0
    while i < len(text):
        if not (m := _LEX.match(text, i)):
            raise _syntax_error(text, i, f"unexpected character {text[i]!r}")
        if m.lastgroup == "str":
            if not (body := _STR_BODY.match(text, i + 1)):
                raise _syntax_error(text, i, "unterminated string")
            toks.append(_Tok("str", _unescape(body.group(1)), i, body.end()))
        elif m.lastgroup not in ("ws", "comment"):
            toks.append(_Tok(m.lastgroup if m.lastgroup in ("op", "word") else m.group(), m.group(), i, m.end()))
        i = body.end() if m.lastgroup == "str" else m.end()
    return [*toks, _Tok("eof", "", len(text), len(text))]


def escape(value: str) -> str:
    """The body of a filter string literal for value: backslash, quote and control characters escaped."""
    return _NEEDS_ESC.sub(lambda m: _QUOTE_ESC.get(c := m.group()) or
                          (f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"), value)


def quote(value: str) -> str:
    """value as a double-quoted filter literal that parses back to exactly value and can't end early."""
    return f'"{escape(value)}"'


def regex_literal(pattern: str) -> str:
    """An RE2 pattern as a literal for the right of `=~` / `!~` (same escaping as quote)."""
    return quote(pattern)


# --- parsing --------------------------------------------------------------------------------------------------

def _join(cls: type[And] | type[Or], items: list[Any]) -> Any:
    flat = tuple(x for i in items for x in (i.items if isinstance(i, cls) else (i,)))
    return flat[0] if len(flat) == 1 else cls(flat)


def _describe(tok: _Tok) -> str:
    return {"eof": "the end of the filter", "str": "a string"}.get(tok.kind, repr(tok.val))


class _Parser:
    """Recursive descent over the tokens; one boolean grammar serves filters and value lists (values=True)."""

    def __init__(self, text: str):
        self.text, self.toks, self.i, self.depth = text, _lex(text), 0, 0

    def peek(self, k: int = 0) -> _Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def take(self) -> _Tok:
        tok, self.i = self.toks[self.i], min(self.i + 1, len(self.toks) - 1)
        return tok

    def error(self, msg: str, tok: _Tok | None = None) -> FilterSyntaxError:
        return _syntax_error(self.text, (tok or self.peek()).start, msg)

    def keyword(self, word: str) -> bool:
        return self.peek().kind == "word" and self.peek().val == word

    def expr(self, values: bool) -> Any:
        items = [self.disjunction(values)]
        while self.peek().kind not in ("eof", ")"):
            if self.keyword("AND"):
                self.take()
            items.append(self.disjunction(values))
        return _join(And, items)

    def disjunction(self, values: bool) -> Any:
        items = [self.unary(values)]
        while self.keyword("OR"):
            self.take()
            items.append(self.unary(values))
        return _join(Or, items)

    def unary(self, values: bool) -> Any:
        negated = False  # a loop with parity, not recursion: "NOT NOT ... x" of any length is safe
        while self.keyword("NOT") or self.peek().kind == "-" and not (values and self.negative_number()):
            self.take()
            negated = not negated
        node = self.value() if values else self.term()
        return Not(node) if negated else node

    def negative_number(self) -> bool:
        nxt = self.peek(1)
        return nxt.kind == "word" and nxt.start == self.peek().end and nxt.val[0] in "0123456789."

    def group(self, values: bool) -> Any:
        opening = self.take()
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"parentheses nested deeper than {MAX_DEPTH}", opening)
        if self.peek().kind == ")":
            raise self.error("empty parentheses")
        node = self.expr(values)
        if self.peek().kind != ")":
            raise self.error(f"expected ')' to close the '(' at {opening.start}, found {_describe(self.peek())}")
        self.take()
        self.depth -= 1
        return node

    def run(self) -> list[_Tok]:
        """Adjacent word/string tokens, such as the field path labels."k8s-pod/app".name."""
        toks = [self.take()]
        while self.peek().kind in ("word", "str") and self.peek().start == toks[-1].end:
            toks.append(self.take())
        return toks

    def path(self, toks: list[_Tok]) -> tuple[str, ...]:
        start, end, segs = toks[0].start, toks[-1].end, []
        i = start
        while True:
            if not (m := _SEGMENT.match(self.text, i, end)):
                raise _syntax_error(self.text, i, "expected a field name")
            segs.append(_unescape(m.group(1)) if m.group(1) is not None else m.group(2))
            if (i := m.end()) == end:
                return tuple(segs)
            if self.text[i] != ".":
                raise _syntax_error(self.text, i, "expected '.' between field path segments")
            i += 1

    def term(self) -> Node:
        t = self.peek()
        if t.kind == "(":
            return self.group(values=False)
        if t.kind == "word" and t.val in ("AND", "OR"):
            raise self.error(f"{t.val} needs a term on each side")
        if t.kind == "word" and self.peek(1).kind == "(" and (t.val.lower() in _FUNCS or self.peek(1).start == t.end):
            return self.call()
        if t.kind not in ("word", "str"):
            raise self.error(f"expected a comparison, a value or '(', found {_describe(t)}")
        toks = self.run()
        if self.peek().kind != "op":
            return _join(And, [Restriction(tok.val) for tok in toks])
        path, op = self.path(toks), self.take().val
        if op == ":" and self.peek().kind == "*":
            self.take()
            return Compare(path, ":*", None)
        return self.distribute(self.value(), path, op)

    def value(self) -> Any:
        t = self.peek()
        if t.kind == "(":
            return self.group(values=True)
        if t.kind == "-" and self.peek(1).kind == "word" and self.peek(1).start == t.end:
            self.take()
            return _Lit("-" + self.take().val, True, t.start)
        if t.kind == "str" or t.kind == "word" and t.val not in ("AND", "OR", "NOT"):
            self.take()
            return _Lit(t.val, t.kind == "word", t.start)
        raise self.error(f"expected a value, found {_describe(t)}")

    def distribute(self, value: Any, path: tuple[str, ...], op: str) -> Node:
        """`f OP (a OR NOT b)` becomes `f OP a OR NOT f OP b`, as the LQL page describes."""
        if isinstance(value, _Lit):
            if op in ("=~", "!~"):
                try:
                    _regex(value.text)
                except re2.error as err:
                    msg = err.args[0].decode(errors="replace") if err.args and isinstance(err.args[0], bytes) else err
                    raise _syntax_error(self.text, value.pos, f"invalid regular expression ({msg})") from None
            return Compare(path, op, value.text, value.bare)
        if isinstance(value, Not):
            return Not(self.distribute(value.item, path, op))
        return _join(type(value), [self.distribute(i, path, op) for i in value.items])

    def call(self) -> Node:
        name_tok = self.take()
        if (name := name_tok.val.lower()) not in _FUNCS:
            raise self.error(f"unsupported function {name_tok.val!r} (supported: log_id, SEARCH)", name_tok)
        self.take()
        args: list[list[_Tok]] = []
        while self.peek().kind in ("word", "str"):
            args.append(self.run())
            if self.peek().kind != ",":
                break
            self.take()
        if self.peek().kind != ")":
            raise self.error(f"expected ')' to close {name_tok.val}(, found {_describe(self.peek())}")
        self.take()
        if name == "log_id" and len(args) == 1 and len(args[0]) == 1:
            return Call("log_id", args[0][0].val)
        if name == "search" and len(args) in (1, 2) and len(args[-1]) == 1 and args[-1][0].kind == "str":
            if not any(_search_terms(query := args[-1][0].val)):
                raise self.error("SEARCH needs at least one word", args[-1][0])
            return Call("search", query, self.path(args[0]) if len(args) == 2 else None)
        usage = 'log_id("ID")' if name == "log_id" else 'SEARCH([field,] "text")'
        raise self.error(f"wrong arguments for {name_tok.val}: expected {usage}", name_tok)


_FUNCS = ("log_id", "search")


def parse(text: str) -> Node:
    """The AST of a filter; raises FilterSyntaxError (message shows the position) on anything malformed."""
    if len(text) > MAX_LENGTH:
        raise FilterSyntaxError(f"invalid filter: {len(text)} characters, the limit is {MAX_LENGTH}", text, MAX_LENGTH)
    p = _Parser(text)
    if p.peek().kind == "eof":
        return And(())
    node = p.expr(values=False)
    if p.peek().kind != "eof":
        raise p.error("unbalanced ')'")
    return node


# --- values ---------------------------------------------------------------------------------------------------

_MISSING: Any = object()
_NUM = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_TOKENS = re.compile(r"[^\W_]+")
_TS = re.compile(r"(\d{4})-(\d\d)-(\d\d)(?:[Tt ](\d\d):(\d\d):(\d\d)(?:\.(\d+))?([Zz]|[+-]\d\d:\d\d))?", re.ASCII)
_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z", re.ASCII)
_EPOCH_DAYS = dt.date(1970, 1, 1).toordinal()
_REL = {"=": operator.eq, ":": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}
_TIME_FIELDS = {("timestamp",), ("receiveTimestamp",)}


RE2_MAX_MEM = 64 << 20  # per compiled pattern: the program plus its DFA cache, allocated only as it is used


@functools.lru_cache(maxsize=1024)
def _regex(pattern: str) -> Any:
    opts = re2.Options()
    opts.log_errors = False  # the error reaches the user as FilterSyntaxError; RE2's stderr line would be noise
    # The catalog's pushdown alternation (8,000+ characters, counted repetitions) leaves the default 8 MiB too little
    # room for RE2's DFA once compiled; RE2 then falls back to its NFA, ~35x slower on every line replay tests.
    opts.max_mem = RE2_MAX_MEM
    return re2.compile(pattern, options=opts)


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


def _norm(s: str) -> str:
    """NFKC_Casefold, the normalisation the LQL page names for string comparisons (ASCII fast path)."""
    return s.lower() if s.isascii() else unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", s).casefold())


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
        return lambda e, key=keys[0]: e.get(key, _MISSING)

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
        return _regex_test(_regex(text), op == "=~")
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
    norm, num, boolean = _norm(text), _number(text), {"true": True, "false": False}.get(text.lower())

    def test(v: Any) -> bool:
        t = type(v)
        if t is str:
            if op == ":":
                return norm in _norm(v)
            if num is not None and (n := _number(v)) is not None:
                return rel(n, num)
            return rel(_norm(v), norm)
        if t is bool:
            return boolean is not None and rel(v, boolean)
        if t is int or t is float:
            return num is not None and rel(v, num)
        if t is dict:  # `jsonPayload:"text"` searches the whole object
            return op == ":" and any(norm in _norm(s) for s in _leaves(v))
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
    norm, want = _norm(text), c.op == "="

    def string_eq(e: dict) -> bool:  # the hot case, fused: exact spelling first, normalised only if that fails
        if type(v := get(e)) is str:
            return (v == text or _norm(v) == norm) is want
        return pred(e)
    return string_eq


def _search_terms(query: str) -> tuple[list[str], list[str]]:
    """SEARCH's loose tokens and its backticked phrases (as ' tok tok ' for a token-boundary substring test)."""
    parts = query.split("`")
    loose = [t for p in parts[0::2] for t in _TOKENS.findall(_norm(p))]
    return loose, [f" {' '.join(toks)} " for p in parts[1::2] if (toks := _TOKENS.findall(_norm(p)))]


def _call(c: Call) -> Predicate:
    if c.name == "log_id":
        want = unquote(c.arg).lower()

        def log_id(e: dict) -> bool:
            name = e.get("logName")
            parts = name.split("/", 3) if type(name) is str else ()  # projects/P/logs/ID, ID URL-encoded
            return len(parts) == 4 and parts[2] == "logs" and unquote(parts[3]).lower() == want
        return log_id
    loose, phrases = _search_terms(c.arg)
    get = _getter(c.path) if c.path else (lambda e: e)

    def search(e: dict) -> bool:
        if (v := get(e)) is _MISSING:
            return False
        token_lists = [_TOKENS.findall(_norm(s)) for s in _leaves(v)]
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
            norm = _norm(text)
            return lambda e: any(norm in _norm(s) for s in _leaves(e))
        case Call():
            return _call(node)
    raise AssertionError(node)


@functools.lru_cache(maxsize=512)
def compile_filter(text: str) -> Predicate:
    """A fast predicate over raw LogEntry dicts for a filter (parsed once, cached); raises FilterSyntaxError."""
    return _compile(parse(text))


@functools.lru_cache(maxsize=4096)
def compile_node(node: Node) -> Predicate:
    """A predicate for an already parsed filter (cached; nodes are immutable)."""
    return _compile(node)


def regex_bytes_test(pattern: str, want: bool) -> Callable[[bytes], bool]:
    """Whether the UTF-8 bytes of a string match the RE2 pattern (== want), without decoding them."""
    return _regex_bytes_test(_regex(pattern), want)


def utc_spelled(value: object) -> bool:
    """Whether a timestamp is in the fixed-width UTC form that timestamp comparisons read as its instant."""
    return type(value) is str and _UTC.fullmatch(value) is not None


@functools.lru_cache(maxsize=512)
def parse_cached(text: str) -> Node:
    """parse(text), cached (ASTs are immutable)."""
    return parse(text)


def matches(text: str, entry: dict) -> bool:
    """Whether entry satisfies the filter text."""
    return compile_filter(text)(entry)
