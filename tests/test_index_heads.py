"""Replay's typed index pass (skill/reading/sources/heads.py) and capped reads: same answers as the exact paths."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skill.reading.sources.base import LogQuery
from skill.reading.sources.heads import ascii_or_utf8, decode_head, verbatim_text
from skill.reading.sources.replay import ROUTE_FIELDS, ReplaySource
from skill.reading.sources.plan import compile_route_filter

ROOT = Path(__file__).resolve().parent.parent
CASES = [ROOT / "fixtures" / n for n in ("case-001", "case-004", "case-087", "case-009")]
FILTERS = ['resource.type="k8s_container"', 'textPayload=~"step"', "severity>=ERROR", 'log_id("events")',
           'resource.labels.container_name="pathways-worker" textPayload=~"(?i)completed|error"',
           'resource.type="k8s_node"', 'textPayload:"a"']


def _heap_read(src: ReplaySource, queries: list[LogQuery]) -> list[tuple[str, str]]:
    """The one-pass reader with every query in it (capped ones kept in heaps): the reference for capped reads."""
    possible = [compile_route_filter(q.filter, ROUTE_FIELDS) for q in queries]
    plans = [src._plan(skel, queries, possible) for skel in src._skeletons]
    return [(q.name, e["insertId"]) for q, e in src._read(queries, plans)]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_capped_reads_equal_the_heap_reader(case):
    src = ReplaySource(case)
    src.inventory()
    queries = [LogQuery(f"{i}-{order}-{limit}", f, order, limit)
               for i, f in enumerate(FILTERS) for order in ("asc", "desc") for limit in (1, 3, 50, None)]
    got = sorted((q.name, e["insertId"]) for q, e in src.read(queries))
    want = sorted(_heap_read(src, queries))
    assert got == want
    # and each capped query's entries in the same order
    for q in queries:
        if q.limit:
            mine = [e["insertId"] for qq, e in src.read([q])]
            ref = [i for n, i in _heap_read(src, [q])]
            assert mine == ref, q


def _export(tmp: Path, entries: list[dict]) -> Path:
    base = ROOT / "fixtures" / "case-001"
    for p in base.glob("*.json"):
        if p.name != "logs.json":
            shutil.copy(p, tmp / p.name)
    logs = json.loads((base / "logs.json").read_text())
    (tmp / "logs.json").write_text(json.dumps(logs + entries, indent=2))
    return tmp


def test_a_number_beyond_a_double_is_read_as_the_reference_reader_reads_it(tmp_path):
    """orjson refuses 1e400 where the typed decoder skips it: the entry is decoded by the standard library."""
    logs = json.loads((ROOT / "fixtures" / "case-001" / "logs.json").read_text())
    huge = dict(logs[-1], insertId="huge-number", jsonPayload={"message": "x", "n": 1})
    huge.pop("textPayload", None)
    folder = _export(tmp_path, [huge])
    text = (folder / "logs.json").read_text().replace('"n": 1', '"n": 1e400')
    (folder / "logs.json").write_text(text)
    src = ReplaySource(folder)
    got = [e for _q, e in src.read([LogQuery("q", 'insertId="huge-number"')])]
    assert src._index and got and got[0]["jsonPayload"]["n"] == float("inf")


def test_route_fields_decoded_as_orjson_decodes_them(tmp_path):
    """Route skeletons come from the raw bytes of resource and labels, decoded by orjson (a huge integer as orjson
    makes it, a float), so a filter on them answers as before."""
    logs = json.loads((ROOT / "fixtures" / "case-001" / "logs.json").read_text())
    odd = dict(logs[-1], insertId="big-label")
    odd["labels"] = {**(odd.get("labels") or {}), "n": 123456789012345678901234567890}
    folder = _export(tmp_path, [odd])
    src = ReplaySource(folder)
    got = [e for _q, e in src.read([LogQuery("q", 'insertId="big-label"')])]
    assert got and isinstance(got[0]["labels"]["n"], float)
    assert any(isinstance((s.get("labels") or {}).get("n"), float) for s in src._skeletons)


def test_heads_helpers():
    assert verbatim_text(b'{"insertId": "a", "textPayload": "plain text"}') == b"plain text"
    assert verbatim_text(b'{"textPayload": "with \\"escape\\""}') is None
    assert verbatim_text(b'{"jsonPayload": {}}') is None
    assert ascii_or_utf8(b"abc") and ascii_or_utf8("é".encode()) and not ascii_or_utf8(b"\xff")
    h = decode_head(b'{"insertId": "a", "insertId": "b", "timestamp": "t"}')
    assert h.insertId == "b"  # the last of a repeated key, as orjson
