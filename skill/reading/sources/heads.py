"""What replay's index pass decodes of an entry: its routing fields, typed, and nothing of its payload.

msgspec decodes each element of a gcloud array into `Head`: insertId, timestamp, severity and logName as values,
resource and labels as their raw JSON bytes (the route key; a route's skeleton is decoded from them once, by
orjson), the payload fields as raw spans only (textPayload's bytes go to the spool when they are the text verbatim).
Building no dict per entry is what makes the pass cheap; everything about an element that is not usual (another
type where a string belongs, a `kind`, a timestamp in another spelling, a value msgspec refuses) sends that element
down the exact per-entry path (orjson, as before), so answers do not change.

What msgspec accepts is at most what orjson accepts, with two exceptions checked here: bytes that are not UTF-8
inside a skipped value (a block that is not ASCII is decoded as UTF-8 first, strictly) and numbers beyond a double's
range inside a skipped value (orjson refuses 1e400; such an entry is decoded by the standard library when it is
visited, which is what the reference reader would have given it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from itertools import compress, repeat
from operator import add, and_, attrgetter, is_, itemgetter, not_
from typing import Any

import msgspec
import orjson
from msgspec import Raw

from ..records import _second_ns

NONE = Raw(b"")  # an absent raw field (a present one is never empty)


class Head(msgspec.Struct, gc=False):
    """An element's routing fields (values or raw JSON) and which payloads it has (raw spans, never decoded)."""

    insertId: Any = None
    timestamp: Any = None
    severity: Any = msgspec.UNSET
    logName: Any = msgspec.UNSET
    resource: Raw = NONE
    labels: Raw = NONE
    kind: Raw = NONE
    textPayload: Raw = NONE
    jsonPayload: Raw = NONE
    protoPayload: Raw = NONE


class _Text(msgspec.Struct, gc=False):
    textPayload: Raw = NONE


decode_head = msgspec.json.Decoder(Head).decode
_decode_text = msgspec.json.Decoder(_Text).decode
UNSET = msgspec.UNSET


def verbatim_text(raw: bytes | memoryview) -> bytes | None:
    """The UTF-8 of an element's textPayload when the element holds it verbatim (a JSON string without escapes)."""
    t = bytes(_decode_text(raw).textPayload)
    return t[1:-1] if t[:1] == b'"' and b"\\" not in t else None


class _Seconds(dict):
    """'YYYY-MM-DDTHH:MM:SS' -> ns of that second (None: not a calendar time), computed once per second."""

    def __missing__(self, head: str) -> int | None:
        if len(self) > 200_000:
            self.clear()
        base = self[head] = _second_ns(head)
        return base


_SECONDS = _Seconds()
_UTC = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?Z", re.ASCII)
_HEAD, _FRAC = itemgetter(slice(0, 19)), itemgetter(slice(20, -1))
_ZEROS = repeat("0")
get_iid, get_ts, get_kind = attrgetter("insertId"), attrgetter("timestamp"), attrgetter("kind")
get_log, get_sev, get_res, get_lab = attrgetter("logName"), attrgetter("severity"), attrgetter("resource"), attrgetter(
    "labels")
get_text, get_json, get_proto = attrgetter("textPayload"), attrgetter("jsonPayload"), attrgetter("protoPayload")


def utc_times(stamps: list) -> list[int] | None:
    """parse_utc of every timestamp of a block at once, or None when one is not a string in gcloud's UTC spelling
    of a real instant (the block's entries then go one by one)."""
    if set(map(type, stamps)) != {str} or not all(map(_UTC.fullmatch, stamps)):
        return None
    bases = list(map(_SECONDS.__getitem__, map(_HEAD, stamps)))
    if None in bases:
        return None
    fracs = map(int, map(str.ljust, map(_FRAC, stamps), repeat(9), _ZEROS))
    return list(map(add, bases, fracs))


def usual(heads: list[Head]) -> bool:
    """Every element of the block is a plain LogEntry for the fast path: a non-empty string insertId, no `kind`,
    logName and severity strings (or absent)."""
    iids = list(map(get_iid, heads))
    return (set(map(type, iids)) == {str} and all(iids) and all(map(is_, map(get_kind, heads), repeat(NONE)))
            and set(map(type, map(get_log, heads))) <= _STR_OR_UNSET
            and set(map(type, map(get_sev, heads))) <= _STR_OR_UNSET)


_STR_OR_UNSET = {str, type(UNSET)}


def route_keys(heads: list[Head]) -> Iterator[tuple]:
    """(logName, severity, resource bytes, labels bytes) of each element: equal keys, equal routing fields."""
    return zip(map(get_log, heads), map(get_sev, heads), map(bytes, map(get_res, heads)),
               map(bytes, map(get_lab, heads)))


def spooled(heads: list[Head]) -> tuple[list[int], list[bytes]]:
    """(positions in the block, texts) of the elements whose only payload is a textPayload held verbatim."""
    raws = list(map(bytes, map(get_text, heads)))
    quoted = map(bytes.startswith, raws, repeat(b'"'))
    plain = map(not_, map(bytes.__contains__, raws, repeat(b"\\")))
    ok = list(map(and_, quoted, plain))
    if not all(map(is_, map(get_json, heads), repeat(NONE))) or not all(map(is_, map(get_proto, heads), repeat(NONE))):
        ok = list(map(and_, ok, map(is_, map(get_json, heads), repeat(NONE))))
        ok = list(map(and_, ok, map(is_, map(get_proto, heads), repeat(NONE))))
    return list(compress(range(len(heads)), ok)), list(map(_UNQUOTE, compress(raws, ok)))


_UNQUOTE = itemgetter(slice(1, -1))


def ascii_or_utf8(block: bytes | memoryview) -> bool:
    """Whether a block's bytes are valid UTF-8 (msgspec does not check the strings it skips; orjson does)."""
    if block.isascii() if isinstance(block, bytes) else bytes(block).isascii():
        return True
    try:
        bytes(block).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class Routes(dict):
    """Route key -> route number; a new key's skeleton (its routing fields as orjson decodes them) is made once."""

    def __init__(self, skeletons: list[dict]):
        super().__init__()
        self.skeletons = skeletons

    def __missing__(self, key: tuple) -> int:
        log, severity, resource, labels = key
        skel: dict = {}
        if log is not UNSET:
            skel["logName"] = log
        if resource:
            skel["resource"] = load_entry(resource)
        if labels:
            skel["labels"] = load_entry(labels)
        if severity is not UNSET:
            skel["severity"] = severity
        rid = self[key] = len(self.skeletons)
        self.skeletons.append(skel)
        return rid


def load_entry(raw: bytes):
    """An indexed element's value: orjson's, or the standard library's where orjson refuses a number beyond a double's
    range that the typed decoder skipped (what the reference reader would have given it)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)
