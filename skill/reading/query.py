"""The Logging query language (Cloud Logging filters): its syntax (lexing, quoting, the parsed tree); evaluation (a
parsed filter compiled to a predicate over raw LogEntry dicts) is skill/reading/evaluate.py.

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

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, NamedTuple

import re2

from ..errors import FilterSyntaxError

__all__ = ["RE2_MAX_MEM", "And", "Call", "Compare", "Node", "Not", "Or", "Restriction", "SEVERITY", "compile_regex", "escape",
           "fold", "parse", "parse_cached", "quote", "regex_literal", "search_terms", "words"]

MAX_LENGTH = 20_000  # Cloud Logging rejects longer filters; so do we, so replay never accepts what live would not
MAX_DEPTH = 64  # nested parentheses; far beyond any real filter, far below Python's recursion limit
SEVERITY = {"DEFAULT": 0, "DEBUG": 100, "INFO": 200, "NOTICE": 300, "WARNING": 400, "ERROR": 500, "CRITICAL": 600,
            "ALERT": 700, "EMERGENCY": 800}


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


# --- regular expressions, case folding, SEARCH's words -------------------------------------------------------

RE2_MAX_MEM = 64 << 20  # per compiled pattern: the program plus its DFA cache, allocated only as it is used


@functools.lru_cache(maxsize=1024)
def compile_regex(pattern: str) -> Any:
    """An RE2 pattern compiled once (cached), with room for the catalog's large alternations."""
    opts = re2.Options()
    opts.log_errors = False  # the error reaches the user as FilterSyntaxError; RE2's stderr line would be noise
    # The catalog's pushdown alternation (8,000+ characters, counted repetitions) leaves the default 8 MiB too little
    # room for RE2's DFA once compiled; RE2 then falls back to its NFA, ~35x slower on every line replay tests.
    opts.max_mem = RE2_MAX_MEM
    return re2.compile(pattern, options=opts)


def fold(s: str) -> str:
    """NFKC_Casefold, the normalisation the LQL page names for string comparisons (ASCII fast path)."""
    return s.lower() if s.isascii() else unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", s).casefold())


_TOKENS = re.compile(r"[^\W_]+")


def words(s: str) -> list[str]:
    """The alphanumeric tokens SEARCH reads in a string, folded."""
    return _TOKENS.findall(fold(s))


def search_terms(query: str) -> tuple[list[str], list[str]]:
    """SEARCH's loose tokens and its backticked phrases (as ' tok tok ' for a token-boundary substring test)."""
    parts = query.split("`")
    loose = [t for p in parts[0::2] for t in words(p)]
    return loose, [f" {' '.join(toks)} " for p in parts[1::2] if (toks := words(p))]


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
    toks: list[_Tok] = []
    i = 0
    while i < len(text):
        if not (m := _LEX.match(text, i)):
            raise _syntax_error(text, i, f"unexpected character {text[i]!r}")
        if m.lastgroup == "str":
            if not (body := _STR_BODY.match(text, i + 1)):
                raise _syntax_error(text, i, "unterminated string")
            toks.append(_Tok("str", _unescape(body.group(1)), i, body.end()))
            i = body.end()
            continue
        if m.lastgroup not in ("ws", "comment"):
            toks.append(_Tok(m.lastgroup if m.lastgroup in ("op", "word") else m.group(), m.group(), i, m.end()))
        i = m.end()
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
                    compile_regex(value.text)
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
            if not any(search_terms(query := args[-1][0].val)):
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


@functools.lru_cache(maxsize=512)
def parse_cached(text: str) -> Node:
    """parse(text), cached (ASTs are immutable)."""
    return parse(text)
