"""What the layers above skill/ lend it, passed in by the composition root (pathways_workload.cli): the command line's
tool commands, `mcp` and `eval` (Wiring), and the tools the agent loop calls (AgentTool). skill/ imports nothing from
tools/ or evals/."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel


@dataclass(frozen=True)
class Wiring:
    """What the layers above skill/ lend the command line, passed in by the composition root (pathways_workload.cli):
    skill/ imports nothing from tools/ or evals/. Without it only the commands of skill/ itself exist (diagnose,
    classes)."""

    tools: Callable[[], Mapping] | None = None  # the tool registry: the tool commands, `ask`, `mcp`
    mcp: Callable[[], int] | None = None  # serve the tools over MCP on stdio
    eval_register: Callable[[], Callable | None] | None = None  # evals.cli.register, imported only for `eval`

    def registry(self) -> Mapping:
        return self.tools() if self.tools else {}


class AgentTool(Protocol):
    """What the loop needs of a tool (tools.registry.Tool is one): its name, what the model reads, its input model and
    a call that returns a JSON result. The caller passes them in: skill/ never imports tools/."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def input(self) -> type[BaseModel]: ...

    def input_schema(self) -> dict: ...

    def call(self, args: dict) -> dict: ...


def tool_definition(tool: AgentTool) -> dict:
    """One Messages-API tool definition: name, description (the docstring) and the pydantic JSON Schema."""
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema()}
