"""The `recording` item: recorded lines spliced into a container keep their text, streams, spacing and order, and the
recording machine's names, paths, stamps and ids become the scenario's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pathways_workload.evals.builder.recording import RECORDINGS, Rewriter, load_recording, select
from pathways_workload.evals.scenarios import NS, glog_stamp, parse_iso

IDS = sorted(p.parent.name for p in RECORDINGS.glob("*/output.log"))
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SPLICED = sorted(p.parent for p in FIXTURES.glob("*/scenario.yaml") if "kind: recording" in p.read_text())
MACHINE = ("/work/main", "/opt/device-scrub", "/tmp/ox/", "/root/.pyenv", "recording/programs", "/tmp/jaxcpu26", "/tmp/py3117")


@pytest.mark.parametrize("rid", IDS)
def test_every_recording_rewrites_to_container_paths(rid: str):
    rec = load_recording(rid)
    rw = Rewriter(rec, 0, 1000, "/app/train.py", {})
    text = "\n".join(rw(ln.text) for ln in select(rec, {}, rid))
    assert rec.lines and all(ln.tag in "OE" for ln in rec.lines)
    assert not [m for m in MACHINE if m in text]


@pytest.mark.parametrize("line, want", [
    ("I1205 11:01:20.509205    2142 b295d63588a.cc:870] Process id 2142",
     "I1205 12:01:20.509205    1000 b295d63588a.cc:870] Process id 1000"),
    ("W1205 11:01:20.528478    2150 topology.cc:756] Cannot read CPU core 0",
     "W1205 12:01:20.528478    1008 topology.cc:756] Cannot read CPU core 0"),
    ("2026-12-05 11:12:02,359 INFO train: started", "2026-12-05 12:12:02,359 INFO train: started"),
    ('  File "/work/main/evals/recording/programs/hbm_oom_alloc.py", line 10, in <module>',
     '  File "/app/train.py", line 10, in <module>'),
    ("*** SIGSEGV received by PID 2142 (TID 2150) on cpu 4", "*** SIGSEGV received by PID 1000 (TID 1008) on cpu 4"),
])
def test_rewriter(line: str, want: str):
    assert Rewriter(load_recording("hbm-oom-alloc"), 3600 * NS, 1000, "/app/train.py", {})(line) == want


@pytest.mark.parametrize("spec, first, last", [
    ({"lines": "O"}, "devices:", "allocated 15 GiB"),
    ({"lines": "E", "from": "^Traceback", "to": "^ValueError"}, "Traceback", "ValueError: RESOURCE_EXHAUSTED"),
    ({"from": "allocated 1 GiB", "to": "allocated 3 GiB"}, "allocated 1 GiB", "allocated 3 GiB"),
])
def test_select(spec: dict, first: str, last: str):
    lines = select(load_recording("hbm-oom-alloc"), spec, "t")
    assert lines[0].text.startswith(first) and lines[-1].text.startswith(last)


@pytest.mark.parametrize("case", SPLICED, ids=lambda p: p.name)
def test_spliced_entries_are_as_gke_exports_them(case: Path):
    entries = json.loads((case / "logs.json").read_text())
    for e in entries:
        t = e.get("textPayload")
        if t is None or "k8s_container" != e["resource"]["type"]:
            continue
        assert e["severity"] == ("INFO" if e["logName"].endswith("/stdout") else "ERROR")
        assert not [m for m in MACHINE if m in t]
        m = re.match(r"^[IWEF](\d{4} \d\d:\d\d:\d\d\.\d{6}) ", t)
        if m:  # a glog line is written before it is collected, and not long before
            ts = parse_iso(e["timestamp"])
            assert glog_stamp(ts - 2 * NS) <= m.group(1) <= glog_stamp(ts), (case.name, t[:80])
