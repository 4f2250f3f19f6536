"""The builder's structured log step (`json:` on a `log` item) and the client's command/env and image base."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from pathways_workload.evals.builder import render

SCENARIO = """
workload:
  jobset: js-json
  project: proj-json
  cluster: c1
  slices: 1
  hosts_per_slice: 2
  start: 2026-12-01T10:00:00Z
  end: +20m
  image_base: us-docker.pkg.dev/cloud-tpu-v2-releases/pathways
  server_tag: jax-0.8.1
  client_command: python3 train.py --ckpt_dir=gs://{project}-ckpt/{jobset}
  client_env: {JAX_COMPILATION_CACHE_DIR: "gs://{project}-cache/xla"}
incident:
  - at: +10m
    key: rec
    kind: log
    pod: head
    text: |
      save failed
      second line
    json:
      logger: absl
      severity: ERROR
      exc_info: "Traceback (most recent call last):\\n  File \\"x.py\\", line 1, in f\\nValueError: bad \\"thing\\" in {jobset}"
      extra: {step: 12, dir: "gs://{project}-ckpt"}
  - at: +8m
    kind: log
    pod: head
    step: true
    text: "step {step}"
    json: {logger: trainer, step: "{step}", note: "at {step}"}
expected:
  failure_class: checkpoint_failure
  status: failed
  evidence: [rec, 'text:ValueError: bad "thing" in js-json']
"""


def build(tmp_path: Path) -> dict[str, str]:
    path = tmp_path / "case-json" / "scenario.yaml"
    path.parent.mkdir()
    path.write_text(SCENARIO)
    return render(path)


def test_json_step_writes_one_structured_entry(tmp_path: Path) -> None:
    files = build(tmp_path)
    logs = json.loads(files["logs.json"])
    rec = [e for e in logs if "jsonPayload" in e and e["resource"]["type"] == "k8s_container"
           and e["jsonPayload"].get("logger") == "absl"]
    assert len(rec) == 1
    e = rec[0]
    assert "textPayload" not in e and e["severity"] == "ERROR"
    assert e["logName"].endswith("/logs/stderr")
    assert e["jsonPayload"]["message"] == "save failed\nsecond line"
    assert e["jsonPayload"]["logger"] == "absl" and "severity" not in e["jsonPayload"]
    assert e["jsonPayload"]["exc_info"].endswith('ValueError: bad "thing" in js-json')
    assert e["jsonPayload"]["extra"] == {"step": 12, "dir": "gs://proj-json-ckpt"}
    exp = yaml.safe_load(files["expected.yaml"])
    assert exp["evidence"] == [e["insertId"], e["insertId"]]


def test_client_command_env_and_image_base(tmp_path: Path) -> None:
    pods = json.loads(build(tmp_path)["pods.json"])["items"]
    head = next(p for p in pods if "pathways-head" in p["metadata"]["name"])
    client = next(c for c in head["spec"]["containers"] if c["name"] == "jax-tpu")
    assert client["command"][-1] == "python3 train.py --ckpt_dir=gs://proj-json-ckpt/js-json"
    assert {"name": "JAX_COMPILATION_CACHE_DIR", "value": "gs://proj-json-cache/xla"} in client["env"]
    images = {c["image"] for c in head["spec"]["initContainers"]}
    assert "us-docker.pkg.dev/cloud-tpu-v2-releases/pathways/server:jax-0.8.1" in images
    assert "us-docker.pkg.dev/cloud-tpu-v2-releases/pathways/proxy_server:jax-0.8.1" in images


def test_json_step_field_is_a_number(tmp_path: Path) -> None:
    logs = json.loads(build(tmp_path)["logs.json"])
    rec = next(e for e in logs if "jsonPayload" in e and e["jsonPayload"].get("logger") == "trainer")
    step = rec["jsonPayload"]["step"]
    assert isinstance(step, int) and step > 0
    assert rec["jsonPayload"]["message"] == f"step {step}" and rec["jsonPayload"]["note"] == f"at {step}"
