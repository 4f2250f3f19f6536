"""One registry of agent-callable tools; the CLI, Anthropic tool use and MCP all expose these same functions."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError

from skill.errors import PathwaysWorkloadError
from skill.redact import redact_obj


@dataclass(frozen=True)
class Tool:
    """A typed, read-only tool: a pydantic input model and a function whose docstring the model reads."""

    name: str
    input: type[BaseModel]
    fn: Callable[[BaseModel], dict]

    @property
    def description(self) -> str:
        return inspect.cleandoc(self.fn.__doc__ or self.name)

    def input_schema(self) -> dict:
        schema = self.input.model_json_schema()
        schema.pop("title", None)
        return schema

    def call(self, args: dict) -> dict:
        """Run the tool; a bad argument or a failed read comes back as {"error": ...}, never as an exception."""
        try:
            params = self.input.model_validate(args)
        except ValidationError as err:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}" for e in err.errors())
            return {"error": f"invalid arguments for {self.name}: {problems}"}
        try:
            # Redacted here, once for every surface (CLI, MCP, the model): no tool can forget a field.
            return redact_obj(self.fn(params))
        except PathwaysWorkloadError as err:
            return {"error": str(err), "tool": self.name}
        except Exception as err:  # noqa: BLE001 - the one boundary where any failure becomes a result the model can read
            return {"error": f"{self.name} failed unexpectedly: {type(err).__name__}: {err}", "tool": self.name}


def registry() -> dict[str, Tool]:
    from . import diagnose, logs, more

    tools = [
        Tool("diagnose", diagnose.DiagnoseInput, diagnose.diagnose),
        Tool("query_logs", logs.QueryLogsInput, logs.query_logs),
        Tool("list_events", logs.ListEventsInput, logs.list_events),
        Tool("get_workload", more.GetWorkloadInput, more.get_workload),
        Tool("timeline", more.TimelineInput, more.timeline),
        Tool("explain_class", more.ExplainClassInput, more.explain_class),
    ]
    return {t.name: t for t in tools}
