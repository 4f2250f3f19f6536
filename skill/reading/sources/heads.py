"""What replay's index pass decodes of an entry: its routing fields, typed, and nothing of its payload.

`iter_blocks` reads a gcloud array in 16 MiB blocks of whole elements, split where the exact reader splits them;
msgspec decodes each element into `Head`: insertId, timestamp, severity and logName as values, resource and labels as
their raw JSON bytes (the route key; a route's skeleton is decoded from them once, by orjson), the payload fields as
raw spans only (textPayload's literal goes to the spool when it is the text verbatim). The rest is done a block at a
time in C (`utc_times`, `route_ids`, `spooled`). Building no dict per entry is what makes the pass cheap; anything
about an element that is not usual (another type where a string belongs, a `kind`, a timestamp in another spelling,
a value msgspec refuses) sends its block down the exact per-entry path (orjson, as before), so answers do not change.

What msgspec accepts is at most what orjson accepts, with two exceptions checked here: bytes that are not UTF-8
inside a skipped value (a block that is not ASCII is decoded as UTF-8 first, strictly) and numbers beyond a double's
range inside a skipped value (orjson refuses 1e400; such an entry is decoded by the standard library when it is
visited, which is what the reference reader would have given it).
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from pathlib import Path
from itertools import compress, repeat
from operator import add, and_, attrgetter, eq, is_, itemgetter, not_
from typing import Any, cast

import msgspec
import orjson
from msgspec import Raw

from ..records import _second_ns
from .files import BLOCK, ELEMENT_SEP, NotFast, array_bounds

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
_HEAD, _FRAC = itemgetter(slice(0, 19)), itemgetter(slice(20, -1))
_ZEROS = repeat("0")
get_iid, get_ts, get_kind = attrgetter("insertId"), attrgetter("timestamp"), attrgetter("kind")
get_log, get_sev, get_res, get_lab = attrgetter("logName"), attrgetter("severity"), attrgetter("resource"), attrgetter(
    "labels")
get_text, get_json, get_proto = attrgetter("textPayload"), attrgetter("jsonPayload"), attrgetter("protoPayload")


def utc_times(stamps: list) -> list[int] | None:
    """parse_utc of every timestamp of a block at once, or None when one is not a string in gcloud's UTC spelling
    of a real instant (the block's entries then go one by one): `YYYY-MM-DDTHH:MM:SS` (checked once per second by
    records._second_ns), then `Z`, or `.`, one to nine ASCII digits and `Z`."""
    if set(map(type, stamps)) != {str} or not all(map(str.isascii, stamps)):
        return None
    if not set(map(len, stamps)) <= _LENS or not set(zip(map(len, stamps), map(_AT19, stamps),
                                                          map(_LAST, stamps))) <= _SHAPES:
        return None
    fracs = list(map(_FRAC, stamps))
    if not all(map(str.isdigit, filter(None, fracs))):
        return None
    bases = list(map(_SECONDS.__getitem__, map(_HEAD, stamps)))
    if None in bases:
        return None
    return list(map(add, bases, map(int, map(str.ljust, fracs, repeat(9), _ZEROS))))


_AT19, _LAST = itemgetter(19), itemgetter(-1)
_SHAPES = {(20, "Z", "Z"), *((n, ".", "Z") for n in range(22, 31))}
_LENS = {n for n, _dot, _z in _SHAPES}


def usual(heads: list[Head]) -> bool:
    """Every element of the block is a plain LogEntry for the fast path: a non-empty string insertId, no `kind`,
    logName and severity strings (or absent)."""
    iids = list(map(get_iid, heads))
    return (set(map(type, iids)) == {str} and all(iids) and all(map(is_, map(get_kind, heads), repeat(NONE)))
            and set(map(type, map(get_log, heads))) <= _STR_OR_UNSET
            and set(map(type, map(get_sev, heads))) <= _STR_OR_UNSET)


_STR_OR_UNSET = {str, type(UNSET)}


def route_ids(routes: Routes, heads: list[Head]) -> list[int]:
    """The route of each element. Most routes are told apart by logName, severity and resource (a container, a
    node), so those key a first table whose routes remember their labels; a block whose labels all equal their
    route's (a memcmp each) is done. Otherwise the block is keyed on all four (labels bytes too): equal keys, equal
    routing fields."""
    logs, sevs, ress, labs = (list(map(get_log, heads)), list(map(get_sev, heads)), list(map(get_res, heads)),
                              list(map(get_lab, heads)))
    first = routes.first
    keys = list(zip(logs, sevs, map(bytes, ress)))
    rids = list(map(first.get, keys))
    if None in rids:  # the first element of a route in this file: made from its own labels
        for i, r in enumerate(rids):
            if r is None:
                r = first.get(keys[i])
                if r is None:
                    r = first[keys[i]] = routes.make((*keys[i], bytes(labs[i])), labs[i])
                rids[i] = r
    done = cast(list[int], rids)
    if all(map(eq, labs, map(routes.labels.__getitem__, done))):
        return done
    return list(map(routes.__getitem__, zip(logs, sevs, map(bytes, ress), map(bytes, labs))))


def spooled(heads: list[Head]) -> tuple[list[int], list]:
    """(positions in the block, textPayload literals) of the elements with a textPayload and no other payload;
    whether each literal is a string without escapes (the text verbatim) is TextSpool.extend_quoted's to check."""
    texts = list(map(get_text, heads))
    has = list(map(bool, map(len, texts)))  # bools: and_ below is a bitwise and
    if not all(map(is_, map(get_json, heads), repeat(NONE))) or not all(map(is_, map(get_proto, heads), repeat(NONE))):
        has = list(map(and_, has, map(is_, map(get_json, heads), repeat(NONE))))
        has = list(map(and_, has, map(is_, map(get_proto, heads), repeat(NONE))))
    return list(compress(range(len(heads)), has)), list(compress(texts, has))


def verbatim(at: list[int], quoted: list) -> tuple[list[int], list[bytes]]:
    """The texts of those literals that are strings without escapes, one by one (when a block has others)."""
    raws = list(map(bytes, quoted))
    ok = list(map(and_, map(bytes.startswith, raws, repeat(b'"')), map(not_, map(bytes.__contains__, raws,
                                                                                  repeat(b"\\")))))
    return list(compress(at, ok)), list(map(_UNQUOTE, compress(raws, ok)))


_UNQUOTE = itemgetter(slice(1, -1))


def ascii_or_utf8(block: memoryview | bytes) -> bool:
    """Whether a block's bytes are valid UTF-8 (msgspec does not check the strings it skips; orjson does): ASCII when
    the whole buffer it views is, else decoded strictly."""
    whole = block.obj if isinstance(block, memoryview) else block
    if isinstance(whole, bytes | bytearray) and whole.isascii():
        return True
    try:
        codecs.utf_8_decode(block, "strict", True)
    except UnicodeDecodeError:
        return False
    return True


class Routes(dict):
    """Route key (logName, severity, resource bytes, labels bytes) -> route number; a new key's skeleton (its routing
    fields as orjson decodes them) is made once. `first` keys routes on the first three only, the route made from
    the first labels seen with them (`labels`: each route's labels, raw), for route_ids to check."""

    def __init__(self, skeletons: list[dict]):
        super().__init__()
        self.skeletons = skeletons
        self.labels: list[Raw | None] = []
        self.first: dict[tuple, int] = {}

    def __missing__(self, key: tuple) -> int:
        return self.make(key, None)

    def make(self, key: tuple, labels: Raw | None) -> int:
        log, severity, resource, raw_labels = key
        skel: dict = {}
        if log is not UNSET:
            skel["logName"] = log
        if resource:
            skel["resource"] = load_entry(resource)
        if raw_labels:
            skel["labels"] = load_entry(raw_labels)
        if severity is not UNSET:
            skel["severity"] = severity
        rid = len(self.skeletons)
        if labels is None:
            self[key] = rid
        self.skeletons.append(skel)
        self.labels.append(labels)
        return rid


def load_entry(raw: bytes):
    """An indexed element's value: orjson's, or the standard library's where orjson refuses a number beyond a double's
    range that the typed decoder skipped (what the reference reader would have given it)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)


# -- the blocks the index pass decodes ------------------------------------------------------------------------

SEP_RX = re.compile(re.escape(ELEMENT_SEP))
_SEP_AT = re.Match.start


def iter_blocks(path: Path) -> Iterator[tuple[int, memoryview, list[int], list[int]]]:
    """(offset, block, starts, ends) for a gcloud-format array: blocks of whole elements, block[starts[i]:ends[i]]
    the i-th, split exactly where iter_spans splits them (on gcloud's indentation). NotFast as iter_spans for a file
    of another layout; whether each element is JSON is the caller's to check. Each block is a view of the bytes
    read for it (nothing copied); `block.obj` is those bytes, which may run past the block."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    stripped = head.lstrip(b" \t\r\n")
    if not stripped or stripped[:1] != b"[" or path.suffix.lower() in (".jsonl", ".ndjson"):
        raise NotFast("not a gcloud array")
    first, last = array_bounds(path, size, head, len(head) - len(stripped))
    if first < 0:
        return  # an empty array
    with open(path, "rb") as f:
        base, want = first, BLOCK
        while True:
            f.seek(base)
            buf = f.read(min(want, last - base))
            if base + len(buf) >= last:
                cut = last - base
            else:
                cut = buf.rfind(ELEMENT_SEP)
                if cut == -1:  # one element longer than a block
                    if len(buf) < min(want, last - base):
                        raise NotFast("file changed while read")
                    want *= 2
                    continue
                cut += 4
            if len(buf) < cut:
                raise NotFast("file changed while read")
            seps = list(map(_SEP_AT, SEP_RX.finditer(buf, 0, cut)))
            yield base, memoryview(buf)[:cut], [0, *map(add, seps, repeat(8))], [*map(add, seps, repeat(4)), cut]
            if base + cut >= last:
                return
            base, want = base + cut + 4, BLOCK  # each block read afresh at its first element: nothing carried over
