"""Anthropic tool definitions from the one registry: the model sees exactly the registry's names and schemas."""

from __future__ import annotations

from pathways_workload.skill.ask import tool_definition

from .registry import Tool, registry

__all__ = ["tool_definition", "tool_definitions"]


def tool_definitions(tools: dict[str, Tool] | None = None) -> list[dict]:
    """Every registry tool, in registry order; the last one carries a cache marker so the prefix is cached."""
    defs = [tool_definition(t) for t in (tools or registry()).values()]
    if defs:
        defs[-1] = {**defs[-1], "cache_control": {"type": "ephemeral"}}
    return defs
