"""The log digest: templates group what differs only in variable parts; evidence stays verbatim; the bound holds."""

from __future__ import annotations

import pytest

from pathways_workload.skill.ask import render_tool_result
from pathways_workload.skill.understanding.digest import Digest, digest_of, estimate_tokens, template
from pathways_workload.skill.telling.explain import build
from pathways_workload.skill.reading.records import Record
from tests.conftest import CASES


@pytest.mark.parametrize("a,b", [
    ("E1120 08:48:35.273885    7745 megascale_context.cc:317] Heartbeat to lm-worker-1-2.lm:29005 timed out after 60s",
     "E1120 08:49:05.002001    7801 megascale_context.cc:317] Heartbeat to lm-worker-0-3.lm:29005 timed out after 60s"),
    ("Successfully assigned default/lm-worker-0-1-8os1q to gke-tpu-east5-a-tpu-np-0-3ca1a06a-4z17",
     "Successfully assigned default/lm-worker-1-0-s3l2m to gke-tpu-east5-a-tpu-np-1-1019a966-n3j0"),
    ("pod uid 5c208dfa-1cdd-445b-8a59-cca97390d9b9 at 10.8.0.12:8470 fingerprint=a98d26a01bbb8cf0",
     "pod uid 0121cbad-196c-4471-a797-7e724e488650 at 10.8.3.7:8470 fingerprint=0f3c2d1e9a8b7c6d"),
])
def test_lines_that_differ_in_variable_parts_share_a_template(a, b):
    assert template(a) == template(b)


def test_different_messages_stay_apart():
    assert template("Program cache hit (3 MiB)") != template("Program cache miss (3 MiB)")
    assert template("line one\nline two") == "line one"


def _rec(i: int, text: str, pod: str, ts: int) -> Record:
    return Record(id=f"id{i}", ts=ts, source="container", log="stderr", text=text, pod=pod, container="pathways-worker")


def test_counts_first_last_and_hosts():
    d = Digest()
    for i in range(500):
        d.add(_rec(i, f"I1120 08:00:{i % 60:02d}.1 1 x.cc:1] Completed {i} program launches", f"w-{i % 50}-ab1cd",
                   1_000 + i), [])
    doc = d.render(entries_read=500, evidence=[])
    (g,) = doc["groups"]
    assert g["count"] == 500 and g["hosts"]["distinct"] == 50 and len(g["hosts"]["sample"]) == 3
    assert g["example"]["id"] == "id0" and g["first"] != g["last"]


def test_the_bound_holds_on_many_distinct_lines():
    d = Digest()
    for i in range(20_000):
        d.add(_rec(i, f"message kind {chr(65 + i % 26)}{chr(65 + i // 26 % 26)}{chr(65 + i // 676 % 26)} " * 5,
                   "p", i + 1), [])
    doc = d.render(entries_read=20_000, evidence=[], max_tokens=8000)
    assert estimate_tokens(render_tool_result("diagnose", {"log_digest": doc})) <= 8000
    assert doc["omitted"]["groups"] > 0 and doc["omitted"]["records"] > 0
    assert len(doc["groups"]) + doc["omitted"]["groups"] == doc["groups_total"]


@pytest.mark.parametrize("case", CASES[:6], ids=lambda c: c.name)
def test_fixture_digest_keeps_evidence_verbatim_and_signals_first(case, replayed):
    a = replayed.analysis(case, digest=True)
    dg = build(a, logging_requests=0)
    doc = digest_of(a, dg)
    assert doc["tokens_estimate"] <= 8000
    records = {s.record.id: s.record for s in a.causes + a.symptoms}
    records.update({s.record.id: s.record for sigs in a.model.milestones.values() for s in sigs})
    for ev in doc["evidence"]:
        assert ev["id"] in {e.id for e in dg.evidence}
        assert records[ev["id"]].text.startswith(ev["text"][:200]) or "REDACTED" in ev["text"]
    ranks = [0 if g.get("signal") else 1 for g in doc["groups"]]
    assert ranks == sorted(ranks)
