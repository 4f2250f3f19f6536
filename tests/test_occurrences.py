"""Events as occurrences (issue 38): an Event Kubernetes folded repeats into (`count` N, or a `series`) is N
occurrences between its first and last timestamp wherever the engine counts or draws them; every restart is drawn,
restart attempts in creation order, the stall span and the grid over the lane backgrounds, text readable at 800 px."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pathways_workload.skill.api import analyse_replay
from pathways_workload.skill.reading.records import occurrences, record_from_event
from pathways_workload.skill.telling.explain import build
from pathways_workload.skill.telling.html import render_html

from conftest import CASES, FIXTURES

NS = 1_000_000_000


def _event(**kw) -> dict:
    return {"kind": "Event", "metadata": {"uid": "u1"}, "involvedObject": {"kind": "JobSet", "name": "js"},
            "reason": "RestartJobSetFailurePolicyAction", "message": "applying RestartJobSet failure policy action",
            "type": "Normal", **kw}


@pytest.mark.parametrize("event, times", [
    (_event(lastTimestamp="2026-01-01T00:00:10Z"), [(10, True)]),
    (_event(count=2, firstTimestamp="2026-01-01T00:00:00Z", lastTimestamp="2026-01-01T00:00:10Z"),
     [(0, True), (10, True)]),
    (_event(count=3, firstTimestamp="2026-01-01T00:00:00Z", lastTimestamp="2026-01-01T00:00:10Z"),
     [(0, True), (5, False), (10, True)]),
    (_event(eventTime="2026-01-01T00:00:00Z", series={"count": 2, "lastObservedTime": "2026-01-01T00:00:20Z"}),
     [(0, True), (20, True)]),
], ids=["once", "count 2", "count 3", "series"])
def test_an_event_with_a_count_is_that_many_occurrences(event, times):
    t0 = 1767225600 * NS  # 2026-01-01T00:00:00Z
    assert occurrences(record_from_event(event)) == [(t0 + s * NS, known) for s, known in times]


def _restarts_in_the_data(case: Path) -> int:
    """JobSet restarts as the export records them, read without the engine: the RestartJobSet Events' counts (the
    JobSet's status.restarts where it has one must agree)."""
    events = json.loads((case / "events.json").read_text()).get("items", []) if (case / "events.json").exists() else []
    counted = sum(e.get("count") or 1 for e in events if str(e.get("reason", "")).startswith("RestartJobSet"))
    if not events:  # only the events log: one entry per occurrence
        logs = json.loads((case / "logs.json").read_text())
        counted = len({(e["jsonPayload"].get("lastTimestamp"), e["jsonPayload"].get("message")) for e in logs
                       if isinstance(e.get("jsonPayload"), dict)
                       and str(e["jsonPayload"].get("reason", "")).startswith("RestartJobSet")})
    gauge = case / "metrics-jobset-restarts.json"  # no restart Event: kube_jobset_restarts' rises (docs/metrics.md)
    if not counted and gauge.exists():
        values = [float(v) for r in json.loads(gauge.read_text())["data"]["result"] for _t, v in r["values"]]
        counted = int(values[-1] - values[0]) if values else 0
    jobset = case / "jobset.json"  # an export made when the alert fired may hold no JobSet object
    status = json.loads(jobset.read_text()).get("status", {}).get("restarts") if jobset.exists() else None
    assert status is None or status == counted, (case.name, status, counted)
    return counted


def _page(case: Path, **kw) -> str:
    a = analyse_replay(case, **kw)
    return render_html(build(a, logging_requests=0), a.model)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_restart_is_drawn(case):
    html = _page(case)
    drawn = re.findall(r'<use href="#g-restart" class="mark mark-restart" data-kind="restart"[^>]*>', html)
    lines = _svg(html).count('class="restart-line"')
    want = _restarts_in_the_data(case)
    assert lines == want, (lines, want)
    assert len(drawn) >= want


def test_a_restart_event_with_a_count_draws_each_restart():
    html = _page(FIXTURES / "case-009")  # one Event, count 2: 16:42:05 and 16:44:15
    titles = re.findall(r"<title>(\S+) — restart (\d) of (\d)", html)
    assert [(t[:19], n, of) for t, n, of in titles] == [("2026-11-25T16:42:05", "1", "2"),
                                                        ("2026-11-25T16:44:15", "2", "2")]
    html = _page(FIXTURES / "case-201")  # count 3 from 07:47:01 to 07:50:24; the events log has the middle one
    titles = re.findall(r"<title>(\S+) — restart (\d) of 3", html)
    assert [t[11:19] for t, _ in titles] == ["07:47:01", "07:49:00", "07:50:24"]
    assert 'data-kind="restart" data-time="estimated"' not in html


def test_restart_attempts_are_drawn_in_creation_order():
    # rve7m is the one Pod object (created 07:50:29); the earlier attempts are known from their first lines
    html = _page(FIXTURES / "case-201")
    heads = re.findall(r'<g class="lane" data-lane="dpo-v6e-8c-r2-pathways-head-0-0-(\w+)"', html)
    assert heads == ["jp0dn", "7x5rs", "gw2yu", "rve7m"]


def test_the_stall_and_the_grid_lie_over_the_lane_backgrounds():
    html = _page(FIXTURES / "case-087")
    svg = _svg(html)
    last_bg = svg.rindex('class="lane-bg"')
    for drawn in ('class="stall"', 'class="end-line"', 'class="axis"'):
        assert svg.index(drawn) > last_bg, drawn
    assert svg.index('class="mark ') > svg.index('class="stall"')  # the marks over the span


def _svg(html: str) -> str:
    start = html.index('<svg id="swimlane"')
    return html[start:html.index("</svg>", start)]


def test_text_is_readable_at_800_px():
    """The picture is as wide as its container, its text never scaled: 12 px at any width; below its least width
    (600 px) it scrolls, the lane labels held in view (tests/test_timeline.py measures it)."""
    html = _page(FIXTURES / "case-087")
    assert "viewBox" not in re.search(r'<svg id="swimlane"[^>]*>', html).group(0)
    assert re.search(r'class="swimlane" style="[^"]*min-width: 600px', html) and "overflow-x: auto" in html
    assert float(re.search(r"svg text \{ font: ([\d.]+)px", html).group(1)) >= 12
    assert re.search(r"\.lane-labels \{ position: sticky; left: 0", html)
