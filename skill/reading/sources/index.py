"""Replay's index of one log file: per usable entry its timestamp, byte span, route and text span, not the entry."""

from __future__ import annotations

from array import array
from collections import Counter
from itertools import chain
from pathlib import Path

from .files import BLOCK, FileReport
from .spool import TextSpool


class FileIndex:
    """Per usable entry of one file: timestamp, byte span, route and text span (41 bytes an entry), the entry
    numbers of each route, and the spool of verbatim texts (skill.reading.sources.spool)."""

    def __init__(self, report: FileReport):
        self.report = report
        self.ts, self.start, self.end, self.route = array("q"), array("q"), array("q"), array("l")
        self.utc = array("b")  # the timestamp field itself is in the UTC spelling (so ts decides time terms)
        self.text = array("q")  # see text_at
        # route -> (its entries, those of them not in the spool): filled by ReplaySource._build_index
        self.by_route: dict[int, tuple[array, array]] = {}
        self.spool = TextSpool()  # the verbatim texts of the entries with a UTC timestamp
        self.first_ts = self.last_ts = 0

    def finish(self) -> None:
        """Take the time span once every entry is in (the arrays are filled by _build_index)."""
        if self.ts:
            self.first_ts, self.last_ts = min(self.ts), max(0, max(self.ts))  # as the reference reader counts

    def route_counts(self) -> Counter:
        return Counter({rid: len(ords[0]) for rid, ords in self.by_route.items()})

    def visits(self, plans: list, bulk: list) -> tuple[list[int], dict[str, set[int]]]:
        """The entries to look at, in file order, and per searched pattern the entries of the spool it may match.

        Every entry of a route some query can match (plans[route]) is looked at, except that of a route whose
        queries all test the text with a regex (bulk[route], their patterns), the entries in the spool are only
        those whose text the spool's search found for one of them (and each query's test runs only where its
        own pattern was found)."""
        every: list = []
        wanted: dict = {}
        for rid, (ords, loose) in self.by_route.items():
            if not plans[rid]:
                continue
            if bulk[rid] is None:
                every.append(ords)
            else:
                every.append(loose)
                for pattern in bulk[rid]:
                    wanted.setdefault(pattern, set()).add(rid)
        route, found = self.route, {}
        for pattern, rids in wanted.items():
            found[pattern] = {o for o in self.spool.candidates(pattern) if route[o] in rids}
        return sorted(set().union(*found.values()).union(chain(*every))), found


def text_at(doc: dict, raw: bytes) -> int:
    """Where the entry's bytes hold its textPayload's UTF-8 verbatim, as start << 32 | end within raw; -1 if they
    don't (escapes, another payload beside it, no textPayload). Found by searching for those very bytes, so
    whatever spans it gives hold exactly the string, however the JSON around it is laid out."""
    text = doc.get("textPayload")
    if type(text) is not str or "jsonPayload" in doc or "protoPayload" in doc or len(raw) >= 1 << 32:
        return -1
    enc = text.encode("utf-8", "surrogatepass")
    j = raw.rfind(enc)  # gcloud sorts the keys: textPayload comes last but one, so from the end is quickest
    return -1 if j < 0 else j << 32 | (j + len(enc))


class LineCounter:
    """`file:line` for byte offsets of one file, counted only when asked (offsets in increasing order)."""

    def __init__(self, path: Path):
        self.path, self.pos, self.line = path, 0, 1

    def where(self, offset: int) -> str:
        with open(self.path, "rb") as f:
            f.seek(self.pos)
            while self.pos < offset:
                block = f.read(min(BLOCK, offset - self.pos))
                if not block:
                    break
                self.line += block.count(b"\n")
                self.pos += len(block)
        return f"{self.path.name}:{self.line}"
