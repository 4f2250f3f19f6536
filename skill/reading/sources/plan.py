"""Replay's query planner: a filter decided once per route (the entry's routing fields), its top-level timestamp
bounds taken out, and its residual as a test of a textPayload's bytes where it can be one.

Same answers as skill.reading.evaluate.compile_filter on every entry; only the replay source uses it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

from ..query import And, Call, Compare, Node, Not, Or, parse_cached
from ..evaluate import Predicate, compile_node, parse_timestamp_ns, regex_bytes_test


def _route_approx(node: Node, known: frozenset[str], upper: bool) -> Node:
    """node with every test of a field outside `known` replaced by true (upper) or false (lower bound)."""
    true, false = And(()), Or(())
    match node:
        case Not(item):
            return Not(_route_approx(item, known, not upper))
        case And(items) | Or(items):
            return type(node)(tuple(_route_approx(i, known, upper) for i in items))
        case Compare(path=path) if path[0] in known:
            return node
        case Call(name="log_id") if "logName" in known:
            return node
        case Call(path=path) if path and path[0] in known:
            return node
    return true if upper else false


@functools.lru_cache(maxsize=512)
def compile_route_filter(text: str, known: tuple[str, ...]) -> Predicate:
    """A necessary condition of the filter that reads only the top-level fields `known` of an entry.

    False on a dict holding an entry's `known` fields means the filter is false on the entry itself, whatever
    its other fields hold; replay uses it to skip parsing entries again (same answers, less work).
    """
    return compile_node(_route_approx(parse_cached(text), frozenset(known), True))


def _known(node: Node, known: frozenset[str]) -> bool:
    match node:
        case Compare(path=path):
            return path[0] in known
        case Call(name="log_id"):
            return "logName" in known
        case Call(path=path):
            return bool(path and path[0] in known)
    return False


def _specialise(node: Node, route: dict, known: frozenset[str], leaf: Callable[[Node], Predicate]) -> Node | bool:
    """node with every test of a `known` field decided on route (a dict of those fields), then simplified."""
    match node:
        case Not(item):
            r = _specialise(item, route, known, leaf)
            return (not r) if type(r) is bool else Not(r)
        case And(items) | Or(items):
            every = isinstance(node, And)
            rest = []
            for i in items:
                r = _specialise(i, route, known, leaf)
                if type(r) is bool:
                    if r is not every:
                        return r
                    continue
                rest.append(r)
            return every if not rest else rest[0] if len(rest) == 1 else type(node)(tuple(rest))
    if _known(node, known):
        return bool(leaf(node)(route))
    return node


def route_residual(text: str, route: dict, known: tuple[str, ...]) -> Predicate | bool:
    """The filter on entries whose `known` fields equal route's: False, True, or a predicate over the rest.

    Same answers as compile_filter(text) on every such entry; replay decides the routing fields once per
    route instead of once per entry, and skips the entries of a route that can't match.
    """
    r = _specialise(parse_cached(text), route, frozenset(known), compile_node)
    return r if type(r) is bool else compile_node(r)


class TimedResidual(NamedTuple):
    """A route's residual split for replay: entries whose timestamp is in gcloud's UTC spelling are tested against
    [lo, hi] (ns, from the filter's top-level timestamp terms) and then `rest`; any other entry gets `full`.

    `text` is `rest` on an entry whose only payload is a textPayload string, as a test of that string's UTF-8 bytes
    (so replay need not parse the entry to find it false), or None when `rest` reads other fields too; `pattern` is
    the RE2 pattern when `text` is just `textPayload=~pattern` (replay ORs a route's patterns into one prefilter)."""
    lo: int
    hi: int
    rest: Predicate | bool
    full: Predicate | bool
    text: Callable[[bytes], bool] | bool | None
    pattern: str | None = None


def text_gate(plans: Sequence[TimedResidual]) -> Callable[[bytes], bool] | None:
    """One test of a textPayload's bytes that is false whenever every plan's `text` is: the OR of their patterns, so
    an entry none of them wants costs one RE2 search instead of one per plan. None unless each plan has a pattern."""
    patterns = [p.pattern for p in plans]
    if len(patterns) < 2 or None in patterns:
        return None
    return regex_bytes_test("|".join(f"(?:{p})" for p in dict.fromkeys(patterns)), True)


def route_plan(text: str, route: dict, known: tuple[str, ...]) -> TimedResidual | None:
    """route_residual(text, route, known) with its top-level timestamp bounds taken out; None if it is False."""
    r = _specialise(parse_cached(text), route, frozenset(known), compile_node)
    if r is False:
        return None
    if r is True:
        return TimedResidual(0, 1 << 126, True, True, True)
    items = r.items if isinstance(r, And) else (r,)
    lo, hi, rest = 0, 1 << 126, []
    for it in items:
        if not isinstance(it, Compare) or (ns := _timestamp_bound(it)) is None:
            rest.append(it)
        elif it.op == ">=":
            lo = max(lo, ns)
        elif it.op == ">":
            lo = max(lo, ns + 1)
        elif it.op == "<=":
            hi = min(hi, ns)
        else:
            hi = min(hi, ns - 1)
    node: Node | Literal[True] = True if not rest else rest[0] if len(rest) == 1 else And(tuple(rest))
    left: Predicate | bool = True if node is True else compile_node(node)
    return TimedResidual(lo, hi, left, compile_node(r), _text_form(node), _pattern(node))


def _timestamp_bound(c: Compare) -> int | None:
    """The instant of a top-level `timestamp >= / > / <= / < T` term, or None (another term, or T unreadable)."""
    if c.path == ("timestamp",) and c.op in (">=", ">", "<=", "<") and c.value:
        try:
            return parse_timestamp_ns(c.value)
        except ValueError:
            return None
    return None


OTHER_PAYLOADS = frozenset({"jsonPayload", "protoPayload"})  # absent from an entry whose payload is textPayload


def _text_form(node: Node | Literal[True]) -> Callable[[bytes], bool] | bool | None:
    """node on entries with a textPayload string and no other payload, as a test of the string's UTF-8 bytes;
    None when node reads a field other than textPayload (then only the whole entry can answer)."""
    if node is True:
        return True
    r = _specialise(node, {}, OTHER_PAYLOADS, compile_node)  # their tests decided as on an entry without them
    if type(r) is bool:
        return r
    if _fields(r) != {"textPayload"}:
        return None
    if isinstance(r, Compare) and r.path == ("textPayload",) and r.op in ("=~", "!~"):
        return regex_bytes_test(r.value or "", r.op == "=~")  # the usual residual: no str made at all
    pred = compile_node(r)
    return lambda b: pred({"textPayload": b.decode()})


def _pattern(node: Node | Literal[True]) -> str | None:
    """The pattern of node on entries whose only payload is a textPayload string, when it is `textPayload=~pattern`."""
    if node is True:
        return None
    r = _specialise(node, {}, OTHER_PAYLOADS, compile_node)
    if isinstance(r, Compare) and r.path == ("textPayload",) and r.op == "=~" and r.value:
        return r.value
    return None


def _fields(node: Node) -> set[str] | None:
    """The top-level fields node reads, or None when it reads all of them (a global restriction, SEARCH(text))."""
    match node:
        case Not(item):
            return _fields(item)
        case And(items) | Or(items):
            out: set[str] = set()
            for i in items:
                if (f := _fields(i)) is None:
                    return None
                out |= f
            return out
        case Compare(path=path):
            return {path[0]}
        case Call(name="log_id"):
            return {"logName"}
        case Call(path=path) if path:
            return {path[0]}
    return None
