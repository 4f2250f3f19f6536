"""The replay source: an exported incident folder, evaluated with the same filters the live source sends."""

from __future__ import annotations

import heapq
from array import array
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import cast
from itertools import chain, islice
from pathlib import Path

from ...errors import InputError
import orjson

from ..objects import usable_objects
from ..evaluate import compile_filter
from .inventory import Inventory, is_k8s_object, is_log_entry, tally
from .index import FileIndex, LineCounter, text_at as _text_at
from .plan import compile_route_filter, route_plan, text_gate
from .spool import bulk_patterns
from ..records import parse_ts, parse_utc
from .base import LogQuery, SourceStats
from .files import FileReport, NotFast, SpanReader, iter_documents, iter_spans, list_files

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
        self._routes: dict[bytes, int] = {}
        self._skeletons: list[dict] = []
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
        report = FileReport(path)
        idx = FileIndex(report)
        routes, skeletons = self._routes, self._skeletons
        dumps = orjson.dumps
        lines = LineCounter(path) if path.suffix.lower() in (".jsonl", ".ndjson") else None
        add_ts, add_start, add_end, add_route, add_utc, add_text = (
            idx.ts.append, idx.start.append, idx.end.append, idx.route.append, idx.utc.append, idx.text.append)
        by_route, spool_n, spool_t = idx.by_route, [], []
        try:
            for a, b, doc, raw in iter_spans(path):
                if type(doc) is not dict:  # a JSON Lines value that is not an object (null, 42, [1])
                    self._usable(doc, path, report, lines, a)
                    continue
                t, iid = doc.get("timestamp"), doc.get("insertId")
                # the usual entry decided inline; anything else goes through _usable, which says what is wrong
                usual = type(iid) is str and iid and "kind" not in doc
                ts = parse_utc(t) if usual and type(t) is str else 0
                utc = ts != 0
                if not utc and not (ts := parse_ts(t) if usual else 0):
                    if not (ts := self._usable(doc, path, report, lines, a)):
                        continue
                skel = {k: doc[k] for k in ROUTE_FIELDS if k in doc}
                key = dumps(skel)
                rid = routes.get(key)
                if rid is None:
                    rid = routes[key] = len(skeletons)
                    skeletons.append(skel)
                n = len(idx.ts)
                add_ts(ts)
                add_start(a)
                add_end(b)
                add_route(rid)
                add_utc(utc)
                add_text(t := _text_at(doc, raw))
                if (ords := by_route.get(rid)) is None:
                    ords = by_route[rid] = (array("q"), array("q"))
                ords[0].append(n)
                if utc and t >= 0:
                    spool_n.append(n)
                    spool_t.append(raw[t >> 32:t & 0xFFFFFFFF])
                    if len(spool_n) == SPOOL_BATCH:
                        idx.spool.extend(spool_n, spool_t)
                        spool_n, spool_t = [], []
                else:
                    ords[1].append(n)
        except NotFast:
            idx.spool.close()
            return None
        idx.spool.extend(spool_n, spool_t)
        idx.finish()
        return idx

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
        preds = [(q, compile_filter(q.filter)) for q in queries]
        possible = [compile_route_filter(q.filter, ROUTE_FIELDS) for q in queries]
        plans = [self._plan(skel, queries, possible) for skel in self._skeletons]
        gates = [text_gate([p for _i, p in plan]) for plan in plans]
        bulk = [bulk_patterns([p.pattern for _i, p in plan]) if plan else None for plan in plans]
        heaps: dict[int, list] = {i: [] for i, (q, _) in enumerate(preds) if q.limit}
        seq = 0
        exact = tuple((i, p) for i, (_q, p) in enumerate(preds))
        loads = orjson.loads
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
        ts_, start, end, route, utc_, text_ = idx.ts, idx.start, idx.end, idx.route, idx.utc, idx.text
        visits, found = idx.visits(plans, bulk)
        try:
            for o in visits:
                ts, a, b, r, t = ts_[o], start[o], end[o], route[o], text_[o]
                plan = plans[r]
                if not utc_[o]:
                    yield ts, reader.get(a, b), [(i, p.full) for i, p in plan]
                    continue
                if t < 0:
                    todo = [(i, p.rest) for i, p in plan if p.lo <= ts <= p.hi]
                    if todo:
                        yield ts, reader.get(a, b), todo
                    continue
                (buf, at), text, todo = reader.view(a, b), None, []
                searched = bulk[r] is not None  # then o is in found[p.pattern] wherever p's test may hold
                if not searched and (gate := gates[r]) is not None:
                    text = buf[at + (t >> 32):at + (t & 0xFFFFFFFF)]
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
                            text = buf[at + (t >> 32):at + (t & 0xFFFFFFFF)]
                        if test(text):
                            todo.append((i, True))
                if todo:
                    yield ts, buf[at:at + b - a], todo
        finally:
            reader.close()


SPOOL_BATCH = 1 << 16  # verbatim texts handed to the spool at a time
ROUTE_FIELDS = ("logName", "resource", "labels", "severity")  # what routes an entry; few distinct values


def _json_type(value: object) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")
