"""The HTML page: self-contained, escaped, every swimlane mark linked to an entry of the page; rendered in Chromium."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from pathways_workload.skill.api import analyse_replay
from pathways_workload.cli import main
from pathways_workload.skill.diagnosis import Diagnosis
from pathways_workload.skill.telling.explain import build
from pathways_workload.skill.telling.html import render_html

from conftest import FIXTURES

MARK = re.compile(r'<a href="#((?:ev|tl)-\d+)"><use href="#g-\w+" class="mark mark-(\w+)"[^>]*><title>([^<]+)</title>')


def _page(case: str) -> str:
    a = analyse_replay(FIXTURES / case)
    return render_html(build(a, logging_requests=0), a.model, replay_files=4)


def _marks(html: str) -> list[tuple[str, str, str]]:
    return MARK.findall(html)


def test_marks_link_to_entries_of_the_page():
    html = _page("case-001")
    marks = _marks(html)
    kinds = {kind for _, kind, _ in marks}
    assert {"milestone", "progress", "cause", "symptom"} <= kinds
    for target, _, title in marks:
        assert f'id="{target}"' in html and title.strip()
    # lanes: head first, then the slices, then the JobSet
    groups = re.findall(r'<div class="group"[^>]*>([^<]+)</div>', html)
    assert groups == ["head", "slice 0", "slice 1", "JobSet"]
    cause = [t for t, kind, _ in marks if kind == "cause"]
    assert cause and all(t.startswith("ev-") for t in cause)


def test_restarts_and_one_head_lane_per_attempt():
    html = _page("case-009")
    assert any(kind == "restart" for _, kind, _ in _marks(html))
    heads = re.findall(r'<g class="lane" data-lane="(llm70b-s8k-pathways-head-0-0-\w+)"', html)
    assert len(heads) == 3 and heads[0].endswith("w651j")  # oldest attempt first
    assert 'class="restart-line"' in html


def test_page_is_self_contained():
    html = _page("case-001")
    assert not re.search(r"<script|<link|<img|<iframe|\bsrc=|@import|url\(", html, re.I)
    assert "default-src 'none'" in html
    hrefs = re.findall(r'href="([^"]+)"', html)
    assert all(h.startswith("#") or h.startswith("https://console.cloud.google.com/logs/") for h in hrefs)


def test_log_text_is_escaped():
    a = analyse_replay(FIXTURES / "case-001")
    doc = build(a, logging_requests=0).to_json_dict()
    doc["evidence"][0]["excerpt"] = '<script>alert("pwned")</script> <img src=x onerror=alert(1)> ya29.a0AfH6SMBx1234567890abcdef'
    doc["timeline"][-1]["summary"] = "a pod was killed or terminated: </title><script>x()</script>"
    html = render_html(Diagnosis.model_validate(doc), a.model)
    assert "<script" not in html and "<img" not in html and "ya29.a0AfH6SMBx" not in html  # escaped and redacted
    assert "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;" in html
    assert "&lt;/title&gt;&lt;script&gt;x()&lt;/script&gt;" in html


def test_cli_writes_the_page(capsys):
    assert main(["diagnose", "--replay", str(FIXTURES / "case-002"), "--format", "html"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("<!DOCTYPE html>") and 'id="swimlane"' in out and "Replayed 4 exported files" in out


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (Debian: apt-get install -y chromium); the page is "
                                             "checked without a browser by the other tests")
def test_chromium_renders_the_marks(tmp_path):
    page = tmp_path / "case-001.html"
    page.write_text(_page("case-001"))
    args = [CHROMIUM, "--headless", "--disable-gpu", "--hide-scrollbars", "--no-first-run", "--window-size=1060,720"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
    dom = subprocess.run(args + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120).stdout
    assert "</svg>" in dom, "chromium printed no DOM"
    marks = re.findall(r'class="mark mark-(\w+)"', dom)
    assert marks.count("cause") >= 1 and marks.count("milestone") >= 1 and marks.count("progress") >= 1
    for target in set(re.findall(r'<a href="#((?:ev|tl)-\d+)">', dom)):
        assert f'id="{target}"' in dom
    shot = tmp_path / "shot.png"
    subprocess.run(args + [f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


# --- issue 27, item 1: a timeline that tells the truth ---------------------------------------------------------------

def _x(html: str, pattern: str) -> float:
    return float(re.search(pattern, html).group(1))


def test_a_stall_is_drawn_as_a_span_to_the_end_of_the_data():
    html = _page("case-087")  # steps stop at 03:20, the data runs to 04:43
    stall = re.search(r'class="stall" data-kind="stall" x="([\d.]+)%" y="[\d.]+" width="([\d.]+)%"', html)
    assert stall and float(stall.group(2)) > 10
    assert re.search(r'class="stall-label"[^>]*>no progress for \d+ min<', html)
    end = _x(html, r'class="end-line" data-kind="end" x1="([\d.]+)%"')
    assert abs(float(stall.group(1)) + float(stall.group(2)) - end) < 0.1  # the span ends where the data ends
    marks = [float(x) for x in re.findall(r'class="mark mark-milestone" data-kind="milestone" x="([\d.]+)%"', html)]
    assert marks and max(marks) < end


def test_the_axis_runs_to_at_when_it_is_later():
    a = analyse_replay(FIXTURES / "case-087", at="2026-11-27T05:30:00Z")
    late = render_html(build(a, logging_requests=0), a.model)
    ticks = re.findall(r'text-anchor="middle">(\d\d:\d\d)<', late)
    assert "05:30" in ticks or "05:00" in ticks


def test_ticks_are_round_with_the_date_and_utc():
    html = _page("case-087")
    assert re.search(r'class="axis-caption"[^>]*>2026-11-27, UTC<', html)  # the date and the zone, once
    labels = re.findall(r'<text class="tick" x="[\d.]+%" y="[\d.]+" text-anchor="middle">([^<]+)</text>', html)
    assert labels and all(re.fullmatch(r"\d\d:(?:00|30|15|45|\d0)", t) for t in labels)


def test_quiet_workers_share_one_lane_and_the_root_cause_is_named():
    html = _page("case-087")
    assert re.search(r'data-lane="quiet:[^"]+"', html) and re.search(r">\d+ quiet workers<", html)
    assert re.search(r'class="mark-label"[^>]*>workload_stalled<', html)


def test_the_page_scales_to_the_window_and_shows_the_doubt():
    html = _page("case-087")
    svg = re.search(r'<svg id="swimlane"[^>]*>', html).group(0)
    assert 'width="100%"' in svg and "viewBox=" not in svg  # as wide as its container, its text never scaled
    d = build(analyse_replay(FIXTURES / "case-087"), logging_requests=0)
    if d.next_checks:
        assert "Check next (read-only)" in html
    if not d.sufficiency.sufficient:
        assert "Not enough evidence for a firm verdict" in html
