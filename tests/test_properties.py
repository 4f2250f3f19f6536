"""Property-based tests (hypothesis): the filter language, the export readers, record normalisation and the whole
replay diagnosis (the classifier fed spliced cause lines of other incidents) take arbitrary and mutated input and end in a result or a clean error, quickly.

Derandomized (the same examples every run, so the suite is stable); raise max_examples locally to search harder:
`HYPOTHESIS_PROFILE=deep python -m pytest tests/test_properties.py`.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import time
from functools import lru_cache
from pathlib import Path

import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pathways_workload.skill.api import diagnose_replay
from pathways_workload.skill.catalog import CLASSES
from pathways_workload.skill.errors import FilterSyntaxError, PathwaysWorkloadError
from pathways_workload.skill.reading.query import parse
from pathways_workload.skill.reading.evaluate import compile_filter
from pathways_workload.skill.understanding.queries import Scope, node_queries, workload_queries
from pathways_workload.skill.reading.records import format_ns, parse_ts, record_from_entry
from pathways_workload.skill.reading.sources.replay import ReplaySource
from tests.conftest import FIXTURES

DEEP = os.environ.get("HYPOTHESIS_PROFILE") == "deep"
QUICK = dict(derandomize=not DEEP, database=None, deadline=None,
             suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
CASE = FIXTURES / "case-001"
SLOW_S = 2.0  # one parse + evaluation, or one small diagnosis, must never take this long


def n(small: int) -> int:
    return small * 20 if DEEP else small


@lru_cache(maxsize=1)
def real_filters() -> tuple[str, ...]:
    scope = Scope(jobset="lm8b-pt-r14", start_ns=parse_ts("2026-11-20T09:40:00Z"), end_ns=parse_ts("2026-11-20T10:22:00Z"),
                  namespace="default", cluster="tpu-east5-a", project="halcyon-ml-prod")
    qs = workload_queries(scope) + node_queries(scope, ["gke-a-1", "gke-a-2"])
    return tuple(q.filter for q in qs) + ('severity>=ERROR SEARCH("FATAL") -log_id("stdout")',
                                          'jsonPayload.involvedObject.name:("a" OR NOT "b") labels.x:*')


@lru_cache(maxsize=1)
def case_entries() -> tuple[str, ...]:
    return tuple(json.dumps(e) for e in json.loads((CASE / "logs.json").read_text()))


# --- strategies -------------------------------------------------------------------------------------------------

scalars = st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True) | st.text(max_size=30)
json_values = st.recursive(scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
                           max_leaves=12)
FIELDS = ["timestamp", "receiveTimestamp", "severity", "textPayload", "jsonPayload", "protoPayload", "logName",
          "insertId", "trace", "operation", "httpRequest"]
timestamps = st.one_of(st.text(max_size=35), st.integers(0, 4 * 10**18).map(format_ns),
                       st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()))


@st.composite
def entries(draw) -> dict:
    """A LogEntry-shaped dict with arbitrary values; resource and labels stay objects (the corpus covers the rest)."""
    e = draw(st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=6))
    if draw(st.booleans()):
        e["timestamp"] = draw(timestamps)
    if draw(st.booleans()):
        e["resource"] = {"type": draw(st.sampled_from(["k8s_container", "k8s_node", "gce_instance", "x", ""])),
                         "labels": draw(st.dictionaries(st.sampled_from(["pod_name", "container_name", "namespace_name",
                                                                         "cluster_name", "node_name"]),
                                                        scalars, max_size=4))}
    if draw(st.booleans()):
        e["labels"] = draw(st.dictionaries(st.sampled_from(["k8s-pod/jobset_sigs_k8s_io/jobset-name",
                                                            "compute.googleapis.com/resource_name", "x"]),
                                           scalars, max_size=3))
    return e


@st.composite
def mutated(draw, text: str) -> str:
    """text with a few random edits: deletions, duplications, insertions of filter syntax, a cut."""
    for _ in range(draw(st.integers(1, 4))):
        if not text:
            break
        i = draw(st.integers(0, len(text) - 1))
        j = draw(st.integers(i, min(len(text), i + 12)))
        op = draw(st.sampled_from(["delete", "dup", "insert", "cut"]))
        if op == "delete":
            text = text[:i] + text[j:]
        elif op == "dup":
            text = text[:j] + text[i:j] + text[j:]
        elif op == "insert":
            text = text[:i] + draw(st.sampled_from(['"', "(", ")", "\\", " OR ", " AND ", "NOT ", "=~", ":", "*", "-",
                                                    "--", "\n", '"(?P<x>', "[", "{"])) + text[i:]
        else:
            text = text[:i]
    return text


# --- the filter language -------------------------------------------------------------------------------------------

def _timed(fn):
    t0 = time.monotonic()
    out = fn()
    assert time.monotonic() - t0 < SLOW_S
    return out


@settings(max_examples=n(150), **QUICK)
@given(data=st.data())
def test_mutated_real_filters_parse_or_fail_cleanly(data):
    text = data.draw(mutated(data.draw(st.sampled_from(real_filters()))))
    try:
        pred = _timed(lambda: compile_filter(text))
    except FilterSyntaxError as err:
        assert "\n" not in str(err) and 0 <= err.position <= len(text)
        return
    for e in data.draw(st.lists(entries(), min_size=1, max_size=4)):
        assert _timed(lambda e=e: pred(e)) in (True, False)


@settings(max_examples=n(150), **QUICK)
@given(e=entries(), which=st.integers(0, 100))
def test_real_filters_evaluate_any_entry(e, which):
    text = real_filters()[which % len(real_filters())]
    assert compile_filter(text)(e) in (True, False)
    assert compile_filter(f"NOT ({text})")(e) is (not compile_filter(text)(e))


@settings(max_examples=n(100), **QUICK)
@given(a=st.sampled_from([f for f in real_filters() if len(f) < 9000]),
       b=st.sampled_from([f for f in real_filters() if len(f) < 9000]), line=st.sampled_from(range(400)))
def test_boolean_laws_on_real_entries(a, b, line):
    e = json.loads(case_entries()[line % len(case_entries())])
    fa, fb = compile_filter(a)(e), compile_filter(b)(e)
    assert compile_filter(f"({a}) AND ({b})")(e) is (fa and fb)
    assert compile_filter(f"({a}) OR ({b})")(e) is (fa or fb)


@settings(max_examples=n(60), **QUICK)
@given(st.text(alphabet='()"\\ ', min_size=1, max_size=400))
def test_pathological_nesting_and_quotes_are_fast(text):
    try:
        _timed(lambda: parse(text))
    except FilterSyntaxError:
        pass


# --- records -------------------------------------------------------------------------------------------------------

@settings(max_examples=n(300), **QUICK)
@given(st.one_of(st.text(max_size=40), json_values))
def test_parse_ts_never_raises(value):
    assert isinstance(parse_ts(value), int)  # 0 when unusable; before 1970 (Go's zero time) is negative, and harmless


@settings(max_examples=n(60), **QUICK)
@given(st.datetimes(timezones=st.timezones()))
def test_parse_ts_honours_offsets(d):
    import datetime as dt

    delta = d - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    want = (delta.days * 86400 + delta.seconds) * 10**9 + delta.microseconds * 1000
    assume(want > 0)
    assert parse_ts(d.isoformat()) == want


@settings(max_examples=n(200), **QUICK)
@given(st.integers(1, 4 * 10**18))
def test_format_ns_round_trips(ns):
    assert parse_ts(format_ns(ns)) == ns


@settings(max_examples=n(300), **QUICK)
@given(entries())
def test_record_from_entry_normalises_or_raises_what_the_collector_catches(e):
    try:
        rec = record_from_entry(e)
    except (KeyError, TypeError, AttributeError, ValueError):
        return
    assert isinstance(rec.text, str) and isinstance(rec.ts, int) and isinstance(rec.id, str)
    labelled = (rec.pod, rec.container, rec.node, rec.namespace, rec.jobset, rec.cluster, rec.project, rec.location)
    assert all(v is None or isinstance(v, str) for v in labelled), labelled


# --- the export readers ------------------------------------------------------------------------------------------

_N = itertools.count()


def _folder(tmp: Path, name: str, data: bytes) -> Path:
    folder = tmp / f"f{next(_N)}"
    folder.mkdir()
    (folder / name).write_bytes(data)
    return folder


@settings(max_examples=n(80), **QUICK)
@given(data=st.binary(max_size=2000) | st.text(max_size=2000).map(str.encode),
       name=st.sampled_from(["logs.json", "logs.jsonl", "x.ndjson"]))
def test_any_bytes_are_read_or_refused_cleanly(tmp_path, data, name):
    folder = _folder(tmp_path, name, data)
    try:
        src = ReplaySource(folder)
        list(src.iter_entries())
        src.inventory()
        diagnose_replay(folder)
    except PathwaysWorkloadError as err:
        assert "\n" not in str(err)


@settings(max_examples=n(40), **QUICK)
@given(items=st.lists(entries() | json_values, min_size=1, max_size=25))
def test_every_array_element_is_read_or_reported(tmp_path, items):
    _every_element(tmp_path, items, jsonl=False)


@settings(max_examples=n(40), **QUICK)
@given(items=st.lists(entries() | json_values, min_size=1, max_size=25))
def test_every_json_line_is_read_or_reported(tmp_path, items):
    _every_element(tmp_path, items, jsonl=True)


def _every_element(tmp_path, items, jsonl):
    items = [{"insertId": "first", "timestamp": "2026-11-20T10:00:00Z", "textPayload": "x"}] + items
    data = "\n".join(json.dumps(i) for i in items) if jsonl else json.dumps(items, indent=2)
    src = ReplaySource(_folder(tmp_path, "logs.jsonl" if jsonl else "logs.json", data.encode()))
    list(src.iter_entries())
    assert src.stats.entries_read + src.stats.entries_skipped == len(items)
    list(src.iter_entries())  # a second pass counts nothing twice
    assert src.stats.entries_read + src.stats.entries_skipped == len(items)


# --- the whole replay diagnosis ----------------------------------------------------------------------------------

SMALL = 60  # entries of case-001 in each mutated export, so a diagnosis stays well under a second


@settings(max_examples=n(10), **QUICK)
@given(data=st.data())
def test_mutated_exports_end_in_a_diagnosis_or_a_clean_error(tmp_path, data):
    lines = list(case_entries())
    keep = data.draw(st.lists(st.integers(0, len(lines) - 1), min_size=1, max_size=SMALL, unique=True))
    text = "[\n" + ",\n".join(lines[i] for i in sorted(keep)) + "\n]"
    text = data.draw(mutated(text))
    folder = tmp_path / f"m{next(_N)}"
    shutil.copytree(CASE, folder)
    (folder / "logs.json").write_text(text)
    try:
        d = _timed(lambda: diagnose_replay(folder))
    except PathwaysWorkloadError as err:
        assert "\n" not in str(err)
        return
    text = "".join(p.read_text(errors="replace") for p in folder.glob("*.json"))
    assert all(i in text for i in d.cited_ids())  # cited ids come from the input, even a broken one


@settings(max_examples=n(8), **QUICK)
@given(seed=st.integers(0, 10**6))
def test_entry_order_does_not_change_the_verdict(tmp_path, seed):
    lines = list(case_entries())
    random.Random(seed).shuffle(lines)
    folder = tmp_path / f"s{seed}"
    shutil.copytree(CASE, folder)
    (folder / "logs.json").write_text("[\n" + ",\n".join(lines) + "\n]")
    base, d = diagnose_replay(CASE), diagnose_replay(folder)
    assert (d.failure_class, d.status) == (base.failure_class, base.status)
    assert {x.name for x in d.root_cause.entities} == {x.name for x in base.root_cause.entities}


# --- the classifier ----------------------------------------------------------------------------------------------

TAXONOMY = {c.id for c in CLASSES}
CONTAINERS = ("pathways-worker", "pathways-rm", "pathways-proxy", "jax-tpu")


@lru_cache(maxsize=1)
def cited_container_lines() -> tuple[str, ...]:
    """The textPayload of every container line an incident of the library cites: real cause and symptom wording."""
    out: set[str] = set()
    for case in sorted(FIXTURES.glob("case-*")):
        cited = set((yaml.safe_load((case / "expected.yaml").read_text()) or {}).get("evidence") or [])
        for path in case.glob("*.json"):
            doc = json.loads(path.read_text())
            for e in doc if isinstance(doc, list) else []:
                if e.get("insertId") in cited and isinstance(e.get("textPayload"), str):
                    out.add(e["textPayload"])
    return tuple(sorted(out))


@lru_cache(maxsize=1)
def case_pods() -> tuple[tuple[str, str, str], ...]:
    """(pod, container, node) of case-001's container lines."""
    seen = set()
    for e in json.loads((CASE / "logs.json").read_text()):
        rl, labels = e["resource"].get("labels", {}), e.get("labels", {})
        if rl.get("container_name") in CONTAINERS:
            seen.add((rl["pod_name"], rl["container_name"], labels.get("compute.googleapis.com/resource_name", "")))
    return tuple(sorted(seen))


@settings(max_examples=n(12), **QUICK)
@given(data=st.data())
def test_spliced_causes_end_in_a_well_formed_verdict(tmp_path, data):
    """Cause and symptom lines of other incidents, dropped on random pods at random times of case-001: whatever the
    mix, the verdict is a taxonomy class that heads the hypotheses, scores are probabilities, every cited id is in
    the input, and the same input gives the same diagnosis."""
    entries = json.loads((CASE / "logs.json").read_text())
    template = next(e for e in entries if e["resource"]["labels"].get("container_name") == "pathways-worker")
    pool, pods = cited_container_lines(), case_pods()
    times = [parse_ts(e["timestamp"]) for e in entries]
    start, end = min(times), max(times)
    for k in range(data.draw(st.integers(1, 6))):
        pod, container, node = data.draw(st.sampled_from(pods))
        e = json.loads(json.dumps(template))
        e["insertId"] = f"spliced-{k:04d}"
        e["timestamp"] = format_ns(data.draw(st.integers(start, end)))
        e["textPayload"] = data.draw(st.sampled_from(pool))
        e["severity"] = data.draw(st.sampled_from(["INFO", "WARNING", "ERROR"]))
        e["resource"]["labels"].update(pod_name=pod, container_name=container)
        e.setdefault("labels", {})["compute.googleapis.com/resource_name"] = node
        entries.append(e)
    folder = tmp_path / f"c{next(_N)}"
    shutil.copytree(CASE, folder)
    (folder / "logs.json").write_text(json.dumps(entries, indent=2))
    d = _timed(lambda: diagnose_replay(folder))
    assert d.failure_class in TAXONOMY and d.failure_class == d.hypotheses[0].failure_class
    assert all(0.0 <= h.score <= 1.0 for h in d.hypotheses) and 0.0 <= d.confidence <= 1.0
    text = "".join(p.read_text() for p in folder.glob("*.json"))
    assert all(i in text for i in d.cited_ids())
    again = diagnose_replay(folder)
    assert (again.failure_class, again.cited_ids(), again.status) == (d.failure_class, d.cited_ids(), d.status)
