"""The Logging query language subset: parsing, semantics against raw LogEntry dicts, quoting."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathways_workload.skill.errors import FilterSyntaxError
from pathways_workload.skill.reading.query import And, Compare, Not, Or, parse, quote, regex_literal
from pathways_workload.skill.reading.evaluate import compile_filter, matches, parse_timestamp_ns

JOBSET = "k8s-pod/jobset_sigs_k8s_io/jobset-name"
POD = {
    "insertId": "a1",
    "logName": "projects/p/logs/stdout",
    "timestamp": "2025-01-01T00:00:00.123456789Z",
    "receiveTimestamp": "2025-01-01T00:00:01Z",
    "severity": "ERROR",
    "resource": {"type": "k8s_container", "labels": {"cluster_name": "c1", "container_name": "jax"}},
    "labels": {JOBSET: "pw", "compute.googleapis.com/resource_name": "gke-node-1"},
    "textPayload": "TPU initialization failed: Step 42",
}
EVENT = {
    "logName": "projects/p/logs/events",
    "severity": "WARNING",
    "resource": {"type": "k8s_pod"},
    "jsonPayload": {"reason": "BackOff", "count": 7, "ok": False, "gone": None, "shoeSize": [8.5, 9, 6],
                    "involvedObject": {"name": "pw-worker-0-0-abcde", "kind": "Pod"},
                    "resultInfo": {"results": [{"errorMsg": {"messageId": "scale.down.error"}},
                                               {"errorMsg": {"messageId": "scale.up.error.quota"}}]}},
}


@pytest.mark.parametrize("text, entry, expected", [
    ('resource.type="k8s_container"', POD, True),
    ('resource.type="K8S_Container"', POD, True),  # "=" ignores letter case
    ('resource.type="k8s"', POD, False),
    ("resource.type=k8s_container", POD, True),
    ('resource.type!="k8s_pod"', POD, True),
    ('textPayload:"initialization FAILED"', POD, True),
    ("textPayload:robot", POD, False),
    ('textPayload=~"Step \\d+"', POD, True),
    ('textPayload=~"step \\d+"', POD, False),  # regexes are case-sensitive
    ('textPayload=~"(?i)step \\d+"', POD, True),
    ('textPayload!~"robot"', POD, True),
    ('textPayload!~"TPU"', POD, False),
    ("jsonPayload.count>5", EVENT, True),
    ("jsonPayload.count<=7", EVENT, True),
    ("jsonPayload.count<7", EVENT, False),
    ('jsonPayload.count>="10"', EVENT, False),  # numeric, not lexicographic
    ("jsonPayload.count=7.0", EVENT, True),
    ("jsonPayload.count>-5", EVENT, True),
    ("jsonPayload.ok=false", EVENT, True),
    ("jsonPayload.ok=TRUE", EVENT, False),
    ("jsonPayload.gone=NULL_VALUE", EVENT, True),
    ('jsonPayload.gone="NULL_VALUE"', EVENT, False),
    ("jsonPayload.reason=NULL_VALUE", EVENT, False),
    ("jsonPayload.reason!=NULL_VALUE", EVENT, True),
    ("labels.x=NULL_VALUE", {"labels": {"x": "null_value"}}, False),
    ('labels.x="null_value"', {"labels": {"x": "NULL_VALUE"}}, True),
    ('labels.x="ÉTÉ"', {"labels": {"x": "été"}}, True),
    ('labels.x!="ÉTÉ"', {"labels": {"x": "été"}}, False),
    ("jsonPayload.involvedObject.name:pw-worker-", EVENT, True),
    ('jsonPayload:"abcde"', EVENT, True),  # "has" on an object searches inside it
    ("jsonPayload.message:*", EVENT, False),
    ("jsonPayload.reason:*", EVENT, True),
    ("jsonPayload.gone:*", EVENT, True),
    ('resource.labels.cluster_name>"b"', POD, True),
    ('resource.labels.cluster_name<"B"', POD, False),
])
def test_operators(text, entry, expected):
    assert matches(text, entry) is expected


@pytest.mark.parametrize("a, b, c, d", list(itertools.product([0, 1], repeat=4)))
def test_or_binds_tighter_than_and(a, b, c, d):
    # The LQL page: `"a" OR NOT "b" AND NOT "c" OR "d"` is `("a" OR (NOT "b")) AND ((NOT "c") OR "d")`.
    entry = {"labels": {"a": str(a), "b": str(b), "c": str(c), "d": str(d)}}
    text = "labels.a=1 OR NOT labels.b=1 AND NOT labels.c=1 OR labels.d=1"
    expected = bool((a or not b) and (not c or d))
    assert matches(text, entry) is expected
    assert matches(text.replace(" AND ", "\n-- comment AND x\n"), entry) is expected


def test_tree_shape_and_implicit_and():
    x, y, z = (Compare((f,), "=", "1", True) for f in "xyz")
    assert parse("x=1 y=1 OR z=1") == And((x, Or((y, z))))
    assert parse("x=1 AND\n  -y=1 -- y is out\n z=1") == And((x, Not(y), z))
    assert parse("NOT NOT x=1") == x
    assert parse("") == parse("-- only a comment\n") == And(())
    assert matches("", POD) and matches("-- nothing", {})


def test_lowercase_operators_are_search_terms():
    assert matches('textPayload:TPU or textPayload:robot', POD) is False  # "or" is a required global term
    assert matches('textPayload:TPU OR textPayload:robot', POD) is True


@pytest.mark.parametrize("text, expected", [
    (f'labels."{JOBSET}"="pw"', True),
    (f'labels."{JOBSET}"="pw-2"', False),
    ('labels."compute.googleapis.com/resource_name"=("gke-node-0" OR "gke-node-1")', True),
    ('resource.type=("k8s_pod" OR "k8s_node")', False),
    ('resource.labels.container_name=(pathways-rm OR jax)', True),
    ('textPayload:("tpu" AND "step")', True),
    ('textPayload:("tpu" AND NOT "step")', False),
    ("textPayload:(tpu failed)", True),  # implicit AND inside a value list
    ('textPayload=~("^TPU" OR "^GPU")', True),
])
def test_quoted_paths_and_value_lists(text, expected):
    assert matches(text, POD) is expected


@pytest.mark.parametrize("text, expected", [
    ('jsonPayload.resultInfo.results.errorMsg.messageId:"scale.up.error"', True),
    ('jsonPayload.resultInfo.results.errorMsg.messageId="scale.down.error"', True),
    ('jsonPayload.resultInfo.results.errorMsg.messageId="scale.up.error"', False),
    ("jsonPayload.shoeSize<7", True),
    ("jsonPayload.shoeSize>9", False),
    ("jsonPayload.resultInfo.results.nope:*", False),
])
def test_arrays_match_if_any_element_does(text, expected):
    assert matches(text, EVENT) is expected


@pytest.mark.parametrize("text, severity, expected", [
    ("severity>=WARNING", "ERROR", True),
    ("severity>=warning", "NOTICE", False),
    ('severity>"info"', "NOTICE", True),
    ("severity=ERROR", "error", True),
    ("severity<DEBUG", None, True),  # missing severity is DEFAULT
    ("severity>DEFAULT", None, False),
    ("severity>=400", "WARNING", True),
    ("severity>=EMERGENCY", "ALERT", False),
    ("severity=BOGUS", "ERROR", False),  # unconvertible value: the comparison fails
    ("NOT severity=BOGUS", "ERROR", True),
])
def test_severity_is_ordered(text, severity, expected):
    entry = {} if severity is None else {"severity": severity}
    assert matches(text, entry) is expected


@pytest.mark.parametrize("text, expected", [
    ('timestamp>="2025-01-01T00:00:00.123456789Z"', True),
    ('timestamp>"2025-01-01T00:00:00.123456789Z"', False),
    ('timestamp>"2025-01-01T00:00:00.12345678Z"', True),  # nanosecond precision
    ('timestamp="2025-01-01T01:00:00.123456789+01:00"', True),
    ('timestamp<"2024-12-31T19:00:00.2-05:00"', True),
    ('timestamp>"2025-01-01"', True),
    ('receiveTimestamp<="2025-01-01T00:00:01.000Z"', True),
    ('timestamp>"yesterday"', False),
])
def test_timestamps_are_instants(text, expected):
    assert matches(text, POD) is expected
    # The same instant spelled with an offset and a shorter fraction takes the full-parse path.
    assert matches(text, {**POD, "timestamp": "2025-01-01T05:30:00.1234567890+05:30"}) is expected


@pytest.mark.parametrize("ts", ["0001-01-01T00:00:00Z", "1969-12-31T23:59:59.999999999Z", "2025-06-30T12:00:00.5Z",
                                "9999-12-31T23:59:59.999999999Z"])
@pytest.mark.parametrize("lit", ["1970-01-01T00:00:00Z", "2025-06-30T14:00:00.5+02:00", "2025-06-30T12:00:00.50Z"])
def test_fast_timestamp_path_agrees_with_parsing(ts, lit):
    a, b = parse_timestamp_ns(ts), parse_timestamp_ns(lit)
    for op, want in (("<", a < b), ("=", a == b), (">=", a >= b)):
        assert matches(f"timestamp{op}{quote(lit)}", {"timestamp": ts}) is want


@pytest.mark.parametrize("s, ns", [
    ("1970-01-01T00:00:00Z", 0),
    ("1970-01-01T00:00:01.5Z", 1_500_000_000),
    ("1970-01-01T01:00:00+01:00", 0),
    ("1969-12-31T23:59:59.999999999Z", -1),
    ("2025-01-01T00:00:00.1234567891Z", 1735689600_123456789),
    ("1970-01-02", 86_400_000_000_000),
])
def test_parse_timestamp_ns(s, ns):
    assert parse_timestamp_ns(s) == ns


@pytest.mark.parametrize("s", ["", "2025-13-01T00:00:00Z", "2025-02-30", "2025-01-01T24:00:00Z",
                               "2025-01-01T00:00:00", "2025-01-01T00:00:00+25:00", "soon"])
def test_parse_timestamp_ns_rejects_garbage(s):
    with pytest.raises(ValueError):
        parse_timestamp_ns(s)


@pytest.mark.parametrize("text, log_name, expected", [
    ('log_id("events")', "projects/p/logs/events", True),
    ('LOG_ID("events")', "projects/p/logs/stdout", False),
    ('log_id("serialconsole.googleapis.com/serial_port_1_output")',
     "projects/p/logs/serialconsole.googleapis.com%2Fserial_port_1_output", True),
    ('log_id("serialconsole.googleapis.com%2Fserial_port_1_output")',
     "projects/p/logs/serialconsole.googleapis.com%2Fserial_port_1_output", True),
    ('log_id("cloudaudit.googleapis.com/activity")', "projects/p/logs/cloudaudit.googleapis.com%2fACTIVITY", True),
    ('log_id("activity")', "projects/p/logs/cloudaudit.googleapis.com%2Factivity", False),
    ("log_id(events)", "organizations/1/logs/events", True),
])
def test_log_id(text, log_name, expected):
    assert matches(text, {"logName": log_name}) is expected


@pytest.mark.parametrize("text, expected", [
    ("jsonPayload.nope=foo", False),
    ("NOT jsonPayload.nope=foo", True),  # the LQL page: NOT on a missing field is TRUE
    ("jsonPayload.nope!=foo", False),  # ... and != on a missing field is FALSE
    ("-jsonPayload.nope:foo", True),
    ("jsonPayload.reason.deeper=x", False),
    ("thud=1", False),  # unknown fields match nothing
])
def test_missing_fields(text, expected):
    assert matches(text, EVENT) is expected


@pytest.mark.parametrize("text, expected", [
    ('"initialization failed"', True),
    ("step", True),
    ('"gke-node-1" "pw"', True),
    ('"gke-node-2"', False),
    ('SEARCH("tpu step")', True),
    ('SEARCH("step tpu")', True),
    ('SEARCH("initializ")', False),  # tokens, not substrings
    ('SEARCH("`initialization failed`")', True),
    ('SEARCH("`failed initialization`")', False),
    ('search(textPayload, "TPU")', True),
    ('SEARCH(resource, "TPU")', False),
])
def test_global_restrictions_and_search(text, expected):
    assert matches(text, POD) is expected


@pytest.mark.parametrize("text, position", [
    ("resource.type=", 14),
    ("(a=1", 4),
    ("a=1)", 3),
    ('textPayload=~"(unclosed"', 13),
    ('x="abc', 2),
    ("a..b=1", 2),
    ('labels."x"y=1', 10),
    ("labels.=1", 7),
    ("x=1 AND", 7),
    ("OR x=1", 0),
    ("x=* ", 2),
    ("x!y", 1),
    ("frobnicate(x)", 0),
    ("log_id()", 0),
    ("()", 1),
    ('SEARCH("...")', 7),
])
def test_syntax_errors_say_where(text, position):
    with pytest.raises(FilterSyntaxError) as err:
        parse(text)
    assert err.value.position == position and err.value.filter_text == text
    assert f"position {position}" in str(err.value) and "\n" not in str(err.value)


def test_deep_nesting_is_a_clear_error_and_long_negations_are_fine():
    with pytest.raises(FilterSyntaxError, match="nested deeper"):
        parse("(" * 5000 + "x" + ")" * 5000)
    assert matches("NOT " * 3001 + "x=1", {"x": 1}) is False
    with pytest.raises(FilterSyntaxError, match="limit"):
        parse("x " * 10_001)


@pytest.mark.parametrize("value", ['x" OR "" = "', 'a\\', '\\"', "line\nbreak\ttab\r", "\x00\x1b\x7f\u2028",
                                   "é ü 漢", "--not a comment", ")(", ""])
def test_quote_round_trips(value):
    assert parse(f"labels.x={quote(value)}") == Compare(("labels", "x"), "=", value)
    assert "\n" not in quote(value)


def test_quoted_jobset_name_cannot_widen_the_match():
    evil = 'x" OR "" = "'
    pred = compile_filter(f'resource.type="k8s_container" labels."{JOBSET}"={quote(evil)}')
    other = {**POD, "labels": {JOBSET: "someone-else"}}
    assert not pred(POD) and not pred(other)
    assert pred({**POD, "labels": {JOBSET: evil}})


def test_regex_literal_keeps_the_pattern():
    pattern = r"(?i)\bstep\b[\s:=#]*\d+ \"q\""
    assert parse(f"textPayload=~{regex_literal(pattern)}").value == pattern
    assert matches(f"textPayload=~{regex_literal(pattern)}", {"textPayload": 'STEP: 5 "q"'})


def test_compiled_filters_are_cached():
    assert compile_filter("x=1") is compile_filter("x=1")


def test_project_filter_shapes():
    text = ('log_id("container.googleapis.com/cluster-autoscaler-visibility") resource.labels.cluster_name="c1"\n'
            'timestamp>="2025-01-01T00:00:00Z" timestamp<="2025-01-02T00:00:00Z" '
            '(jsonPayload.resultInfo.results.errorMsg.messageId:"scale.up.error" OR '
            "jsonPayload.noDecisionStatus.noScaleUp:*)")
    entry = {**EVENT, "logName": "projects/p/logs/container.googleapis.com%2Fcluster-autoscaler-visibility",
             "timestamp": "2025-01-01T10:00:00Z", "resource": {"labels": {"cluster_name": "c1"}}}
    assert matches(text, entry) and not matches(text, {**entry, "timestamp": "2025-01-03T00:00:00Z"})


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('ab=!~<>:*()"\\-. \nANDORTlog_id(SEARCH),1\t')) | st.characters()))
def test_parse_returns_or_raises_filter_syntax_error(text):
    try:
        node = parse(text)
    except FilterSyntaxError:
        return
    for entry in (POD, EVENT, {}):
        assert isinstance(compile_filter(text)(entry), bool)
    assert node is not None


@given(st.text())
def test_quote_round_trips_any_string(value):
    assert parse(f"textPayload={quote(value)}").value == value
    assert matches(f"textPayload={quote(value)}", {"textPayload": value})
