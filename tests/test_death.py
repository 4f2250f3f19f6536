"""A program's death as its own logs tell it (skill/understanding/death.py and the catalog's program_died symptom):
the same verdict and status from the logs alone as with the Pod objects, and no death where the program went on."""

from __future__ import annotations

import shutil

import pytest

from pathways_workload.skill.api import diagnose_replay
from pathways_workload.skill.reading.records import Record
from pathways_workload.skill.understanding.death import OUTPUT_ENDS_NS, RAN_ON_NS, uncaught
from pathways_workload.skill.understanding.model import Workload
from pathways_workload.skill.judging.engine import matcher
from pathways_workload.skill.understanding.signals import Signal

from conftest import FIXTURES

NS = 1_000_000_000
T0 = 1_800_000_000 * NS
HEAD = "js-pathways-head-0-0-abcde"


def rec(text: str, at_s: float, container: str = "jax-tpu", pod: str = HEAD, n: int = 0) -> Record:
    return Record(id=f"r{at_s}-{n}", ts=T0 + int(at_s * NS), source="container", log="stderr", text=text, pod=pod,
                  container=container)


def signals(m: Workload, records: list[Record]) -> list[Signal]:
    out = []
    for r in records:
        m.add_record(r)
        for s in matcher().match(r):
            if s.kind == "milestone":
                m.add_milestone(s)
            elif s.kind == "symptom":
                out.append(s)
    m.finish()
    return out


@pytest.mark.parametrize("line", [
    "F1205 11:09:02.553077    7882 client.h:80] Terminating process because the JAX distributed service detected fatal errors.",
    "*** Check failure stack trace: ***",
    "Fatal Python error: Segmentation fault",
    "*** SIGSEGV received at time=1733396522 on cpu 4 ***",
    "*** SIGABRT received by PID 2812 (TID 2812) on cpu 4; stack trace: ***",
])
def test_a_process_s_fatal_lines_are_its_death(line):
    assert "program_died" in {s.target for s in matcher().match(rec(line, 1))}


def test_an_exception_that_ends_the_program_s_output_is_its_death():
    m = Workload(jobset="js")
    syms = signals(m, [rec("step 1, loss 2.0", 1), rec("Traceback (most recent call last):", 5),
                       rec("ValueError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4.0G", 5.1)])
    died = uncaught(m, syms)
    assert [s.record.text[:10] for s in died] == ["ValueError"] and died[0].target == "program_died"


def test_an_exception_the_program_stepped_past_is_no_death():
    m = Workload(jobset="js")
    syms = signals(m, [rec("step 1, loss 2.0", 1), rec("requests.exceptions.HTTPError: 502 Server Error", 5),
                       rec("step 2, loss 1.9", 8)])
    assert uncaught(m, syms) == []


def test_an_exception_followed_by_more_output_is_no_death():
    m = Workload(jobset="js")
    later = 5 + OUTPUT_ENDS_NS / NS + 5
    syms = signals(m, [rec("PermissionError: [Errno 13] Permission denied: '/tb'", 5), rec("still uploading", later)])
    assert uncaught(m, syms) == []


def test_a_client_that_prints_no_steps_is_alive_while_its_programs_run():
    m = Workload(jobset="js")
    launches = [rec(f"I1202 12:48:42.719291    7114 executor.cc:91] Completed {n} program launches since last report", 10 + 60 * n,
                    container="pathways-worker", pod="js-worker-0-0-abcde") for n in range(1, 6)]
    syms = signals(m, [rec("requests.exceptions.HTTPError: 502 Server Error", 5), *launches])
    assert m.milestones.get("worker_launches")
    assert launches[-1].ts - T0 > RAN_ON_NS and uncaught(m, syms) == []


def test_replay_without_the_pod_objects_agrees_with_the_objects(tmp_path):
    """The logs alone say the program died: the verdict and status are the same without pods.json and jobset.json."""
    case = FIXTURES / "case-188"
    full = diagnose_replay(case)
    bare = tmp_path / "bare"
    shutil.copytree(case, bare)
    (bare / "pods.json").unlink()
    (bare / "jobset.json").unlink()
    d = diagnose_replay(bare, jobset=full.workload.jobset)
    assert (d.failure_class, d.status) == (full.failure_class, full.status)


@pytest.mark.parametrize("case", ["case-013", "case-094", "case-136"])
def test_an_unexplained_failure_names_the_line_its_program_died_on(case):
    """unknown_failure cites the program's own fatal line as its evidence and quotes it in the fix."""
    d = diagnose_replay(FIXTURES / case)
    assert d.failure_class == "unknown_failure"
    fatal = [e for e in d.evidence if e.id in d.hypotheses[0].evidence and e.source == "container"]
    assert fatal, d.hypotheses[0].evidence
    said = d.fix[0].summary
    assert "it ended on" in said and any(e.excerpt.strip()[:40] in said for e in fatal), said
