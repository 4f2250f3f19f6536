"""Bad input: a one-line error naming the file, or a diagnosis whose data_gaps say what was skipped."""

from __future__ import annotations

import json
import shutil

import pytest

from pathways_workload.skill.api import diagnose_replay
from pathways_workload.cli import main
from pathways_workload.skill.errors import InputError

from conftest import FIXTURES

CASE = FIXTURES / "case-001"


def _copy(tmp_path):
    dst = tmp_path / "case"
    shutil.copytree(CASE, dst)
    return dst


def _entries():
    return json.loads((CASE / "logs.json").read_text())


@pytest.mark.parametrize("setup, message", [
    (lambda d: None, "no such folder"),
    (lambda d: d.mkdir(), "no *.json"),
    (lambda d: (d.mkdir(), (d / "notes.txt").write_text("hi")), "no *.json"),
    (lambda d: (d.mkdir(), (d / "logs.json").write_text("[]")), "no usable"),
    (lambda d: (d.mkdir(), (d / "logs.json").write_text("{not json")), "not valid JSON"),
    (lambda d: (d.mkdir(), (d / "x.json").write_text('{"hello": 1}')), "neither a LogEntry"),
])
def test_unusable_input_is_one_clean_error(tmp_path, setup, message, capsys):
    folder = tmp_path / "in"
    setup(folder)
    with pytest.raises(InputError) as err:
        diagnose_replay(folder)
    assert message in str(err.value)
    assert main(["diagnose", "--replay", str(folder)]) == 2
    out = capsys.readouterr()
    assert out.err.count("\n") == 1 and "Traceback" not in out.err and message in out.err


def test_a_file_that_is_not_a_folder(tmp_path):
    f = tmp_path / "logs.json"
    f.write_text("[]")
    with pytest.raises(InputError, match="not a folder"):
        diagnose_replay(f)


def test_truncated_array_keeps_what_was_read(tmp_path):
    d = _copy(tmp_path)
    text = (d / "logs.json").read_text()
    (d / "logs.json").write_text(text[: len(text) - 300])
    diag = diagnose_replay(d)
    assert any("logs.json" in g and ("cut off" in g or "not closed" in g) for g in diag.data_gaps)
    assert diag.failure_class == "tpu_hardware_failure"


def test_corrupt_line_in_json_lines_is_skipped_and_counted(tmp_path):
    d = _copy(tmp_path)
    entries = _entries()
    lines = [json.dumps(e) for e in entries]
    lines.insert(len(lines) // 2, '{"insertId": "broken", "textPay')
    (d / "logs.json").unlink()
    (d / "logs.jsonl").write_text("\n".join(lines) + "\n")
    diag = diagnose_replay(d)
    assert any("logs.jsonl:" in g and "skipped" in g for g in diag.data_gaps)
    assert diag.budget.entries_read == len(entries) and diag.budget.entries_skipped == 1
    assert diag.failure_class == "tpu_hardware_failure"


def test_entries_missing_fields_are_listed_not_fatal(tmp_path):
    d = _copy(tmp_path)
    entries = _entries()
    entries[0].pop("insertId")
    entries[1].pop("timestamp")
    entries[1].pop("receiveTimestamp", None)
    entries.append({"hello": "world"})
    (d / "logs.json").write_text(json.dumps(entries))
    diag = diagnose_replay(d)
    gaps = " | ".join(diag.data_gaps)
    assert "without insertId" in gaps and "no usable timestamp" in gaps and "not a LogEntry" in gaps
    assert diag.budget.entries_read + diag.budget.entries_skipped == len(entries)


def test_mixed_timestamp_offsets_order_correctly(tmp_path):
    d = _copy(tmp_path)
    entries = _entries()
    for e in entries[::2]:  # same instants, written with a +02:00 offset
        ts = e["timestamp"]
        hh = int(ts[11:13]) + 2
        e["timestamp"] = f"{ts[:11]}{hh:02d}{ts[13:-1]}+02:00" if hh < 24 else ts
    (d / "logs.json").write_text(json.dumps(entries))
    assert diagnose_replay(d).failure_class == "tpu_hardware_failure"


def test_non_utf8_bytes_are_replaced_and_reported(tmp_path):
    d = _copy(tmp_path)
    raw = (d / "logs.json").read_bytes()
    i = raw.index(b"FATAL ERROR")
    (d / "logs.json").write_bytes(raw[:i] + b"\xff\xfe" + raw[i:])
    diag = diagnose_replay(d)
    assert any("not UTF-8" in g for g in diag.data_gaps)


def test_several_jobsets_need_a_choice(tmp_path):
    d = tmp_path / "two"
    d.mkdir()
    for name, case in (("a", "case-001"), ("b", "case-004")):
        (d / f"{name}.json").write_text((FIXTURES / case / "logs.json").read_text())
    with pytest.raises(InputError, match="several JobSets"):
        diagnose_replay(d)
    assert diagnose_replay(d, jobset="lm8b-pt-r14").failure_class == "tpu_hardware_failure"


def test_bad_at_time(tmp_path):
    with pytest.raises(InputError, match="--at"):
        diagnose_replay(CASE, at="yesterday")


def test_a_cut_entry_is_said_in_words_that_stand_alone(tmp_path):
    """json's "Unterminated string starting at" ends in a position it gives apart; the gap says what is wrong, whole."""
    d = _copy(tmp_path)
    raw = (d / "logs.json").read_bytes()
    (d / "logs.json").write_bytes(raw[: raw.index(b'"textPayload"', len(raw) // 2) + 20])
    (gap,) = [g for g in diagnose_replay(d).data_gaps if g.startswith("logs.json")]
    assert gap.endswith("is cut off or not JSON (unterminated string); the file ends there"), gap


def test_a_sentence_that_starts_with_our_own_words_starts_in_capitals():
    # a killed process named by its pod ("a process in ...") starts the root cause's sentence; a binary's name does not
    from pathways_workload.skill.telling.explain import _sentence

    assert _sentence("a process in p-0 on n was killed").startswith("A process in ")
    assert _sentence("proxy_server on n was killed").startswith("proxy_server")
    assert diagnose_replay(FIXTURES / "case-004").root_cause.explanation.startswith("proxy_server on ")


def test_a_jobset_known_only_by_its_kueue_workload_is_found_and_several_are_named(tmp_path):
    """An export of Kueue's Workload Events alone (the JobSet never admitted: no pod, no JobSet object) names its JobSet
    by the Workload's name (`jobset-<name>-<5 hex>`); with two such JobSets the error lists both."""
    def event(workload: str, reason: str, message: str, minute: int) -> dict:
        return {"kind": "Event", "apiVersion": "v1", "metadata": {"name": f"{workload}.{minute}", "namespace": "default",
                                                                  "creationTimestamp": f"2026-12-20T10:{minute:02d}:00Z",
                                                                  "uid": f"00000000-0000-0000-0000-0000000000{minute:02d}"},
                "source": {"component": "kueue-admission"}, "reportingComponent": "kueue-admission",
                "involvedObject": {"kind": "Workload", "name": workload, "namespace": "default",
                                   "apiVersion": "kueue.x-k8s.io/v1beta1"},
                "reason": reason, "message": message, "type": "Normal", "count": 1,
                "firstTimestamp": f"2026-12-20T10:{minute:02d}:00Z", "lastTimestamp": f"2026-12-20T10:{minute:02d}:00Z"}
    pending = "couldn't assign flavors to pod set tpu-workers: insufficient unused quota for google.com/tpu in flavor v4"
    one = tmp_path / "one"
    one.mkdir()
    events = [event("jobset-esm-pt-a81f4", "CreatedWorkload", "Created Workload: default/jobset-esm-pt-a81f4", 1),
              event("jobset-esm-pt-a81f4", "Pending", pending, 2)]
    (one / "events.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": events}))
    assert diagnose_replay(one).workload.jobset == "esm-pt"
    two = tmp_path / "two"
    two.mkdir()
    events.append(event("jobset-fold-ft-7c2d1", "Admitted", "Admitted by ClusterQueue tpu-cq", 3))
    (two / "events.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": events}))
    with pytest.raises(InputError, match="esm-pt, fold-ft"):
        diagnose_replay(two)
