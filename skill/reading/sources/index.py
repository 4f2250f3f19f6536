"""Replay's index of one log file: per usable entry its timestamp, byte span, route and flags, not the entry."""

from __future__ import annotations

from array import array
from collections import Counter
from itertools import compress
from operator import not_
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
        self._by_route: list[array] | None = None
        self._unspooled: dict[int, array] = {}  # route -> its entries not in the spool

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

    def add_quoted(self, ordinals: list[int], quoted: list) -> bool:
        """Spool a block's texts given as JSON string literals (TextSpool.extend_quoted); False if one is not plain."""
        if self._pending[0]:
            self.spool.extend(*self._flush())
        return self.spool.extend_quoted(ordinals, quoted)

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

    def by_route(self) -> list[array]:
        """Per route, its entries in file order (made once, on the first read)."""
        if self._by_route is None:
            lists: list[array] = [array("q") for _ in range(max(self.route, default=-1) + 1)]
            adds = [a.append for a in lists]
            for o, r in enumerate(self.route):
                adds[r](o)
            self._by_route = lists
        return self._by_route

    def entries(self, every: set[int], loose: set[int]) -> list[int]:
        """The entries of the routes in `every`, and those not in the spool of the routes in `loose`, in file order."""
        by, inspool = self.by_route(), self.inspool
        out: list[int] = []
        for r in every:
            if r < len(by):
                out += by[r]
        unspooled = self._unspooled
        for r in loose - every:
            if r < len(by):
                if r not in unspooled:
                    ords = by[r]
                    unspooled[r] = array("q", compress(ords, map(not_, map(inspool.__getitem__, ords))))
                out += unspooled[r]
        out.sort()
        return out

    def searched(self, pattern: str, rids: set[int]) -> set[int]:
        """The spool's candidates for pattern among the entries of routes rids."""
        route = self.route
        return {o for o in self.spool.candidates(pattern) if route[o] in rids}

    def visits(self, plans: list, bulk: list) -> tuple[list[int], dict[str, set[int]]]:
        """The entries to look at, in file order, and per searched pattern the entries of the spool it may match.

        Every entry of a route some query can match (plans[route]) is looked at, except that of a route whose
        queries all test the text with a regex (bulk[route], their patterns), the entries in the spool are only
        those whose text the spool's search found for one of them (and each query's test runs only where its
        own pattern was found)."""
        every = {r for r, (plan, b) in enumerate(zip(plans, bulk)) if plan and b is None}
        loose = {r for r, (plan, b) in enumerate(zip(plans, bulk)) if plan and b is not None}
        wanted: dict = {}
        for rid in loose:
            for pattern in bulk[rid]:
                wanted.setdefault(pattern, set()).add(rid)
        found = {pattern: self.searched(pattern, rids) for pattern, rids in wanted.items()}
        return sorted(set().union(*found.values()).union(self.entries(every, loose))), found


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
