"""The replay source: an exported incident folder, evaluated with the same filters the live source sends."""

from __future__ import annotations

import heapq
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import cast
from itertools import chain, compress, count, islice, repeat
from operator import add, and_, not_, or_
from pathlib import Path

from ...errors import InputError
import msgspec
import orjson

from ..objects import usable_objects
from ..evaluate import compile_filter
from .inventory import Inventory, is_k8s_object, is_log_entry, tally
from .heads import UNSET, ascii_or_utf8, decode_head, get_ts, route_keys, spooled, usual, utc_times, verbatim_text
from .index import FileIndex, LineCounter
from .plan import compile_route_filter, route_plan, text_gate
from .spool import bulk_patterns
from ..records import parse_ts, parse_utc
from .base import LogQuery, SourceStats
from .files import FileReport, NotFast, SpanReader, iter_blocks, iter_documents, iter_spans, list_files

MAX_PROBLEMS_PER_FILE = 5
SAMPLE = 16  # values read to decide whether a file holds log entries or Kubernetes objects
LIST_ITEM_KIND = {"PodList": "Pod", "EventList": "Event", "NodeList": "Node", "JobSetList": "JobSet", "JobList": "Job"}


class ReplaySource:
    """An export folder: gcloud LogEntry arrays or JSON Lines, and kubectl JSON, recognised by content."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        if not self.folder.exists():
            raise InputError(f"{self.folder}: no such folder")
        if not self.folder.is_dir():
            raise InputError(f"{self.folder}: not a folder (pass the folder that holds the exported files)")
        self.files = list_files(self.folder)
        if not self.files:
            raise InputError(f"{self.folder}: no *.json, *.jsonl or *.ndjson files to read")
        self.stats = SourceStats(files=len(self.files))
        self._objects: list[dict] = []  # every object with a metadata.uid, as loaded
        self._checked: list[dict] | None = None
        self._log_files: list[Path] = []
        self._reported: set[Path] = set()
        self._counted: set[Path] = set()
        self._indexed = False
        self._index: dict[Path, FileIndex] = {}
        self._skeletons: list[dict] = []
        self._routes = Routes(self._skeletons)
        self._scan()

    def _scan(self) -> None:
        """Sort files into log exports and object exports; load the (small) object files whole.

        A file's kind is what most of its first SAMPLE values are, so a stray value at the start does not decide
        it; the values of the other kind are reported skipped by whichever reader takes the file.
        """
        for path in self.files:
            report = FileReport(path)
            docs = iter_documents(path, report)
            head = list(islice(docs, SAMPLE))
            if sum(map(is_log_entry, head)) > sum(map(is_k8s_object, head)):
                self._log_files.append(path)
                docs.close()
                continue
            for doc in chain(head, docs):
                self._take_object(doc, path, report)
            self._finish(report)

    def _take_object(self, doc: object, path: Path, report: FileReport) -> None:
        if is_k8s_object(doc):
            kind = doc["kind"]
            if kind.endswith("List") and isinstance(doc.get("items"), list):
                item_kind = LIST_ITEM_KIND.get(kind)
                for item in doc["items"]:
                    if isinstance(item, dict) and item_kind and "kind" not in item:
                        item = {**item, "kind": item_kind, "apiVersion": doc.get("apiVersion", "v1")}
                    self._take_object(item, path, report)
                return
            if isinstance(doc.get("metadata"), dict) and doc["metadata"].get("uid"):
                self._objects.append(doc)
                return
            self._problem(report, f"{path.name}: {kind} without metadata.uid; skipped it")
        elif is_log_entry(doc):
            self._problem(report, f"{path.name}: a log entry inside a file of Kubernetes objects; skipped it")
        else:
            self._problem(report, f"{path.name}: neither a LogEntry export nor Kubernetes objects; skipped it")

    def _problem(self, report: FileReport, text: str) -> None:
        report.skipped += 1
        report.problems.append(text)

    def _finish(self, report: FileReport) -> None:
        """Copy a file's problems into the stats once, however many passes read it."""
        if report.path in self._reported:
            return
        self._reported.add(report.path)
        self.stats.entries_skipped += report.skipped
        problems = report.problems
        for text in problems[:MAX_PROBLEMS_PER_FILE]:
            self.stats.gap(text)
        if len(problems) > MAX_PROBLEMS_PER_FILE:
            self.stats.gap(f"{report.path.name}: {len(problems) - MAX_PROBLEMS_PER_FILE} more problems like these")
        if report.replaced_bytes:
            self.stats.gap(f"{report.path.name}: bytes that are not UTF-8 were replaced with U+FFFD")

    def objects(self) -> list[dict]:
        """The Kubernetes objects in the shape the engine reads; the others are counted skipped and named in the
        gaps, once."""
        if self._checked is None:
            self._checked = usable_objects(self._objects, self.stats)
        return self._checked

    def loaded_objects(self) -> list[dict]:
        """Every object with a metadata.uid as loaded, before the shape check (what list_events has always read)."""
        return self._objects

    def iter_entries(self) -> Iterator[dict]:
        """Every usable LogEntry of every log file, streamed; problems and counts are taken once."""
        for _ts, entry in self.iter_timed():
            yield entry

    def iter_timed(self) -> Iterator[tuple[int, dict]]:
        """(timestamp ns, LogEntry) for every usable entry, in file order; the time is parsed once."""
        self._ensure_index()
        for path in self._log_files:
            yield from self._file_timed(path)

    def _file_timed(self, path: Path) -> Iterator[tuple[int, dict]]:
        """(timestamp ns, LogEntry) for every usable entry of one log file, in file order."""
        idx = self._index.get(path)
        if idx is None:
            yield from self._slow_timed(path)
            return
        reader = SpanReader(path)
        try:
            for ts, a, b in zip(idx.ts, idx.start, idx.end):
                yield ts, orjson.loads(reader.get(a, b))
        finally:
            reader.close()

    def _slow_timed(self, path: Path) -> Iterator[tuple[int, dict]]:
        """The reference reader: every document through iter_documents, every problem reported with its place."""
        report = FileReport(path)
        first_pass = path not in self._counted
        for doc in iter_documents(path, report):
            ts = self._usable(doc, path, report)
            if not ts:
                continue
            if first_pass:
                self._count(ts)
            yield ts, cast(dict, doc)  # a usable entry (a timestamp) is a LogEntry
        self._counted.add(path)
        self._finish(report)

    def _usable(self, doc: object, path: Path, report: FileReport, lines: LineCounter | None = None,
                offset: int = 0) -> int:
        """The entry's timestamp in ns, or 0 after reporting why it can't be used (and where: `lines` counts them)."""
        if not is_log_entry(doc):
            where = lines.where(offset) if lines else report.where()
            what = "a Kubernetes object" if is_k8s_object(doc) else _json_type(doc)
            self._problem(report, f"{where}: {what}, not a LogEntry; skipped it")
            return 0
        if not isinstance(doc.get("insertId"), str) or not doc["insertId"]:
            where = lines.where(offset) if lines else report.where()
            self._problem(report, f"{where}: a LogEntry without insertId; skipped it")
            return 0
        ts = parse_ts(doc.get("timestamp")) or parse_ts(doc.get("receiveTimestamp"))
        if not ts:
            self._problem(report, f"{path.name}: entry {doc['insertId']} has no usable timestamp; skipped it")
        return ts

    def _count(self, ts: int) -> None:
        self.stats.entries_read += 1
        if ts > self.stats.last_ts:
            self.stats.last_ts = ts
        if not self.stats.first_ts or ts < self.stats.first_ts:
            self.stats.first_ts = ts

    # -- the index: one parse of every entry, then only entries whose routing fields can match are parsed again --

    def _ensure_index(self) -> None:
        if self._indexed:
            return
        self._indexed = True
        for path in self._log_files:
            self._index_file(path)

    def _index_file(self, path: Path) -> None:
        """Index one log file (or read it with the reference reader), counting its entries and problems once."""
        idx = self._build_index(path)
        if idx is None:  # the reference reader takes the file (and reports its problems) instead
            for _ in self._slow_timed(path):
                pass
            return
        self._index[path] = idx
        for ts in (idx.first_ts, idx.last_ts):
            if ts:
                self.stats.last_ts = max(self.stats.last_ts, ts)
                self.stats.first_ts = min(self.stats.first_ts, ts) if self.stats.first_ts else ts
        self.stats.entries_read += len(idx.ts)
        self._counted.add(path)
        self._finish(idx.report)

    def _build_index(self, path: Path) -> FileIndex | None:
        """The file's index: a gcloud array block by block (routing fields typed, no dict per entry), JSON Lines line
        by line; None when the reference reader must take the file (a value orjson rejects, another layout)."""
        report = FileReport(path)
        idx = FileIndex(report)
        try:
            if path.suffix.lower() in (".jsonl", ".ndjson"):
                lines = LineCounter(path)
                for a, b, doc, raw in iter_spans(path):
                    self._take_doc(idx, a, b, doc, raw, path, report, lines)
            else:
                for base, block, starts, ends in iter_blocks(path):
                    self._take_block(idx, base, block, starts, ends, path, report)
        except NotFast:
            idx.spool.close()
            return None
        idx.finish()
        return idx

    def _take_block(self, idx: FileIndex, base: int, block: bytes, starts: list[int], ends: list[int], path: Path,
                    report: FileReport) -> None:
        """Index a block of whole elements at once; a block with anything unusual goes element by element."""
        view = memoryview(block)
        pieces = list(map(view.__getitem__, map(slice, starts, ends)))
        try:
            heads = list(map(decode_head, pieces))
        except msgspec.DecodeError:
            heads = None
        times = (utc_times(list(map(get_ts, heads))) if heads is not None and usual(heads) and ascii_or_utf8(block)
                 else None)
        if times is None:
            loads = orjson.loads
            for a, b, piece in zip(starts, ends, pieces):
                raw = bytes(piece)
                try:
                    doc = loads(raw)
                except orjson.JSONDecodeError:
                    raise NotFast("element") from None
                if type(doc) is not dict:
                    raise NotFast("element")
                self._take_doc(idx, base + a, base + b, doc, raw, path, report, None)
            return
        heads = cast(list, heads)
        n = len(idx.ts)
        idx.ts.extend(times)
        idx.start.extend(map(add, starts, repeat(base)))
        idx.end.extend(map(add, ends, repeat(base)))
        idx.route.extend(map(self._routes.__getitem__, route_keys(heads)))
        idx.utc.extend(repeat(1, len(heads)))
        spool = idx.inspool
        spool.extend(repeat(0, len(heads)))
        at, texts = spooled(heads)
        ordinals = list(map(add, at, repeat(n)))
        for o in ordinals:
            spool[o] = 1
        idx.add_texts(ordinals, texts)

    def _take_doc(self, idx: FileIndex, a: int, b: int, doc: object, raw: bytes, path: Path, report: FileReport,
                  lines: LineCounter | None) -> None:
        """Index one element decoded whole (JSON Lines, or an element the typed decoder does not vouch for)."""
        if type(doc) is not dict:  # a JSON Lines value that is not an object (null, 42, [1])
            self._usable(doc, path, report, lines, a)
            return
        t, iid = doc.get("timestamp"), doc.get("insertId")
        # the usual entry decided inline; anything else goes through _usable, which says what is wrong
        usual_ = type(iid) is str and iid and "kind" not in doc
        ts = parse_utc(t) if usual_ and type(t) is str else 0
        utc = ts != 0
        if not utc and not (ts := parse_ts(t) if usual_ else 0):
            if not (ts := self._usable(doc, path, report, lines, a)):
                return
        skel = {k: doc[k] for k in ROUTE_FIELDS if k in doc}
        key = ("doc", orjson.dumps(skel))
        rid = self._routes.get(key)
        if rid is None:
            rid = self._routes[key] = len(self._skeletons)
            self._skeletons.append(skel)
        text = (verbatim_text(raw) if utc and type(doc.get("textPayload")) is str and "jsonPayload" not in doc
                and "protoPayload" not in doc else None)
        if text is not None:
            idx.add_text(len(idx.ts), text)
        idx.ts.append(ts)
        idx.start.append(a)
        idx.end.append(b)
        idx.route.append(rid)
        idx.utc.append(utc)
        idx.inspool.append(text is not None)

    def inventory(self) -> Inventory:
        """The workload's names and the span of the data, from the routing fields of every entry."""
        self._ensure_index()
        inv = Inventory(Counter(), Counter(), Counter(), Counter(), Counter())
        for path in self._log_files:
            idx = self._index.get(path)
            if idx is None:
                for _ts, entry in self._slow_timed(path):
                    tally(inv, entry, 1)
                continue
            for rid, n in idx.route_counts().items():
                tally(inv, self._skeletons[rid], n)
        return inv

    def read(self, queries: Sequence[LogQuery]) -> Iterator[tuple[LogQuery, dict]]:
        """One pass over the logs evaluating every query; capped queries keep the first/last N by time.

        Each query is evaluated exactly on every entry that could match it; an entry is only skipped when its
        routing fields (logName, resource, labels, severity) already make the filter false (query.may_match).
        """
        self._ensure_index()
        possible = [compile_route_filter(q.filter, ROUTE_FIELDS) for q in queries]
        plans = [self._plan(skel, queries, possible) for skel in self._skeletons]
        capped = [i for i, q in enumerate(queries) if q.limit]
        if capped and all(path in self._index for path in self._log_files):
            # every file indexed: a capped query is answered apart, its candidates tested newest (or oldest) first
            # until it has its N, so the launch reports and the kubelet chatter are not all visited
            rest = [tuple((i, p) for i, p in plan if not queries[i].limit) for plan in plans]
            yield from self._read(queries, rest)
            for i in capped:
                yield from self._capped(queries[i], [next((p for j, p in plan if j == i), None) for plan in plans])
            return
        yield from self._read(queries, plans)

    def _read(self, queries: Sequence[LogQuery], plans: list) -> Iterator[tuple[LogQuery, dict]]:
        """One pass over the logs evaluating every query of `plans` (per route: the queries it may match)."""
        preds = [(q, compile_filter(q.filter)) for q in queries]
        gates = [text_gate([p for _i, p in plan]) for plan in plans]
        bulk = [bulk_patterns([p.pattern for _i, p in plan]) if plan else None for plan in plans]
        heaps: dict[int, list] = {i: [] for i, (q, _) in enumerate(preds) if q.limit}
        seq = 0
        exact = tuple((i, p) for i, (_q, p) in enumerate(preds))
        loads = load_entry
        for path in self._log_files:
            idx = self._index.get(path)
            if idx is None:
                timed: Iterator = ((ts, e, exact) for ts, e in self._slow_timed(path))
            else:
                timed = self._planned(path, idx, plans, gates, bulk)
            for ts, got, plan in timed:
                # the fast reader gives the entry's bytes: parsed only when a test or an uncapped match needs it,
                # so a line only a capped query wants (the periodic launch reports) is parsed only if it is kept
                entry = got if type(got) is dict else None
                for i, pred in plan:
                    if pred is not True:
                        if entry is None:
                            entry = loads(got)
                        if not pred(entry):
                            continue
                    q = preds[i][0]
                    if q.limit is None:
                        if entry is None:
                            entry = loads(got)
                        yield q, entry
                        continue
                    key = ts if q.order == "desc" else -ts
                    seq += 1
                    item = (key, seq, got if entry is None else entry)
                    heap = heaps[i]
                    if len(heap) < q.limit:
                        heapq.heappush(heap, item)
                    elif item > heap[0]:
                        heapq.heapreplace(heap, item)
        for i, heap in heaps.items():
            q = preds[i][0]
            for _, _, kept in sorted(heap, reverse=True):
                yield q, kept if type(kept) is dict else loads(kept)

    def _capped(self, q: LogQuery, plan: list) -> Iterator[tuple[LogQuery, dict]]:
        """The first q.limit entries of q in its order (ties: the later in the files first, as the heap of _read
        keeps them), testing candidates in that order and stopping at the limit. plan[route]: q's TimedResidual
        there, or None. A candidate is every entry of a route q may match, but of a route where q's test is a regex
        on the text the spool can search, only the spool's matches (and the entries not in the spool)."""
        assert q.limit
        bulk = [bulk_patterns([p.pattern]) if p is not None else None for p in plan]
        cands: list[tuple[int, int]] = []  # (file number, entry number), in reading order
        found: dict[int, dict[str, set[int]]] = {}
        for f, path in enumerate(self._log_files):
            idx = self._index[path]
            every = bytes(1 if p is not None and b is None else 0 for p, b in zip(plan, bulk))
            loose = bytes(1 if b is not None else 0 for b in bulk)
            picked = set(compress(count(), map(or_, map(every.__getitem__, idx.route),
                                               map(and_, map(loose.__getitem__, idx.route), map(not_, idx.inspool)))))
            seen = found[f] = {}
            for pattern in {b[0] for b in bulk if b is not None}:
                rids = {r for r, b in enumerate(bulk) if b is not None and b[0] == pattern}
                route = idx.route
                seen[pattern] = {o for o in idx.spool.candidates(pattern) if route[o] in rids}
                picked.update(seen[pattern])
            cands += zip(repeat(f), sorted(picked))
        stamps = [self._index[path].ts for path in self._log_files]
        cands.reverse()  # later first among equal times, after the stable sort
        cands.sort(key=lambda c: stamps[c[0]][c[1]], reverse=q.order == "desc")
        files = [open(path, "rb") for path in self._log_files]
        try:
            n = 0
            for f, o in cands:
                idx = self._index[self._log_files[f]]
                entry = self._test_one(plan[idx.route[o]], idx, o, files[f], bulk[idx.route[o]] is not None, found[f])
                if entry is not None:
                    yield q, entry
                    n += 1
                    if n == q.limit:
                        return
        finally:
            for fh in files:
                fh.close()

    @staticmethod
    def _test_one(p, idx: FileIndex, o: int, fh, searched: bool, found: dict) -> dict | None:
        """Entry o if its query holds on it (p: the query's plan on o's route; decided as _planned and _read decide
        it), else None."""
        ts = idx.ts[o]
        fh.seek(idx.start[o])
        raw = fh.read(idx.end[o] - idx.start[o])
        if not idx.utc[o]:
            test = p.full
        elif not p.lo <= ts <= p.hi:
            return None
        elif not idx.inspool[o] or p.text is None:
            test = p.rest
        elif p.text is False or (searched and o not in found[p.pattern]):
            return None
        elif p.text is True or p.text(cast(bytes, verbatim_text(raw))):
            return load_entry(raw)
        else:
            return None
        if test is True:
            return load_entry(raw)
        entry = load_entry(raw)
        return entry if test(entry) else None


    @staticmethod
    def _plan(skel: dict, queries: Sequence[LogQuery], possible: list) -> tuple:
        """(query index, TimedResidual) for the queries an entry of this route can match."""
        out = []
        for i, q in enumerate(queries):
            if possible[i](skel) and (plan := route_plan(q.filter, skel, ROUTE_FIELDS)) is not None:
                out.append((i, plan))
        return tuple(out)

    def _planned(self, path: Path, idx: FileIndex, plans: list, gates: list, bulk: list
                 ) -> Iterator[tuple[int, bytes, list]]:
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


ROUTE_FIELDS = ("logName", "resource", "labels", "severity")  # what routes an entry; few distinct values


def _json_type(value: object) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")
