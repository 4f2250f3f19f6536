"""Replay's query passes over an indexed file: the visit of the entries some query may match (each tested on its
text's bytes where it can be), and a capped query answered apart, its candidates tested in its order until it has N.

Same answers as the reference evaluator on every entry (tests/test_replay_exact.py, tests/test_index_heads.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import repeat
from pathlib import Path
from typing import cast

from .base import LogQuery
from .heads import load_entry, verbatim_text
from .index import FileIndex
from .files import SpanReader
from .spool import bulk_patterns


def planned(path: Path, idx: FileIndex, plans: list, gates: list, bulk: list) -> Iterator[tuple[int, bytes, list]]:
    """(ts, the entry's bytes, [(query index, what to test)]) for the entries of a file some query may match.

    Only the entries idx.visits names are looked at (routes some query can match; of a route whose queries all
    test the text with a regex, those the spool's search found). An entry whose payload is a textPayload string
    kept verbatim in the file (idx.text) is tested on those bytes by the residuals that read nothing else, and
    parsed only if one of them holds (or another must see it); where every residual of the route is a textPayload
    regex, their OR (gates[route]) rules most entries out at once.
    """
    reader = SpanReader(path)
    ts_, start, end, route, utc_, inspool = idx.ts, idx.start, idx.end, idx.route, idx.utc, idx.inspool
    visits, found = idx.visits(plans, bulk)
    try:
        for o in visits:
            ts, a, b, r = ts_[o], start[o], end[o], route[o]
            plan = plans[r]
            if not utc_[o]:
                yield ts, reader.get(a, b), [(i, p.full) for i, p in plan]
                continue
            if not inspool[o]:
                todo = [(i, p.rest) for i, p in plan if p.lo <= ts <= p.hi]
                if todo:
                    yield ts, reader.get(a, b), todo
                continue
            raw, text, todo = reader.get(a, b), None, []
            searched = bulk[r] is not None  # then o is in found[p.pattern] wherever p's test may hold
            if not searched and (gate := gates[r]) is not None:
                text = cast(bytes, verbatim_text(raw))
                if not gate(text):
                    continue
            for i, p in plan:
                if not p.lo <= ts <= p.hi or (test := p.text) is False:
                    continue
                if test is None:
                    todo.append((i, p.rest))
                elif test is True:
                    todo.append((i, True))
                elif not searched or o in found[p.pattern]:
                    if text is None:
                        text = cast(bytes, verbatim_text(raw))
                    if test(text):
                        todo.append((i, True))
            if todo:
                yield ts, raw, todo
    finally:
        reader.close()


def capped(files: list[Path], index: dict[Path, FileIndex], q: LogQuery, plan: list
           ) -> Iterator[tuple[LogQuery, dict]]:
    """The first q.limit entries of q in its order (ties: the later in the files first, as the heap of _read
    keeps them), testing candidates in that order and stopping at the limit. plan[route]: q's TimedResidual
    there, or None. A candidate is every entry of a route q may match, but of a route where q's test is a regex
    on the text the spool can search, only the spool's matches (and the entries not in the spool)."""
    assert q.limit
    bulk = [bulk_patterns([p.pattern]) if p is not None else None for p in plan]
    every = {r for r, (p, b) in enumerate(zip(plan, bulk)) if p is not None and b is None}
    loose = {r for r, b in enumerate(bulk) if b is not None}
    if len(files) == 1:
        with open(files[0], "rb") as fh:
            entries = _settled(index[files[0]], fh, q, plan, every, loose, bulk)
        yield from ((q, e) for e in entries)
        return
    cands: list = []  # (file number, entry number) or, with one file, the entry number
    for f, path in enumerate(files):
        idx = index[path]
        picked = idx.entries(every, loose)
        for pattern in {b[0] for b in bulk if b is not None}:
            picked += idx.searched(pattern, {r for r in loose if cast(tuple, bulk[r])[0] == pattern})
        picked.sort(reverse=True)  # later first among equal times, after the stable sort
        cands += picked if len(files) == 1 else zip(repeat(f), picked)
    if len(files) == 1:
        cands.sort(key=index[files[0]].ts.__getitem__, reverse=q.order == "desc")
        cands = list(zip(repeat(0), cands))
    else:  # later files first among equal times, too
        stamps = [index[path].ts for path in files]
        cands.sort(reverse=True)
        cands.sort(key=lambda c: stamps[c[0]][c[1]], reverse=q.order == "desc")
    handles = [open(path, "rb") for path in files]
    try:
        n = 0
        for f, o in cands:
            idx = index[files[f]]
            entry = _test_one(plan[idx.route[o]], idx, o, handles[f])
            if entry is not None:
                yield q, entry
                n += 1
                if n == q.limit:
                    return
    finally:
        for fh in handles:
            fh.close()

CHUNK = 1 << 16  # spool lines searched at a time by a capped query


def _settled(idx: FileIndex, fh, q: LogQuery, plan: list, every: set[int], loose: set[int], bulk: list
             ) -> list[dict]:
    """capped() on one file, searching the spool a chunk of lines at a time, the chunk with the newest line first for
    desc (the oldest for asc): after each chunk, the candidates strictly beyond every unsearched line's time are
    settled (nothing unsearched can come before them), and once q.limit of them hold, the rest is never searched."""
    desc, ts, route, limit = q.order == "desc", idx.ts, idx.route, cast(int, q.limit)
    patterns: dict[str, set[int]] = {}
    for r in loose:
        patterns.setdefault(cast(tuple, bulk[r])[0], set()).add(r)
    lines = idx.spool.ordinals
    chunks = [(lo, min(lo + CHUNK, len(lines))) for lo in range(0, len(lines), CHUNK)] if patterns else []
    pick = max if desc else min
    bounds = [pick(map(ts.__getitem__, lines[lo:hi])) for lo, hi in chunks]
    # the chunk holding the newest (oldest) line first, whatever order the file is in
    ranked = sorted(range(len(chunks)), key=bounds.__getitem__, reverse=desc)
    chunks, bounds = [chunks[i] for i in ranked], [bounds[i] for i in ranked]
    beyond: list[int | None] = [None] * len(chunks)  # the extreme time of the chunks after each
    for i in range(len(chunks) - 2, -1, -1):
        nxt = beyond[i + 1]
        beyond[i] = bounds[i + 1] if nxt is None else pick(nxt, bounds[i + 1])
    pool = set(idx.entries(every, loose))
    tested: dict[int, dict | None] = {}
    for i in range(max(1, len(chunks))):
        if chunks:
            lo, hi = chunks[i]
            for pattern, rids in patterns.items():
                pool.update(o for o in idx.spool.candidates(pattern, lines=(lo, hi)) if route[o] in rids)
        edge = beyond[i] if chunks else None
        order = sorted(pool, reverse=True)  # later first among equal times, after the stable sort
        order.sort(key=ts.__getitem__, reverse=desc)
        kept: list[dict] = []
        for o in order:
            if edge is not None and (ts[o] <= edge if desc else ts[o] >= edge):
                break  # not settled: an unsearched line may come first
            if o not in tested:
                tested[o] = _test_one(plan[route[o]], idx, o, fh)
            if (entry := tested[o]) is not None:
                kept.append(entry)
                if len(kept) == limit:
                    return kept
        if edge is None:
            return kept
    return []


def _test_one(p, idx: FileIndex, o: int, fh) -> dict | None:
    """Entry o if its query holds on it (p: the query's plan on o's route; decided as _planned and _read decide
    it), else None. An entry of the spool is a candidate only where the spool's search found its pattern."""
    ts = idx.ts[o]
    fh.seek(idx.start[o])
    raw = fh.read(idx.end[o] - idx.start[o])
    if not idx.utc[o]:
        test = p.full
    elif not p.lo <= ts <= p.hi:
        return None
    elif not idx.inspool[o] or p.text is None:
        test = p.rest
    elif p.text is False:
        return None
    elif p.text is True or p.text(cast(bytes, verbatim_text(raw))):
        return load_entry(raw)
    else:
        return None
    if test is True:
        return load_entry(raw)
    entry = load_entry(raw)
    return entry if test(entry) else None
