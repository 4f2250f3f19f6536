"""The smaller points of issue 38: what a user meets at the edges of the CLI and the report."""

from __future__ import annotations

import json

import pytest

from pathways_workload.cli import main
from pathways_workload.skill.telling.render import render

from conftest import FIXTURES


@pytest.mark.parametrize("args", [["--output", "{tmp}/report.yaml"], ["--output", "{tmp}/report"],
                                  ["--jobset", ""], ["--jobset", "  "]],
                         ids=["unknown extension", "no extension", "empty jobset", "blank jobset"])
def test_bad_output_name_or_empty_jobset_is_one_line(args, tmp_path, capsys):
    argv = ["diagnose", "--replay", str(FIXTURES / "case-001")] + [a.format(tmp=tmp_path) for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and (".txt .md .json .html" in err or "--jobset is empty" in err), err
    assert not list(tmp_path.iterdir())  # nothing written in a format nobody asked for


def test_an_explicit_format_writes_any_file_name(tmp_path):
    out = tmp_path / "report.yaml"
    assert main(["diagnose", "--replay", str(FIXTURES / "case-001"), "--output", str(out), "--format", "json"]) == 0
    assert json.loads(out.read_text())["failure_class"]


def _one_entry_export(tmp_path, text: str):
    logs = json.loads((FIXTURES / "case-001" / "logs.json").read_text())
    e = next(e for e in logs if (e.get("resource") or {}).get("type") == "k8s_container"
             and "worker" in e["resource"]["labels"]["pod_name"])
    (tmp_path / "logs.json").write_text(json.dumps([{**e, "textPayload": text, "severity": "INFO"}]))
    return tmp_path


def test_a_one_entry_export_is_described_as_what_it_is(tmp_path, capsys):
    folder = _one_entry_export(tmp_path, "I1120 10:00:00.000000 1 main.cc:1] hello")
    assert main(["diagnose", "--replay", str(folder), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert not any(g.startswith("no container logs of JobSet") for g in d["data_gaps"])
    assert any(g.startswith("the one log entry read is not a container line of JobSet") for g in d["data_gaps"])
    assert main(["diagnose", "--replay", str(folder), "--format", "text"]) == 0
    assert "1 log entry read" in capsys.readouterr().out


def test_a_long_filter_is_cut_in_the_terminal_and_whole_in_json(replayed):
    d = replayed.diagnosis(FIXTURES / "case-201")
    long = [c.filter for c in d.next_checks if c.filter and len(c.filter) > 400]
    assert long, "case-201's next checks carry a filter of over 1,500 characters"
    text = render(d, "text", width=80)
    assert long[0] not in text and long[0][:60] in text and f"{len(long[0]):,} characters" in text
    assert "https://console.cloud.google.com/logs/query;query=" in text
    assert long[0] in [c["filter"] for c in json.loads(render(d, "json"))["next_checks"]]
    assert "tpu_device_busy remains." in text  # one class remains, several remain
