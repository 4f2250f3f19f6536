"""What humans read: the Markdown report (snapshot) and redaction of secrets."""

from __future__ import annotations

import os

from skill.api import diagnose_replay
from skill.redact import redact
from skill.report import render_markdown

from conftest import FIXTURES, ROOT

SNAPSHOT = ROOT / "tests" / "snapshots" / "case-001.md"


def test_report_snapshot():
    text = render_markdown(diagnose_replay(FIXTURES / "case-001"))
    text = "\n".join(line for line in text.splitlines() if not line.startswith("Read "))  # timing varies
    if os.environ.get("UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(text)
    assert text == SNAPSHOT.read_text()


def test_redaction_of_planted_secrets():
    planted = ("token ya29.a0AfH6SMBx1234567890abcdefghij key AIzaSyD-1234567890abcdefghijklmnopqrstu "
               "url https://storage.googleapis.com/b/o?X-Goog-Signature=abcdef0123&X-Goog-Date=1 PASSWORD=hunter2 "
               "sk-ant-api03-abcdefghijklmnop1234 -----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----")
    out = redact(planted)
    for secret in ("ya29.a0AfH6SMBx", "AIzaSyD-12345", "abcdef0123", "hunter2", "sk-ant-api03", "MIIE"):
        assert secret not in out
    assert "X-Goog-Date=1" in out
