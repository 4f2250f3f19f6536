"""The robustness eval's transformations on a tiny literal export, and the runner on three fixtures."""

from __future__ import annotations

import json
from pathlib import Path

from pathways_workload.evals.agents import RulesAgent
from pathways_workload.evals.harness import load_cases
from pathways_workload.evals.robustness import markdown, run_robustness, select
from pathways_workload.evals.transforms import (Copy, glog_prefix, join_tracebacks, json_exc_info, json_msg, json_payload, json_payload_all,
                              jsonl, load, reorder, save, split_tracebacks)
from pathways_workload.evals.rename import rename

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TB = ["Traceback (most recent call last):", '  File "/usr/lib/python3.12/site-packages/orbax/checkpoint/x.py", line 3, in f',
      "    raise FileNotFoundError(p)", "FileNotFoundError: gs://acme-ckpt/run7/step_100"]


def entry(i: str, text: str, container: str = "jax-tpu", ts: str = "2026-11-20T10:00:00.000001Z") -> dict:
    return {"insertId": i, "timestamp": ts, "severity": "ERROR", "textPayload": text,
            "logName": "projects/acme-ml/logs/stderr",
            "labels": {"k8s-pod/jobset_sigs_k8s_io/jobset-name": "lm8b-pt-r14"},
            "resource": {"type": "k8s_container", "labels": {
                "project_id": "acme-ml", "cluster_name": "acme-c1", "container_name": container,
                "pod_name": "lm8b-pt-r14-worker-0-1-ab3cd", "node_name": "gke-acme-c1-tpu-np-0-1a2b3c4d-xy12"}}}


def tiny() -> Copy:
    logs = [entry("e1", "\n".join(TB)),
            entry("e2", "I1120 10:00:01.000000    7 server.cc:12] started", "pathways-worker", "2026-11-20T10:00:01Z"),
            entry("e3", "loading jax 0.7.2 from gs://acme-ckpt/run7", ts="2026-11-20T10:00:02Z")]
    exp = {"failure_class": "checkpoint_failure", "status": "failed", "evidence": ["e1"],
           "root_cause_entities": [{"kind": "Pod", "name": "lm8b-pt-r14-worker-0-1-ab3cd"},
                                   {"kind": "Bucket", "name": "gs://acme-ckpt"}]}
    return Copy("tiny", logs, expected=exp)


def test_split_keeps_the_exception_line_id_and_orders_lines():
    c = tiny()
    assert split_tracebacks(c) == 1
    lines = [e for e in c.logs if e["insertId"].startswith("e1")]
    assert [e["textPayload"] for e in lines] == TB
    assert lines[-1]["insertId"] == "e1" and len({e["insertId"] for e in lines}) == 4
    assert lines[1]["timestamp"] == "2026-11-20T10:00:00.000002000Z"
    assert all(e["resource"] == c.logs[-1]["resource"] for e in lines)


def test_join_is_the_inverse_and_maps_the_key():
    c = tiny()
    split_tracebacks(c)
    c.expected["evidence"] = ["e1-l0"]
    assert join_tracebacks(c) == 1
    joined = next(e for e in c.logs if e["insertId"] == "e1")
    assert joined["textPayload"] == "\n".join(TB) and len(c.logs) == 3 and c.id_map["e1-l0"] == "e1"


def test_json_payload_shape_and_scope():
    c = tiny()
    assert json_payload(c) == 2  # not the pathways-worker line
    assert c.logs[0]["jsonPayload"] == {"message": "\n".join(TB), "logger": "__main__", "severity": "ERROR"}
    assert "textPayload" in c.logs[1]
    c = tiny()
    assert json_payload_all(c) == 3
    assert c.logs[1]["severity"] == c.logs[1]["jsonPayload"]["severity"] == "INFO"  # the glog letter, lifted


def test_structured_variants_msg_and_exc_info():
    c = tiny()
    assert json_msg(c) == 2 and c.logs[2]["jsonPayload"]["msg"].startswith("loading")
    c = tiny()
    split_tracebacks(c)
    c.expected["evidence"] = ["e1-l0"]
    assert json_exc_info(c) == 2  # one traceback, one other user line
    tb = next(e for e in c.logs if e["insertId"] == "e1")
    assert tb["jsonPayload"]["exc_info"] == "\n".join(TB) and tb["jsonPayload"]["message"] == "Unhandled exception"
    assert len(c.logs) == 3 and c.id_map["e1-l0"] == "e1"


def test_glog_prefix_removed_and_added():
    c = tiny()
    assert glog_prefix(c) == 3
    assert c.logs[1]["textPayload"] == "started" and c.logs[1]["severity"] == "INFO"
    assert c.logs[2]["textPayload"].startswith("E1120 10:00:02.000000      42 train.py:123] loading")


def test_rename_is_consistent_and_keeps_insert_ids():
    c = tiny()
    assert rename(c) > 0
    text = json.dumps(c.logs) + json.dumps(c.expected)
    for old in ("lm8b-pt-r14", "ab3cd", "acme-ckpt", "acme-c1", "1a2b3c4d", "0.7.2"):
        assert old not in text, old
    pod = c.expected["root_cause_entities"][0]["name"]
    assert pod in {e["resource"]["labels"]["pod_name"] for e in c.logs} and "-worker-0-1-" in pod
    bucket = c.expected["root_cause_entities"][1]["name"]
    assert bucket in c.logs[0]["textPayload"] and "0.9.2" in c.logs[2]["textPayload"]
    assert [e["insertId"] for e in c.logs] == ["e1", "e2", "e3"] and c.expected["evidence"] == ["e1"]


def test_jsonl_round_trip_and_reorder(tmp_path):
    c = tiny()
    jsonl(c)
    save(c, tmp_path / "a")
    assert (tmp_path / "a" / "logs.jsonl").read_text().count("\n") == 3
    assert load(tmp_path / "a").logs == tiny().logs
    c = tiny()
    reorder(c)
    assert sorted(e["insertId"] for e in c.logs) == ["e1", "e2", "e3"]


def test_runner_on_three_fixtures_produces_the_table():
    cases = select(load_cases([FIXTURES]), 3)
    s = run_robustness(cases, RulesAgent(), ["jsonl", "split_tracebacks"])
    assert [r["transform"] for r in s["rows"]] == ["original", "jsonl", "split_tracebacks"]
    assert s["all_variants"]["cases"] == 6 and s["rows"][1]["applied"] == 3
    md = markdown(s)
    assert "| all variants | 6 |" in md and "evidence recall" in md
