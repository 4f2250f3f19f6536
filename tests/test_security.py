"""Security: crafted names are escaped in every filter, planted secrets never reach an output or the model, the code
cannot change the cluster or run what a log says, and the documented IAM roles match the calls the code makes."""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import anthropic
import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client

from pathways_workload.skill.ask import ask
from pathways_workload.cli import main
from pathways_workload.skill.errors import InputError
from pathways_workload.skill.reading.query import Compare, parse
from pathways_workload.skill.reading.evaluate import compile_filter
from pathways_workload.skill.understanding.queries import Scope, node_queries, workload_queries
from tests.conftest import FIXTURES, ROOT
from tests.fakes.anthropic_server import FakeAnthropic, answer_turn
from pathways_workload.tools.mcp_server import build_server
from pathways_workload.tools.registry import registry

CASE = FIXTURES / "case-001"
JOBSET_PATH = ("labels", "k8s-pod/jobset_sigs_k8s_io/jobset-name")

# -- crafted names reach filters only as literals -----------------------------------------------------------------

CRAFTED = ['x" OR resource.type="k8s_node', 'a\\" OR "', "a\nOR severity>=DEFAULT", 'name") OR ("', "\\", '"',
           "-- comment", "x\u2028y", 'lm8b-pt-r14" OR labels."k8s-pod/jobset_sigs_k8s_io/jobset-name":"']


def _compares(node, out):
    if isinstance(node, Compare):
        out.append(node)
    for child in getattr(node, "items", ()) or ([node.item] if hasattr(node, "item") else []):
        _compares(child, out)
    return out


def _queries(name: str):
    scope = Scope(jobset=name, start_ns=1_700_000_000 * 10**9, end_ns=1_700_003_600 * 10**9, namespace=name,
                  cluster=name)
    return workload_queries(scope) + node_queries(scope, [name, name + "-2"])


def _check_literal(name: str) -> None:
    other = {"labels": {JOBSET_PATH[1]: "someone-else"}, "resource": {"type": "k8s_node", "labels": {}},
             "severity": "ERROR", "textPayload": "FATAL", "timestamp": "2023-11-14T22:30:00Z",
             "logName": "projects/p/logs/events"}
    for q in _queries(name):
        node = parse(q.filter)  # never a syntax error, whatever the name holds
        label_values = [c.value for c in _compares(node, []) if c.path == JOBSET_PATH]
        assert all(v == name for v in label_values), (q.name, label_values)
        assert not compile_filter(q.filter)(other), q.name  # the name cannot widen the query to other workloads


@pytest.mark.parametrize("name", CRAFTED)
def test_crafted_jobset_names_stay_literals(name):
    _check_literal(name)


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=40))
def test_any_jobset_name_stays_a_literal(name):
    _check_literal(name)


def test_query_logs_window_cannot_widen_the_filter():
    tool = registry()["query_logs"]
    narrow = tool.call({"replay": str(CASE), "filter": 'textPayload:"!!!! FATAL ERROR"'})
    assert narrow["matched"] == 1
    crafted = tool.call({"replay": str(CASE), "filter": 'textPayload:"!!!! FATAL ERROR"',
                         "start": '2020-01-01T00:00:00Z" OR textPayload:"'})
    assert "error" in crafted and "start" in crafted["error"]["message"]


def test_query_logs_filter_errors_are_results():
    out = registry()["query_logs"].call({"replay": str(CASE), "filter": 'textPayload="a\nb" OR ("'})
    assert out["error"]["code"] == "bad_filter" and "\n" not in out["error"]["message"]


@pytest.mark.parametrize("field, value", [("jobset", "x,app=other"), ("jobset", "../../secrets"),
                                          ("namespace", "default/../kube-system"), ("jobset", 'a" OR "b')])
def test_live_names_must_be_kubernetes_names(field, value):
    from pathways_workload.skill.diagnose_live import diagnose_live

    args = dict(project="p", location="l", cluster="c", jobset="js", namespace="default", no_kube=True,
                logging_endpoint="http://127.0.0.1:9")
    args[field] = value
    with pytest.raises(InputError, match=field):
        diagnose_live(**args)


# -- secrets are redacted everywhere ---------------------------------------------------------------------------

SECRETS = {
    "oauth": "ya29.a0AfH6SMBx3kQ9zLmN0pQrStUvWxYz1234567890abcdef",
    "api_key": "AIzaSyD" + "Qq7Lm2Np4Rs6Tu8Vw0Xy1Za3Bc5De7Fg",
    "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----",
    "signed_url": "https://storage.googleapis.com/halcyon-ckpt/step_1000?X-Goog-Algorithm=GOOG4-RSA-SHA256"
                  "&X-Goog-Credential=trainer%40halcyon.iam.gserviceaccount.com&X-Goog-Signature=8f3a9c0d1e2b4f5a6c7d8e9f",
    "env_password": "DB_PASSWORD=hunter2-very-secret",
    "json_password": '"password": "s3cr3t-json-pw"',
}
# the part of each secret that must never appear
MARKERS = ["a0AfH6SMBx3kQ9zLmN0pQrStUvWxYz", "Qq7Lm2Np4Rs6Tu8Vw0Xy1Za3Bc5De7Fg", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
           "8f3a9c0d1e2b4f5a6c7d8e9f", "hunter2-very-secret", "s3cr3t-json-pw", "trainer%40halcyon"]


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    """case-001 with secrets in the cited FATAL line, an env dump, a JSON log line, an event and the JobSet."""
    d = tmp_path_factory.mktemp("planted") / "case"
    shutil.copytree(CASE, d)
    entries = json.loads((d / "logs.json").read_text())
    fatal = next(e for e in entries if "FATAL ERROR" in e.get("textPayload", ""))
    fatal["textPayload"] += f" token={SECRETS['oauth']} key={SECRETS['api_key']} url={SECRETS['signed_url']}"
    env = json.loads(json.dumps(fatal))
    env["insertId"] = "planted-env-dump"
    env["textPayload"] = ("Environment: HOME=/root " + SECRETS["env_password"] + f" GOOGLE_API_KEY={SECRETS['api_key']}\n"
                          + SECRETS["private_key"] + "\nFATAL ERROR planted")
    js = json.loads(json.dumps(fatal))
    js["insertId"] = "planted-json-line"
    js.pop("textPayload")
    js["jsonPayload"] = {"message": "FATAL ERROR planted: {" + SECRETS["json_password"] + "}",
                         "password": "s3cr3t-json-pw", "auth": f"Authorization: Bearer {SECRETS['oauth']}"}
    (d / "logs.json").write_text(json.dumps(entries + [env, js], indent=2))
    jobset = json.loads((d / "jobset.json").read_text())
    for c in jobset["status"]["conditions"]:
        c["message"] += f" (see {SECRETS['signed_url']})"
    (d / "jobset.json").write_text(json.dumps(jobset))
    events = json.loads((d / "events.json").read_text())
    for ev in events["items"][:5]:
        ev["message"] += f" {SECRETS['env_password']} bearer token={SECRETS['oauth']}"
    (d / "events.json").write_text(json.dumps(events))
    return d


def _leaks(text: str) -> list[str]:
    return [m for m in MARKERS if m in text]


def _tool_calls(folder: Path) -> list[tuple[str, dict]]:
    r = str(folder)
    return [("diagnose", {"replay": r}), ("get_workload", {"replay": r}), ("timeline", {"replay": r}),
            ("list_events", {"replay": r}), ("query_logs", {"replay": r, "filter": 'SEARCH("FATAL")', "limit": 100}),
            ("query_logs", {"replay": r, "filter": 'insertId="planted-json-line"'}),
            ("explain_class", {"failure_class": "tpu_hardware_failure"})]


@pytest.mark.parametrize("fmt", ["json", "markdown"])
def test_cli_output_is_redacted(planted, fmt, capsys):
    assert main(["diagnose", "--replay", str(planted), "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert "tpu_hardware_failure" in out or "TPU" in out
    assert not _leaks(out)


def test_cli_tool_commands_are_redacted(planted, capsys):
    assert main(["query-logs", "--replay", str(planted), "--filter", 'SEARCH("planted")']) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["matched"] == 2 and not _leaks(out)


def test_every_tool_result_is_redacted(planted):
    tools = registry()
    for name, args in _tool_calls(planted):
        out = json.dumps(tools[name].call(args))
        assert "error" not in json.loads(out), (name, out[:300])
        assert not _leaks(out), (name, _leaks(out))


def test_mcp_results_are_redacted(planted):
    async def go():
        async with Client(build_server()) as c:
            return [await c.call_tool(name, args) for name, args in _tool_calls(planted)]

    for r in anyio.run(go):
        assert not r.is_error
        assert not _leaks(r.content[0].text)


def test_what_the_model_receives_is_redacted(planted):
    from pathways_workload.skill.api import diagnose_replay

    base = diagnose_replay(planted).to_json_dict()
    usage = {"input_tokens": 10, "output_tokens": 5}

    def turn(i, content, stop):
        return {"id": f"m{i}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "stop_reason": stop, "stop_sequence": None, "usage": usage, "content": content}

    calls = [{"type": "tool_use", "id": f"t{i}", "name": n, "input": {k: v for k, v in a.items() if k != "replay"}}
             for i, (n, a) in enumerate(_tool_calls(planted))]
    turns = [turn(1, calls, "tool_use"),
             answer_turn(base, text="Done.")]
    with FakeAnthropic(turns) as fake:
        r = ask("Why did it fail?", tools=registry(), replay=planted, now="2026-11-21T00:00:00Z",
                client=anthropic.Anthropic(api_key="t", base_url=fake.url, max_retries=0))
    sent = json.dumps(fake.requests)
    assert "FATAL ERROR" in sent and "[REDACTED" in sent  # the evidence went, its secrets did not
    assert not _leaks(sent), _leaks(sent)
    assert r.fallback is None and not _leaks(json.dumps(r.to_json_dict()))


def _one_turn(folder: Path) -> list[dict]:
    from pathways_workload.skill.api import diagnose_replay

    base = diagnose_replay(folder).to_json_dict()
    return [answer_turn(base)]


def test_a_secret_in_the_question_is_redacted_by_the_cli(monkeypatch, capsys):
    with FakeAnthropic(_one_turn(CASE)) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        rc = main(["ask", f"why? my key is {SECRETS['api_key']}", "--replay", str(CASE), "--format", "json"])
    assert rc == 0 and not _leaks(json.dumps(fake.requests)) and not _leaks(capsys.readouterr().out)


def test_a_secret_in_the_question_is_redacted_by_ask():
    with FakeAnthropic(_one_turn(CASE)) as fake:
        ask(f"why? my key is {SECRETS['api_key']}", tools=registry(), replay=CASE,
            client=anthropic.Anthropic(api_key="t", base_url=fake.url, max_retries=0))
    assert not _leaks(json.dumps(fake.requests))


# -- read-only, and nothing executes log content ------------------------------------------------------------------

SOURCES = sorted(p for d in ("skill", "tools") for p in (ROOT / d).rglob("*.py"))
KUBE_READS = re.compile(r"^(list|read|get)_[a-z_]+$")
MUTATING = re.compile(r"^(create|patch|delete|replace|connect)_")


def _calls(path: Path):
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Call):
            f = node.func
            yield node, f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)


def _kube_api_methods() -> set[str]:
    """Methods of CoreV1Api/CustomObjectsApi objects the Kubernetes source passes to its GET helpers."""
    tree = ast.parse((ROOT / "skill/reading/sources/kube.py").read_text())
    return {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
            and n.value.id in ("core", "custom")}


def test_no_mutating_kubernetes_verbs():
    found = [(p.relative_to(ROOT), name) for p in SOURCES for _n, name in _calls(p) if name and MUTATING.match(name)]
    assert not found
    methods = _kube_api_methods()
    assert methods and all(KUBE_READS.match(m) for m in methods), methods


def test_no_command_execution():
    banned_modules = {"subprocess", "pty", "pexpect", "shlex"}
    for p in SOURCES:
        tree = ast.parse(p.read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = {a.name.split(".")[0] for a in node.names} | {(getattr(node, "module", "") or "").split(".")[0]}
                assert not names & banned_modules, (p, names & banned_modules)
        for node, name in _calls(p):
            assert name not in ("eval", "exec", "system", "popen", "spawnv", "execv", "execvp", "startfile"), (p, name)
            if name == "compile" and isinstance(node.func, ast.Name):
                raise AssertionError(f"{p}: compile()")


# -- least privilege, documented ------------------------------------------------------------------------------------

def _documented_calls() -> tuple[set[str], set[str]]:
    text = (ROOT / "docs/security.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    calls = {re.match(r"\| `([^`]+)`", r).group(1) for r in rows}
    roles = set(re.findall(r"`(roles/[a-zA-Z.]+)`", text))
    return calls, roles


def test_documented_api_calls_match_the_code():
    calls, roles = _documented_calls()
    live = (ROOT / "skill/reading/sources/cloud_logging.py").read_text()
    code = {f"kubernetes.{m}" for m in _kube_api_methods()}
    code |= {"logging.entries.list"} if 'path="/entries:list"' in live else set()
    assert calls == code
    assert roles == {"roles/logging.viewer", "roles/container.viewer"}
    messages = (ROOT / "skill/reading/sources/kube.py").read_text() + live
    assert all(role in messages for role in roles)  # the errors name the same roles
