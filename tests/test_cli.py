"""The command line: exit codes, formats and one-line errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from pathways_workload.cli import main

from conftest import FIXTURES

CASE = str(FIXTURES / "case-004")


def test_diagnose_json(capsys):
    assert main(["diagnose", "--replay", CASE, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["failure_class"] == "host_oom" and doc["schema"] == "pathways-workload.diagnosis/v2"


def test_diagnose_markdown(capsys):
    assert main(["diagnose", "--replay", CASE, "--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("# host_oom")


def test_healthy_run_exits_zero(capsys):
    assert main(["diagnose", "--replay", str(FIXTURES / "case-015"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "healthy"


def test_query_logs_and_bad_filter(capsys):
    assert main(["query-logs", "--replay", CASE, "--filter", 'textPayload:"OOM"', "--limit", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["returned"] <= 1 and out["matched"] >= out["returned"]
    assert main(["query-logs", "--replay", CASE, "--filter", "a=("]) == 2
    assert "invalid filter" in json.loads(capsys.readouterr().out)["error"]["message"]


def test_list_events(capsys):
    assert main(["list-events", "--replay", CASE, "--warnings-only"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["events"] and all(e["type"] == "Warning" for e in out["events"])


def test_console_script_without_traceback(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pathways_workload", "diagnose", "--replay", str(tmp_path / "missing")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "no such folder" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("command", ["diagnose", "get-workload", "timeline", "list-events"])
def test_a_jobset_absent_from_the_data_is_an_error_with_a_suggestion(command, capsys):
    argv = [command, "--replay", CASE, "--jobset", "mm-dpo-0918"] + (["--format", "markdown"] if command == "diagnose"
                                                                      else [])
    assert main(argv) == 2
    out = capsys.readouterr()
    text = out.err + out.out
    assert "'mm-dpo-0918' is not in the data" in text and "did you mean 'mm-dpo-0917'" in text
    assert "JobSets present: mm-dpo-0917" in text


def test_the_jobset_present_is_accepted(capsys):
    assert main(["diagnose", "--replay", CASE, "--jobset", "mm-dpo-0917", "--format", "json"]) == 0


ERROR_CASES = [  # argv, exit code, error code, words the message must hold
    (["diagnose", "--replay", "/nonexistent", "--format", "json"], 2, "bad_input", "no such folder"),
    (["diagnose", "--replay", CASE, "--jobset", "nope", "--format", "json"], 2, "unknown_jobset", "JobSets present"),
    (["diagnose", "--replay", CASE, "--at", "yesterday", "--format", "json"], 2, "bad_input", "RFC 3339"),
    (["diagnose", "--bogus", "--format", "json"], 2, "usage", "unrecognized arguments: --bogus"),
    (["diagnose", "--format=json", "--format", "yaml"], 2, "usage", "invalid choice"),
    (["query-logs", "--replay", CASE, "--filter", "a=("], 2, "bad_filter", "invalid filter"),
    (["query-logs", "--replay", CASE, "--filter", "x", "--limit", "0"], 2, "invalid_argument", "limit must be at least 1"),
    (["explain-class", "--failure-class", "host_om"], 2, "unknown_failure_class", "did you mean 'host_oom'"),
    (["list-events"], 2, "bad_input", "replay"),
]


@pytest.mark.parametrize("argv, rc, code, words", ERROR_CASES, ids=lambda x: x if isinstance(x, str) else None)
def test_json_errors_are_one_object_on_stdout(argv, rc, code, words, capsys):
    assert main(argv) == rc
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert set(doc) == {"error"} and set(doc["error"]) == {"code", "message", "hint"}
    assert doc["error"]["code"] == code and words in doc["error"]["message"], doc
    assert "\n" not in doc["error"]["message"] and "http" not in json.dumps(doc) and out.err == ""


def test_text_errors_are_one_line_on_stderr(capsys):
    assert main(["diagnose", "--replay", "/nonexistent", "--format", "markdown"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err == "pathways-workload: /nonexistent: no such folder\n"
    assert main(["diagnose", "--bogus"]) == 2
    err = capsys.readouterr().err
    assert err == "pathways-workload: unrecognized arguments: --bogus (see `pathways-workload --help`)\n"
    assert main(["diagnose", "--replay", "x", "--format", "yaml"]) == 2  # one line, not the usage block
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid choice: 'yaml'" in err and "diagnose --help" in err


def test_output_file_and_the_pipe_note(tmp_path, capsys):
    from conftest import FIXTURES

    out = tmp_path / "report.html"
    assert main(["diagnose", "--replay", str(FIXTURES / "case-001"), "--output", str(out)]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>") and "wrote" in capsys.readouterr().err
    assert main(["diagnose", "--replay", str(FIXTURES / "case-001")]) == 0  # stdout is captured: not a terminal
    got = capsys.readouterr()
    assert got.out.lstrip().startswith("{") and "output is JSON" in got.err
    assert main(["classes", "--format", "markdown", "--output", str(tmp_path / "c.md")]) == 0
    assert "tpu_hardware_failure" in (tmp_path / "c.md").read_text()
    capsys.readouterr()
    assert main(["diagnose", "--replay", str(FIXTURES / "case-001"), "--output", str(tmp_path)]) == 2  # a folder
    assert capsys.readouterr().err.count("\n") == 1


COMMANDS = ["diagnose", "query-logs", "list-events", "get-workload", "timeline", "explain-class", "classes", "mcp",
            "ask", "eval"]


def test_version(capsys):
    from pathways_workload import skill

    with pytest.raises(SystemExit) as end:
        main(["--version"])
    assert end.value.code == 0 and capsys.readouterr().out == f"pathways-workload {skill.__version__}\n"


def test_every_command_is_listed_with_an_example(capsys):
    from pathways_workload.skill.cli import EXAMPLES

    assert sorted(EXAMPLES) == sorted(COMMANDS)
    with pytest.raises(SystemExit):
        main(["--help"])
    top = capsys.readouterr().out
    assert all(f"    {c}" in top for c in COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_a_description_an_example_and_one_metavar_per_kind(command, capsys):
    with pytest.raises(SystemExit) as end:
        main([command, "--help"])
    text = capsys.readouterr().out
    assert end.value.code == 0
    usage, description = text.split("\n\n")[:2]
    assert usage.startswith(f"usage: pathways-workload {command}") and len(description) > 30
    assert f"example:\n  pathways-workload {command}" in text
    for word in ("REPLAY", "JOBSET", "FAILURE_CLASS", "WARNINGS_ONLY"):
        assert word not in text, word
    assert not re.search(r"--(start|end|at) T\b", text)
    if "--replay" in text:
        assert "--replay DIR" in text and "--jobset NAME" in text


@pytest.mark.parametrize("command, shown", [
    ("diagnose", ["{text,markdown,json,html}", "(default: 2h)", "(default: default)", "--at TIME", "--start TIME"]),
    ("query-logs", ["{asc,desc}", "(default: asc)", "(default: 50)", "--filter FILTER"]),
    ("list-events", ["(default: 100)", "--warnings-only"]),
    ("explain-class", ["--failure-class ID"]),
    ("classes", ["{markdown,json}", "(default: markdown)", "--output FILE"]),
    ("ask", ["{markdown,json}", "(default: 8)", "--max-steps N", "--output FILE"]),
    ("eval", ["{rules,llm}", "{json,markdown,table}", "(default: table)"]),
])
def test_choices_and_defaults_are_shown(command, shown, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())  # as read, whatever the terminal's width
    for words in shown:
        assert words in text, words
    assert "(default: None)" not in text and "(default: False)" not in text


def test_classes_lists_the_taxonomy(capsys):
    from pathways_workload.skill.catalog import CLASSES

    from conftest import ROOT

    assert main(["classes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines] == [[c.id, c.phase] for c in CLASSES]
    assert main(["classes", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["id"] for r in rows} == set(re.findall(r"^\| `([a-z_]+)` \|", (ROOT / "docs" / "taxonomy.md").read_text(),
                                                     re.M))
    assert all(r["title"] and "\n" not in r["title"] for r in rows)


def test_eval_finds_the_bundled_fixtures_from_anywhere(tmp_path, monkeypatch):
    from pathways_workload.evals.cli import bundled_fixtures

    from conftest import ROOT

    monkeypatch.chdir(tmp_path)
    assert bundled_fixtures() == ROOT / "fixtures"
