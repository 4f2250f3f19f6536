"""CI smoke test: start `pathways-workload mcp` on stdio with the real MCP client, list the tools, call diagnose
(text and structured content; the client checks the latter against the declared output schema), read the version.

    python .ci/mcp_smoke.py PATH/TO/pathways-workload FIXTURE_DIR
"""

from __future__ import annotations

import json
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def smoke(command: str, case: str) -> None:
    with anyio.fail_after(120):
        async with Client(StdioServerParameters(command=command, args=["mcp"])) as c:
            names = [t.name for t in (await c.list_tools()).tools]
            assert "diagnose" in names and "explain_class" in names, names
            r = await c.call_tool("diagnose", {"replay": case})
            assert not r.is_error, r.content
            assert json.loads(r.content[0].text)["failure_class"] == "host_oom"
            assert r.structured_content["failure_class"] == "host_oom", r.structured_content  # checked by the client
            version = c.server_info.version if c.server_info else ""
            assert version, "server_info.version is empty"
    print(f"mcp: {len(names)} tools, diagnose OK, server version {version}")


if __name__ == "__main__":
    anyio.run(smoke, *sys.argv[1:3])
