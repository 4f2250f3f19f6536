"""Replay's typed index pass (skill/reading/sources/heads.py) and capped reads: same answers as the exact paths."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pathways_workload.skill.reading.sources import passes
from pathways_workload.skill.reading.sources.base import LogQuery
from pathways_workload.skill.reading.sources.heads import ascii_or_utf8, decode_head, verbatim_text
from pathways_workload.skill.reading.sources.replay import ROUTE_FIELDS, ReplaySource
from pathways_workload.skill.reading.sources.plan import compile_route_filter

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


@pytest.mark.parametrize("chunk", [7, 1 << 16])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_capped_reads_equal_the_heap_reader(case, chunk, monkeypatch):
    """Capped queries answered apart (the spool searched a chunk at a time, stopping once N are settled) give what the
    one-pass reader's heaps give, in the same order."""
    monkeypatch.setattr(passes, "CHUNK", chunk)
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


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pathways_workload.skill.reading.records import parse_utc  # noqa: E402
from pathways_workload.skill.reading.sources.heads import utc_times  # noqa: E402
from pathways_workload.skill.reading.sources.spool import TextSpool  # noqa: E402

_STAMP = st.builds(lambda d, frac, z, sep: f"20{d:0>2}-0{d % 9 + 1}-{d % 28 + 1:02d}{sep}1{d % 10}:0{d % 6}:{d % 61:02d}"
                   + frac + z, st.integers(0, 99), st.one_of(st.just(""), st.from_regex(r"\.[0-9²_ ]{0,11}", fullmatch=True)),
                   st.sampled_from(["Z", "z", "", "+00:00"]), st.sampled_from(["T", " ", "t"]))


@settings(max_examples=400, deadline=None)
@given(st.lists(_STAMP, min_size=1, max_size=5))
def test_utc_times_equal_parse_utc(stamps):
    """The block's timestamps at once: parse_utc's values, or None when parse_utc refuses one of them."""
    want = [parse_utc(s) for s in stamps]
    got = utc_times(stamps)
    assert got == (want if all(want) else None)


_LITERAL = st.one_of(st.text(max_size=12).map(lambda t: json.dumps(t, ensure_ascii=False)),
                     st.text(max_size=8).map(json.dumps), st.integers().map(str), st.just('{"a": "b"}'),
                     st.just('["x", "y"]'), st.just("null"))


@settings(max_examples=400, deadline=None)
@given(st.lists(_LITERAL, max_size=6))
def test_extend_quoted_equals_extend(literals):
    """Texts handed over as JSON literals: spooled as extend would spool them, or refused when one is not a string
    without escapes."""
    quoted = [lit.encode() for lit in literals]
    plain = all(q[:1] == b'"' and b"\\" not in q for q in quoted)
    a, b = TextSpool(), TextSpool()
    ok = a.extend_quoted(list(range(len(quoted))), quoted)
    assert ok == plain
    if ok:
        b.extend(list(range(len(quoted))), [q[1:-1] for q in quoted])
        a.f.seek(0)
        b.f.seek(0)
        assert (a.f.read(), list(a.offsets), a.size) == (b.f.read(), list(b.offsets), b.size)


@pytest.mark.parametrize("block", [64, 1000])
def test_small_blocks_index_the_same(block, monkeypatch):
    """Blocks smaller than an element (read again, twice as long) or holding a few: the same index as one block."""
    from pathways_workload.skill.reading.sources import heads

    case = CASES[0]
    whole = ReplaySource(case)
    whole.inventory()
    monkeypatch.setattr(heads, "BLOCK", block)
    small = ReplaySource(case)
    small.inventory()
    for path, idx in whole._index.items():
        other = small._index[path]
        assert (idx.ts, idx.start, idx.end, idx.inspool) == (other.ts, other.start, other.end, other.inspool)
    assert whole._skeletons == small._skeletons
    qs = [LogQuery("a", 'textPayload=~"step"', "desc", 3), LogQuery("b", "severity>=ERROR")]
    assert [e["insertId"] for _q, e in whole.read(qs)] == [e["insertId"] for _q, e in small.read(qs)]
