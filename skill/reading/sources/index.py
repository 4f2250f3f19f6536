"""Replay's index of one log file: per usable entry its timestamp, byte span, route and flags, not the entry."""

from __future__ import annotations

from array import array
from collections import Counter
from itertools import compress, count
from operator import and_, not_, or_
from pathlib import Path

from .files import BLOCK, FileReport
from .spool import TextSpool


class FileIndex:
    """Per usable entry of one file: timestamp, byte span, route, whether its timestamp is in the UTC spelling and
    whether its text is in the spool (34 bytes an entry), and the spool of verbatim texts (skill.reading.sources.spool)."""

    def __init__(self, report: FileReport):
        self.report = report
        self.ts, self.start, self.end, self.route = array("q"), array("q"), array("q"), array("l")
        self.utc = array("b")  # the timestamp field itself is in the UTC spelling (so ts decides time terms)
        self.inspool = array("b")  # the entry's only payload is a textPayload held verbatim, and it is in the spool
        self.spool = TextSpool()  # the verbatim texts of the entries with a UTC timestamp
        self._pending: tuple[list[int], list[bytes]] = ([], [])
        self.first_ts = self.last_ts = 0

    def add_text(self, ordinal: int, text: bytes) -> None:
        """Spool one entry's text (batched, so the work per text stays in C)."""
        ords, texts = self._pending
        ords.append(ordinal)
        texts.append(text)
        if len(ords) >= SPOOL_BATCH:
            self.spool.extend(*self._flush())

    def add_texts(self, ordinals: list[int], texts: list[bytes]) -> None:
        """Spool a block's texts, after any pending (the spool's lines stay in entry order)."""
        if self._pending[0]:
            self.spool.extend(*self._flush())
        self.spool.extend(ordinals, texts)

    def _flush(self) -> tuple[list[int], list[bytes]]:
        out, self._pending = self._pending, ([], [])
        return out

    def finish(self) -> None:
        """Spool what is pending and take the time span once every entry is in."""
        self.spool.extend(*self._flush())
        if self.ts:
            self.first_ts, self.last_ts = min(self.ts), max(0, max(self.ts))  # as the reference reader counts

    def route_counts(self) -> Counter:
        return Counter(self.route)

    def visits(self, plans: list, bulk: list) -> tuple[list[int], dict[str, set[int]]]:
        """The entries to look at, in file order, and per searched pattern the entries of the spool it may match.

        Every entry of a route some query can match (plans[route]) is looked at, except that of a route whose
        queries all test the text with a regex (bulk[route], their patterns), the entries in the spool are only
        those whose text the spool's search found for one of them (and each query's test runs only where its
        own pattern was found)."""
        every = bytes(1 if plan and b is None else 0 for plan, b in zip(plans, bulk))  # route -> all its entries
        loose = bytes(1 if plan and b is not None else 0 for plan, b in zip(plans, bulk))  # -> those not spooled
        wanted: dict = {}
        for rid, b in enumerate(bulk):
            if plans[rid] and b is not None:
                for pattern in b:
                    wanted.setdefault(pattern, set()).add(rid)
        route, found = self.route, {}
        for pattern, rids in wanted.items():
            found[pattern] = {o for o in self.spool.candidates(pattern) if route[o] in rids}
        picked = compress(count(), map(or_, map(every.__getitem__, route),
                                       map(and_, map(loose.__getitem__, route), map(not_, self.inspool))))
        return sorted(set().union(*found.values()).union(picked)), found


SPOOL_BATCH = 1 << 16  # verbatim texts handed to the spool at a time


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
