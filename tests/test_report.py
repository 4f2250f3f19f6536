"""What humans read: the Markdown report (snapshots of fixtures of different shapes) and redaction of secrets."""

from __future__ import annotations

import os
import re

import pytest

from pathways_workload.skill.api import diagnose_replay
from pathways_workload.skill.diagnosis import Diagnosis
from pathways_workload.skill.reading.records import parse_ts
from pathways_workload.skill.redact import redact
from pathways_workload.skill.telling.report import render_markdown

from conftest import FIXTURES, ROOT

SNAPSHOTS = ROOT / "tests" / "snapshots"
# case-001: a multislice hardware failure; case-002: healthy; case-009: crashing, head pod recreated by restarts and
# a repeated timeline row; case-012: stalled, nothing started (no links, no milestones).
SHAPES = ("case-001", "case-002", "case-009", "case-012")


def _report(case: str) -> str:
    d = diagnose_replay(FIXTURES / case)
    text = render_markdown(d, replay_files=len(list((FIXTURES / case).glob("*.json"))))
    return re.sub(r"in \d+\.\d\d s\.", "in <seconds> s.", text)  # timing varies


@pytest.mark.parametrize("case", SHAPES)
def test_report_snapshot(case):
    text, snapshot = _report(case), SNAPSHOTS / f"{case}.md"
    if os.environ.get("UPDATE_SNAPSHOTS"):
        snapshot.write_text(text)
    assert text == snapshot.read_text()


def test_report_says_things_once_and_in_order():
    text = _report("case-009")
    d = diagnose_replay(FIXTURES / "case-009")
    assert text.count(d.root_cause.explanation) == 1
    assert "(crashing)" not in text and text.count("## Root cause") == 1
    body = text.split("\n---\n")[0]
    assert "https://" not in body and "[^1]" in body  # links are footnotes after the footer
    assert "[^1]: Logs Explorer: https://console.cloud.google.com/" in text
    times = re.findall(r"^\d+\. (\S+Z) \[", body, re.M)
    assert times and times == sorted(times, key=parse_ts)
    timeline = re.findall(r"^- (\S+Z) — (.*)$", body.split("## Timeline")[1], re.M)
    assert len(timeline) == len(set(timeline)) and "the JobSet restarted (2 times since 16:42:05)" in body
    # the pod standing in the failed ones' place now is named last (the one to inspect)
    assert "one pod per restart attempt: `w651j` (first seen), `avrq1`, `4s0al` (latest)" in text


def test_healthy_report_does_not_stutter():
    text = _report("case-002")
    assert "healthy (healthy)" not in text and "**No failure detected.**" in text
    assert "Cloud Logging requests" not in text
    assert re.search(r"Replayed \d+ exported files: \d+ log entries read", text)


def test_live_footer_keeps_the_request_count():
    d = diagnose_replay(FIXTURES / "case-002")
    live = Diagnosis.model_validate(dict(d.to_json_dict(), budget={"logging_requests": 4, "entries_read": 10,
                                                                   "entries_skipped": 2, "seconds": 1.5}))
    assert "Read 10 log entries, 2 skipped with 4 Cloud Logging requests in 1.50 s." in render_markdown(live)


def test_excerpts_are_cut_at_a_word():
    from pathways_workload.skill.telling.excerpt import clip

    assert clip("alpha beta gamma delta", 14) == "alpha beta…"
    assert clip("short", 14) == "short"
    assert len(clip("x" * 50, 10)) == 10  # no space to cut at: cut anyway, still marked
    summaries = [t.summary for t in diagnose_replay(FIXTURES / "case-001").timeline]
    assert any(s.endswith("all pending programs will fail… (lm8b-pt-r14-worker-1-2-ogjzj/pathways-worker)") for s in summaries)
    excerpts = [e.excerpt for case in SHAPES for e in diagnose_replay(FIXTURES / case).evidence if e.excerpt.endswith("…")]
    assert all(re.search(r"\w…$", e) for e in excerpts)


def test_redaction_of_planted_secrets():
    planted = ("token ya29.a0AfH6SMBx1234567890abcdefghij key AIzaSyD-1234567890abcdefghijklmnopqrstu "
               "url https://storage.googleapis.com/b/o?X-Goog-Signature=abcdef0123&X-Goog-Date=1 PASSWORD=hunter2 "
               "sk-ant-api03-abcdefghijklmnop1234 -----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----")
    out = redact(planted)
    for secret in ("ya29.a0AfH6SMBx", "AIzaSyD-12345", "abcdef0123", "hunter2", "sk-ant-api03", "MIIE"):
        assert secret not in out
    assert "X-Goog-Date=1" in out


def test_no_restart_sentence_without_a_restart():
    """case-001 never restarted (maxRestarts 0, the JobSet failed); case-009 restarted three times."""
    from pathways_workload.skill.api import diagnose_replay

    once = diagnose_replay(FIXTURES / "case-001").root_cause.explanation
    assert "restart" not in once
