"""The timeline picture tells the truth at any width (issue 43): each Event drawn as its kind, with a legend entry per
kind drawn; marks of one lane never touch at the narrowest width the page allows (so at none wider); the labels over
the lanes sit where no line runs and inside the chart. Geometry from the layout on every library incident, and the
drawn page measured in Chromium where one is installed."""

from __future__ import annotations

import re

import pytest

from pathways_workload.evals import screenshots
from pathways_workload.skill.telling.explain import build
from pathways_workload.skill.telling.html import html, swimlane
from pathways_workload.skill.telling.picture import BOLD_CHAR_PX, GAP, HALF, LABEL_CHAR_PX, PAD, TICK_MIN_PX
from pathways_workload.skill.telling.view import redacted_view

from conftest import CASES, FIXTURES


def _view(replayed, case):
    a = replayed.analysis(case)
    return redacted_view(build(a, logging_requests=0)), a.model


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_marks_never_touch_and_labels_fit_at_the_narrowest_width(replayed, case):
    s = swimlane(*_view(replayed, case))
    px = s.chart_min / 100
    for lane in s.lanes:
        boxes = sorted((m.x * px - HALF[m.kind], m.x * px + HALF[m.kind], m.y, m.title) for m in lane.marks)
        for i, (_lo, hi, y, title) in enumerate(boxes):
            assert lane.y < y < lane.y + lane.height, title
            clash = [t for lo2, _hi2, y2, t in boxes[i + 1:] if y2 == y and lo2 < hi + GAP]
            assert not clash, (title, clash)
        assert s.label_width >= min(232, LABEL_CHAR_PX * len(lane.label)), lane.label
    lanes = sorted(s.lanes, key=lambda lane: lane.y)
    assert all(a.y + a.height <= b.y for a, b in zip(lanes, lanes[1:]))
    for n in s.notes:  # above the lanes, where the grid, restart and end lines (top .. bottom) do not run
        assert n.y < s.top
        left = n.x * px - {"start": 0, "middle": 0.5, "end": 1}[n.anchor] * BOLD_CHAR_PX * len(n.text)
        assert left >= -PAD and left + BOLD_CHAR_PX * len(n.text) <= s.chart_min + PAD, n
    xs = [x * px for x, _label in s.ticks]
    assert all(b - a >= TICK_MIN_PX - 0.01 for a, b in zip(xs, xs[1:])), s.ticks
    drawn = {m.kind for m in s.marks}
    assert {k for k, _label in s.kinds} == drawn


def test_each_event_is_drawn_as_its_kind(replayed):
    """case-201: scheduling waits and back-offs were green start-up milestones; the kill is a kill."""
    v, model = _view(replayed, FIXTURES / "case-201")
    s = swimlane(v, model)
    by_kind: dict[str, list[str]] = {}
    for m in s.marks:
        by_kind.setdefault(m.kind, []).append(m.title)
    assert by_kind["waiting"] and all("FailedScheduling" in t for t in by_kind["waiting"])
    assert by_kind["backoff"] and all("BackOff" in t for t in by_kind["backoff"])
    assert by_kind["kill"] and all("Killing" in t for t in by_kind["kill"])
    assert not [t for t in by_kind["milestone"] if re.search(r"FailedScheduling|BackOff|Killing", t)]
    page = html(v, model)
    legend = re.findall(r'<use href="#g-(\w+)" class="mark-\w+"/></svg>([^<]+)</li>', page)
    assert [k for k, _ in legend] == [k for k, _ in s.kinds]
    assert ("waiting", "scheduling wait") in legend and ("backoff", "back-off") in legend


BROWSER = screenshots.chromium()


@pytest.mark.skipif(BROWSER is None, reason="no Chromium on PATH (Debian: apt-get install -y chromium); the layout's "
                                            "geometry is checked without a browser above")
@pytest.mark.parametrize("width", [1280, 800, 628])  # 628: the page's margins leave the picture its least, 600 px
@pytest.mark.parametrize("case", screenshots.CASES)
def test_in_a_browser_nothing_overlaps_and_nothing_is_cut(case, width):
    assert BROWSER is not None
    g = screenshots.geometry(FIXTURES / case, width, BROWSER)
    assert g["marks"] and g["labels"]
    assert screenshots.problems(g) == []
