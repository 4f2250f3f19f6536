"""The MCP server: same tools as the registry, same JSON as the CLI, in-process and over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import FIXTURES, ROOT
from pathways_workload.tools.mcp_server import build_server
from pathways_workload.tools.registry import registry

CASE = str(FIXTURES / "case-001")


def _in_process(fn):
    async def main():
        async with Client(build_server()) as c:
            return await fn(c)

    return anyio.run(main)


def test_list_tools_are_the_registry():
    async def go(c):
        return (await c.list_tools()).tools

    tools = _in_process(go)
    assert [t.name for t in tools] == list(registry())
    reg = registry()
    for t in tools:
        assert t.description == reg[t.name].description
        assert t.input_schema["properties"] == reg[t.name].input_schema()["properties"]
        assert t.annotations.read_only_hint is True and t.annotations.destructive_hint is False


def test_diagnose_over_mcp_equals_cli():
    async def go(c):
        return await c.call_tool("diagnose", {"replay": CASE})

    r = _in_process(go)
    assert not r.is_error
    over_mcp = json.loads(r.content[0].text)
    p = subprocess.run([sys.executable, "-m", "pathways_workload", "diagnose", "--replay", CASE, "--format", "json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    cli = json.loads(p.stdout)
    assert over_mcp["failure_class"] == cli["failure_class"] and over_mcp["status"] == cli["status"]
    assert [e["id"] for e in over_mcp["evidence"]] == [e["id"] for e in cli["evidence"]]
    over_mcp.pop("budget"), cli.pop("budget")
    assert over_mcp == cli


def test_errors_come_back_as_results():
    async def go(c):
        bad_filter = await c.call_tool("query_logs", {"replay": CASE, "filter": "((("})
        bad_class = await c.call_tool("explain_class", {"failure_class": "nope"})
        missing = await c.call_tool("get_workload", {"replay": "/nonexistent"})
        return bad_filter, bad_class, missing

    for r in _in_process(go):
        assert r.is_error
        error = json.loads(r.content[0].text)["error"]
        assert set(error) == {"code", "message", "hint"} and "\n" not in error["message"]


@pytest.mark.parametrize("name, args, code, words", [
    ("query_logs", {"replay": CASE, "filter": "x", "order": "up"}, "invalid_argument",
     "order must be one of: asc, desc (got 'up')"),
    ("query_logs", {"replay": CASE, "filter": "x", "limit": 0}, "invalid_argument", "limit must be at least 1"),
    ("query_logs", {"replay": CASE, "filter": "x", "limit": "many"}, "invalid_argument", "limit must be a whole number"),
    ("query_logs", {"replay": CASE}, "invalid_argument", "filter is required"),
    ("diagnose", {"replay": CASE, "folder": "x", "verbose": True}, "invalid_argument", "unknown arguments: folder, verbose"),
    ("explain_class", {"failure_class": "host_oom", "replay": CASE}, "invalid_argument", "unknown argument: replay"),
    ("list_events", {"replay": CASE, "warnings_only": "maybe"}, "invalid_argument", "warnings_only must be true or false"),
])
def test_bad_arguments_are_refused_in_words(name, args, code, words):
    async def go(c):
        return await c.call_tool(name, args)

    r = _in_process(go)
    error = json.loads(r.content[0].text)["error"]
    assert r.is_error and error["code"] == code and words in error["message"], error
    for jargon in ("pattern", "^(", "pydantic", "http", "Input should", "Field required", "Extra inputs"):
        assert jargon not in error["message"], jargon


def test_all_tools_callable_over_mcp():
    async def go(c):
        out = {}
        for name, args in (("get_workload", {"replay": CASE}), ("timeline", {"replay": CASE}),
                           ("list_events", {"replay": CASE, "warnings_only": True}),
                           ("explain_class", {"failure_class": "tpu_hardware_failure"}),
                           ("query_logs", {"replay": CASE, "filter": "severity>=ERROR", "limit": 3})):
            r = await c.call_tool(name, args)
            assert not r.is_error, (name, r.content)
            out[name] = json.loads(r.content[0].text)
        return out

    out = _in_process(go)
    assert out["query_logs"]["returned"] <= 3
    assert out["timeline"]["failure_class"] == "tpu_hardware_failure"


def test_unknown_tool_over_mcp_is_an_error():
    async def go(c):
        try:
            r = await c.call_tool("run_shell", {"command": "id"})
        except Exception as err:  # noqa: BLE001 - either an error result or a protocol error is a refusal
            return str(err)
        return r

    r = _in_process(go)
    assert isinstance(r, str) or r.is_error


def test_stdio_server_lists_tools():
    params = StdioServerParameters(command=sys.executable, args=["-m", "pathways_workload", "mcp"], cwd=str(ROOT),
                                   env={**os.environ, "PYTHONPATH": str(ROOT)})

    async def main():
        with anyio.fail_after(60):
            async with Client(params) as c:
                tools = (await c.list_tools()).tools
                r = await c.call_tool("explain_class", {"failure_class": "host_oom"})
                return [t.name for t in tools], json.loads(r.content[0].text)

    names, explained = anyio.run(main)
    assert names == list(registry())
    assert explained["failure_class"] == "host_oom"


def test_an_absent_jobset_is_an_error_result():
    async def go(c):
        return await c.call_tool("diagnose", {"replay": CASE, "jobset": "llama-trainx"})

    r = _in_process(go)
    assert r.is_error and "JobSets present" in r.content[0].text


def test_server_reports_the_package_version():
    from pathways_workload.skill import __version__

    async def go(c):
        return c.server_info

    for mode in ("auto", "legacy"):
        async def main(mode=mode):
            async with Client(build_server(), mode=mode) as c:
                return await go(c)

        info = anyio.run(main)
        assert info.name == "pathways-workload" and info.version == __version__, (mode, info)


def test_results_are_structured_and_diagnose_declares_the_diagnosis_schema():
    import jsonschema

    from pathways_workload.tools.mcp_server import diagnosis_schema

    async def go(c):
        tools = {t.name: t for t in (await c.list_tools()).tools}
        diag = await c.call_tool("diagnose", {"replay": CASE})  # the client validates it against the output schema
        events = await c.call_tool("list_events", {"replay": CASE, "warnings_only": True})
        bad = await c.call_tool("diagnose", {"replay": CASE, "jobset": "llama-trainx"})
        return tools, diag, events, bad

    tools, diag, events, bad = _in_process(go)
    assert tools["diagnose"].output_schema == diagnosis_schema()
    assert all(t.output_schema is None for name, t in tools.items() if name != "diagnose")
    assert diag.structured_content == json.loads(diag.content[0].text)  # the text stays for text-only clients
    jsonschema.validate(diag.structured_content, diagnosis_schema())
    assert events.structured_content == json.loads(events.content[0].text)
    assert bad.is_error and bad.structured_content["error"]["code"] == "unknown_jobset"
