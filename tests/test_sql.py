"""skill.reading.sql against the reference evaluator (skill.reading.query): generated filters over hostile entries, and the workload
filters of real fixtures, give the same matching entries from DuckDB; their BigQuery rendering parses back."""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import cache

import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pathways_workload.skill.reading.logtable import connect, load_entries, load_export, select
from pathways_workload.skill.reading.query import parse, quote
from pathways_workload.skill.reading.evaluate import compile_filter
from pathways_workload.skill.reading.records import format_ns
from pathways_workload.skill.reading.sql import ALL_LOGS, DUCKDB, Uncompilable, compile_sql, to_sql
from tests.conftest import FIXTURES

QUICK = dict(derandomize=True, database=None, deadline=None, max_examples=60,
             suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
STATS: Counter = Counter()

# --- hostile entries -------------------------------------------------------------------------------------------

WORDS = ["ERROR", "error", "Error", "INFO", "warning", "DEFAULT", "500", "0500", "5", "5.0", "-1", "1e3", "1E400",
         "12345678901234567890", ".5", "+5", "1.", "true", "False", "null", "", " ", "a.b", "a\nb", "A\\B", 'q"u',
         "it's", "Straße", "STRASSE", "İstanbul", "\u212a", "k", "ﬁle", "file", "café", "CAFÉ", "ǅ", "\x00x",
         "k8s_container", "K8S_CONTAINER", "pathways-worker", "step 12", "Step: 7", "abc%2Fdef", "日本", "1e19",
         "10000000000000000001", "9999999999999999999"]
HOT = ["error", "ERROR", "5", "5.0", "Straße", "strasse", "1e19", "10000000000000000001", "a\nb", "\u212a"]
TIMES = ["2024-05-01T00:00:00Z", "2024-05-01T00:00:00.5Z", "2024-05-01T00:00:00.123456789Z",
         "2024-05-01T00:00:00.1234567891Z", "2024-05-01T24:00:00Z", "2024-02-30T00:00:00Z", "2024-05-01t00:00:00z",
         "2024-05-01T01:00:00+01:00", "2024-05-01", "1600-01-01T00:00:00Z", "2300-01-01T00:00:00Z", "yesterday"]
LOGS = ["projects/p/logs/events", "projects/p/logs/EVENTS", "projects/p/logs/cloudaudit.googleapis.com%2Factivity",
        "projects/p/logs/cloudaudit.googleapis.com%2factivity", "projects/p/logs/a%20b", "projects/p/logs/évents",
        "projects/p/logs/stdout/x", "p/logs/events", "projects/p/logs", "organizations/o/logs/stdout"]
KEYS = ["message", "a", "b", "x.y", "MESSAGE"]

words = st.sampled_from(HOT) | st.sampled_from(WORDS) | st.text(max_size=6)
scalars = st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.sampled_from([10**19 + 1, 5, -0]) | \
    st.floats(allow_nan=False, allow_infinity=False) | words
json_values = st.lists(words, max_size=3) | st.recursive(scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from(KEYS), c,
                                                                                          max_size=3), max_leaves=6)


def maybe(strategy):
    return st.one_of(strategy, st.just(None), scalars)  # None here: the field is left out


@st.composite
def entries(draw, i: int):
    e = {"insertId": f"id{i}"}
    fields = {"textPayload": maybe(words), "severity": maybe(st.sampled_from(WORDS) | st.integers(-5, 900)),
              "timestamp": maybe(st.sampled_from(TIMES) | st.integers(0, 4 * 10**18).map(format_ns)),
              "receiveTimestamp": maybe(st.sampled_from(TIMES)), "logName": maybe(st.sampled_from(LOGS)),
              "resource": maybe(st.fixed_dictionaries({"type": maybe(st.sampled_from(WORDS)),
                                                       "labels": maybe(st.dictionaries(st.sampled_from(KEYS), scalars))})
                                | st.lists(st.fixed_dictionaries({"type": words}), max_size=2)),
              "labels": maybe(st.dictionaries(st.sampled_from(["k8s-pod/app", *KEYS]), scalars, max_size=3)),
              "jsonPayload": maybe(st.dictionaries(st.sampled_from(KEYS), json_values, max_size=4)),
              "protoPayload": maybe(st.fixed_dictionaries({"methodName": words, "resourceName": words}))}
    for name, strategy in fields.items():
        if (v := draw(strategy)) is not None or draw(st.integers(0, 9)) == 0:
            e[name] = v  # JSON null now and then, absent otherwise
    return e


# --- generated filters -----------------------------------------------------------------------------------------

PATHS = ["textPayload", "severity", "timestamp", "receiveTimestamp", "logName", "resource.type", "resource.labels.a",
         "labels.\"k8s-pod/app\"", "labels.a", "jsonPayload.message", "jsonPayload.a.b", "jsonPayload.a",
         "jsonPayload", "jsonPayload.\"x.y\"", "protoPayload.methodName", "insertId", "resource"]
REGEXES = ["(?i)err", "a.b", "^$", r"\d+", "é", "^step", r"(?i)\bstep\b[\s:=#]*\d+", "[A-Z]", "\\\\", "\\x00"]


@st.composite
def comparisons(draw) -> str:
    path, op = draw(st.sampled_from(PATHS)), draw(st.sampled_from(["=", "!=", ":", "<", "<=", ">", ">=", "=~", "!~", ":*"]))
    if op == ":*":
        return f"{path}:*"
    if op in ("=~", "!~"):
        return f"{path}{op}{quote(draw(st.sampled_from(REGEXES)))}"
    if draw(st.integers(0, 9)) == 0:
        return f"{path}{op}NULL_VALUE"
    return f"{path}{op}{quote(draw(st.sampled_from(HOT) | st.sampled_from(WORDS + TIMES) | st.text(max_size=4)))}"


@st.composite
def derived(draw, batch: list[dict]) -> str:
    """A comparison with a literal taken from one of the entries (recased, reformatted or cut), so it often matches."""
    path = draw(st.sampled_from(PATHS))
    v = draw(st.sampled_from(batch))
    for key in parse(f"{path}:*").path:
        v = v.get(key) if isinstance(v, dict) else None
        if isinstance(v, list) and v:
            v = draw(st.sampled_from(v))
    if isinstance(v, (dict, list)) or v is None:
        return draw(comparisons())
    text = json.dumps(v) if isinstance(v, bool) else str(v)
    text = draw(st.sampled_from([text, text.upper(), text.lower(), text.swapcase(), text[1:], text[:-1]] +
                                ([repr(float(v))] if isinstance(v, int) and not isinstance(v, bool) else [])))
    op = draw(st.sampled_from(["=", "!=", ":", "<", "<=", ">", ">=", "=~", "!~"]))
    return f"{path}{op}{quote(text if op not in ('=~', '!~') else re.escape(text))}"


def filters(depth: int = 2):
    atoms = comparisons() | st.sampled_from(LOGS).map(lambda n: f"log_id({quote(n.split('/logs/')[-1])})")
    if depth == 0:
        return atoms
    sub = filters(depth - 1)
    return atoms | st.tuples(sub, sub).map(lambda t: f"({t[0]} {t[1]})") | \
        st.tuples(sub, sub).map(lambda t: f"({t[0]} OR {t[1]})") | sub.map(lambda f: f"NOT {f}")


def same_as_reference(con, entries: list[dict], text: str) -> None:
    want = sorted(e["insertId"] for e in entries if compile_filter(text)(e))
    try:
        ids, unsure = select(con, text)
    except Uncompilable:
        STATS["uncompilable"] += 1
        return
    STATS["exact"] += 1
    STATS["matching something"] += bool(want)
    STATS["rows left to the reference"] += len(unsure)
    assert sorted(ids) == want, (text, to_sql(text, DUCKDB))


@pytest.fixture(scope="module")
def con():
    c = connect(threads=1)
    yield c
    c.close()
    print(f"\nsql property stats: {dict(STATS)}")


@settings(**QUICK)
@given(data=st.data())
def test_generated_filters_match_the_reference_on_hostile_entries(con, data):
    batch = [data.draw(entries(i)) for i in range(data.draw(st.integers(1, 6)))]
    load_entries(con, batch)
    for _ in range(2):
        same_as_reference(con, batch, data.draw(filters()))
    for _ in range(4):
        a, b = data.draw(derived(batch)), data.draw(derived(batch))
        same_as_reference(con, batch, data.draw(st.sampled_from([a, f"NOT {a}", f"{a} OR {b}", f"{a} -{b}"])))


@pytest.mark.parametrize("text", ['jsonPayload.a.b="x"', "severity>=ERROR", 'timestamp>="2024-05-01T00:00:00.5Z"',
                                  'textPayload:"err"', 'log_id("events")', "labels.a:*", "jsonPayload.a=5"])
def test_exact_on_ascii_and_no_lists(text):
    """Where the data has no non-ASCII strings and no lists on the path, nothing is left to the reference."""
    c = connect(threads=1)
    rows = [{"insertId": "1", "jsonPayload": {"a": {"b": "X"}}, "severity": "error", "textPayload": "ERR",
             "timestamp": "2024-05-01T00:00:00.6Z", "logName": "projects/p/logs/events", "labels": {"a": "5.0"}},
            {"insertId": "2", "jsonPayload": {"a": 5}, "severity": 100, "timestamp": "2024-05-01T00:00:00.4Z"},
            {"insertId": "3"}]
    load_entries(c, rows)
    ids, unsure = select(c, text)
    assert unsure == [] and sorted(ids) == sorted(e["insertId"] for e in rows if compile_filter(text)(e))


HOSTILE = [{"insertId": "big", "textPayload": "10000000000000000001", "jsonPayload": {"a": 10000000000000000001}},
           {"insertId": "off", "timestamp": "2024-05-01T01:00:00+01:00", "receiveTimestamp": "2024-05-01t00:00:00z"},
           {"insertId": "list", "jsonPayload": {"a": ["x", {"b": "y"}], "message": [["error"]]}},
           {"insertId": "fold", "textPayload": "Straße \u212a", "labels": {"a": "ﬁle"}, "severity": "ınfo"},
           {"insertId": "null", "jsonPayload": None, "labels": {"a": None}, "severity": None},
           {"insertId": "hour24", "timestamp": "2024-05-01T24:00:00Z", "logName": "projects/p/logs/a%2fb"}]


@pytest.mark.parametrize("text", ["textPayload>1e19", "jsonPayload.a>1e19", "jsonPayload.a>=1e19",
                                  'timestamp="2024-05-01T00:00:00Z"', 'receiveTimestamp>="2024-05-01"',
                                  'jsonPayload.a="x"', 'jsonPayload.a.b="Y"', 'jsonPayload.message:"ERR"',
                                  'textPayload:"strasse"', 'textPayload:"k"', 'labels.a="FILE"', "severity=INFO",
                                  "jsonPayload:*", "labels.a=NULL_VALUE", "labels.a!=NULL_VALUE", "severity<DEBUG",
                                  'timestamp>"2024-05-01T23:59:59Z"', 'log_id("A/B")', "jsonPayload.a:*"])
def test_hostile_values_match_the_reference(con, text):
    load_entries(con, HOSTILE)
    same_as_reference(con, HOSTILE, text)


def test_what_has_no_exact_form_is_uncompilable():
    for text in ['"free text"', 'SEARCH("fatal")', 'jsonPayload."a\\"b"=1']:
        with pytest.raises(Uncompilable):
            compile_sql(text)
    with pytest.raises(Uncompilable):
        compile_sql('httpRequest.status=500', ALL_LOGS)  # _AllLogs has no column for it here


# --- the workloads' own filters --------------------------------------------------------------------------------

CASES = ["case-001", "case-010", "case-029", "case-074", "case-116"]


@cache
def workload_filters(case: str, replayed) -> tuple[tuple[str, str], ...]:
    return tuple((q.name, q.filter) for q in replayed.analysis(FIXTURES / case).queries)


@pytest.mark.parametrize("case", CASES)
def test_workload_filters_compile_and_match_the_reference(case, replayed):
    c = connect(threads=1)
    load_export(c, FIXTURES / case / "logs.json")
    entries = json.loads((FIXTURES / case / "logs.json").read_text())
    exact = 0
    filters = workload_filters(case, replayed)
    for name, text in filters:
        ids, _ = select(c, text)  # raises Uncompilable: every workload filter must compile
        assert sorted(ids) == sorted(e["insertId"] for e in entries if compile_filter(text)(e)), (case, name)
        exact += 1
    print(f"\n{case}: {exact}/{len(filters)} workload filters compiled exactly")


@pytest.mark.parametrize("case", CASES)
def test_workload_filters_render_as_bigquery(case, replayed):
    for name, text in workload_filters(case, replayed):
        sql = to_sql(text, ALL_LOGS)
        tree = sqlglot.parse_one(sql, read="bigquery")  # raises ParseError on invalid BigQuery
        assert tree.sql(dialect="bigquery"), name
        assert "raw" not in sql, name  # _AllLogs has no raw-entry column
