"""Replay's shortcuts (a textPayload tested on its bytes in the file, timestamps read by their UTC spelling) give
the answers of the plain filter on every entry: escapes, case folding and other payloads included."""

from __future__ import annotations

import itertools
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pathways_workload.skill.reading.query import quote
from pathways_workload.skill.reading.evaluate import compile_filter, utc_spelled
from pathways_workload.skill.reading.records import parse_ts, parse_utc
from pathways_workload.skill.reading.sources.base import LogQuery
from pathways_workload.skill.reading.sources.replay import ReplaySource

FOLDERS = itertools.count()
QUICK = dict(derandomize=True, database=None, deadline=None,
             suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

# characters JSON escapes or may escape (quote, backslash, controls, U+2028), case-folding traps (ſ folds to s,
# K to k) and the letters of the patterns below, so escapes land inside and between the literals
TRICKY = 'stepSTEPkKſK "\\/\n\t\x01\u2028é€😀0123456789:=#'
texts = st.text(alphabet=TRICKY, max_size=24) | st.sampled_from(
    ["step 12", "STEP: 3", "ſtep 4", "a \"step\" 5", "Completed 12 program launches", "OOMKilled",
     'say "OOM\\Killed"', "kernel: step\u2028 7"])
PATTERNS = [r"(?i)\bstep\b[\s:=#]*\d+", r"Completed [0-9]+ program launches", r"(?i)kk", r'"', r"\\", r"\n",
            r"é|😀", r"^$", r"OOM\\?Killed", r"(?i)ſ"]
FILTERS = ([f"textPayload=~{quote(p)} OR jsonPayload.message=~{quote(p)}" for p in PATTERNS]
           + [f"NOT textPayload=~{quote(p)}" for p in PATTERNS[:3]]
           + ['textPayload:"step"', 'textPayload="STEP: 3"', 'textPayload:*', 'NOT jsonPayload:*',
              'textPayload=~"step" insertId:"1"', 'textPayload=~"(?i)STEP" severity>=WARNING',
              'timestamp>="2026-11-20T10:00:30Z" textPayload=~"\\\\d"'])
stamps = st.sampled_from(["2026-11-20T10:00:00Z", "2026-11-20T10:00:31.5Z", "2026-11-20T10:00:30Z",
                          "2026-11-20T11:00:30+01:00", "2026-11-20T10:01:00.123456789Z", "2026-11-20"])


@st.composite
def entries(draw, i: int = 0) -> dict:
    e = {"insertId": f"id-{draw(st.integers(0, 10**6))}", "timestamp": draw(stamps),
         "logName": "projects/p/logs/stdout", "resource": {"type": "k8s_container", "labels": {"x": "y"}}}
    if draw(st.booleans()):
        e["severity"] = draw(st.sampled_from(["INFO", "WARNING", "ERROR"]))
    payload = draw(st.sampled_from(["text", "text", "json", "both", "proto", "none"]))
    if payload in ("text", "both", "proto"):
        e["textPayload"] = draw(texts)
    if payload in ("json", "both"):
        e["jsonPayload"] = {"message": draw(texts)}
    if payload == "proto":
        e["protoPayload"] = {"status": {"message": draw(texts)}}
    return e


def _read(tmp_path, items: list[dict], ascii_only: bool, jsonl: bool, filters=FILTERS) -> dict[str, set[str]]:
    for n, e in enumerate(items):
        e["insertId"] += f"-{n}"  # unique, so each entry is yielded (and compared) on its own
    name = "logs.jsonl" if jsonl else "logs.json"
    body = ("\n".join(json.dumps(e, ensure_ascii=ascii_only) for e in items) if jsonl else
            json.dumps(items, indent=2, sort_keys=True, ensure_ascii=ascii_only))
    folder = tmp_path / f"x{next(FOLDERS)}"
    folder.mkdir()
    (folder / name).write_text(body, encoding="utf-8")
    src = ReplaySource(folder)
    queries = [LogQuery(f"q{i}", f) for i, f in enumerate(filters)]
    got: dict[str, set[str]] = {q.name: set() for q in queries}
    for q, e in src.read(queries):
        got[q.name].add(e["insertId"])
    assert src._index, "the fast reader took the file"
    return got


@settings(max_examples=60, **QUICK)
@given(items=st.lists(entries(), min_size=1, max_size=12), ascii_only=st.booleans(), jsonl=st.booleans())
def test_replay_read_equals_the_filter_on_every_entry(tmp_path, items, ascii_only, jsonl):
    got = _read(tmp_path, items, ascii_only, jsonl)
    for i, f in enumerate(FILTERS):
        pred = compile_filter(f)
        assert got[f"q{i}"] == {e["insertId"] for e in items if pred(e)}, f


@settings(max_examples=40, **QUICK)
@given(items=st.lists(entries(), min_size=1, max_size=12), ascii_only=st.booleans(), jsonl=st.booleans())
def test_a_route_s_regexes_ored_into_one_prefilter_miss_nothing(tmp_path, items, ascii_only, jsonl):
    """Only positive text regexes: every plan of the text route has a pattern, so replay tests their OR first
    (plan.text_gate) and each regex only on the entries it lets through, or searches the route's texts in bulk."""
    gated = FILTERS[:len(PATTERNS)]
    got = _read(tmp_path, items, ascii_only, jsonl, gated)
    for i, f in enumerate(gated):
        pred = compile_filter(f)
        assert got[f"q{i}"] == {e["insertId"] for e in items if pred(e)}, f
    # ... and without `^$`, which the spool can't search: the route's texts are then searched in bulk
    # (skill/reading/sources/spool.py), with a multi-line anchor beside the rest
    gated = [f for p, f in zip(PATTERNS, FILTERS) if p != "^$"] + [f"textPayload=~{quote('(?m)^step|(?m)7$')}"]
    got = _read(tmp_path, [dict(e, insertId=e["insertId"].rsplit("-", 1)[0]) for e in items], ascii_only, jsonl, gated)
    for i, f in enumerate(gated):
        pred = compile_filter(f)
        assert got[f"q{i}"] == {e["insertId"] for e in items if pred(e)}, f


def test_escaped_and_folded_text_is_not_missed(tmp_path):
    items = [{"insertId": "a", "timestamp": "2026-11-20T10:00:00Z", "textPayload": 'x "step 5"'},  # \" around it
             {"insertId": "b", "timestamp": "2026-11-20T10:00:00Z", "textPayload": "ſtep 6"},  # ſ folds to s
             {"insertId": "c", "timestamp": "2026-11-20T10:00:00Z", "textPayload": "stép 7 kK"},  # Kelvin
             {"insertId": "d", "timestamp": "2026-11-20T10:00:00Z", "textPayload": "a\\b\nc"}]
    for ascii_only in (True, False):  # ensure_ascii writes \u escapes: literals split by an escape
        got = _read(tmp_path, [dict(e) for e in items], ascii_only, jsonl=False)
        assert got["q0"] == {"a-0"}
        assert got["q2"] == {"c-2"}  # (?i)kk matches k and the Kelvin sign
        assert got["q4"] == {"d-3"} and got["q5"] == {"d-3"}  # a backslash, a newline
        assert got["q9"] == {"a-0", "b-1", "c-2"}  # (?i)ſ is s in any case


@settings(max_examples=2000, **QUICK)
@given(st.text(alphabet="0123456789-T:.Z+ t\u0664", max_size=32)
       | st.datetimes().map(lambda d: d.isoformat(timespec="microseconds") + "Z"))
def test_parse_utc_is_parse_ts_of_the_utc_spelling(s):
    assert parse_utc(s) == (parse_ts(s) if utc_spelled(s) else 0)


def test_parse_utc_edges():
    assert parse_utc("1970-01-01T00:00:01Z") == 1_000_000_000
    assert parse_utc("2026-02-30T00:00:00Z") == 0 and parse_utc("2026-11-20T10:00:60Z") == 0
    assert parse_utc("2026-11-20T10:00:00.123456789Z") == parse_ts("2026-11-20T10:00:00.123456789Z")
    assert parse_utc("2026-11-20T10:00:00+00:00") == 0 and parse_utc("2026-11-20T10:00:00.Z") == 0
