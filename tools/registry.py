"""One registry of agent-callable tools; the CLI, Anthropic tool use and MCP all expose these same functions."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any, cast
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError

from pathways_workload.skill.errors import PathwaysWorkloadError, error_object
from pathways_workload.skill.redact import redact_obj


@dataclass(frozen=True)
class Tool:
    """A typed, read-only tool: a pydantic input model and a function whose docstring the model reads."""

    name: str
    input: type[BaseModel]
    fn: Callable[[Any], dict]  # takes an instance of `input`

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
            return error_object("invalid_argument", f"{self.name}: " + "; ".join(describe(err, self.input)),
                                "arguments: " + ", ".join(self.input.model_fields))
        try:
            # Redacted here, once for every surface (CLI, MCP, the model): no tool can forget a field.
            return _redacted(self.fn(params))
        except PathwaysWorkloadError as err:
            return _redacted(err.as_dict())
        except Exception as err:  # noqa: BLE001 - the one boundary where any failure becomes a result the model can read
            return _redacted(error_object("internal", f"{self.name} failed unexpectedly: {type(err).__name__}: {err}",
                                          "a bug: please report it with the arguments"))


def _redacted(result: dict) -> dict:
    return cast(dict, redact_obj(result))  # redaction keeps a dict a dict


def _got(value: object) -> str:
    text = repr(value)
    return f" (got {text[:60]}{'…' if len(text) > 60 else ''})"


def describe(err: ValidationError, model: type[BaseModel]) -> list[str]:
    """pydantic's errors in the user's words: the field, what it accepts (allowed values, bounds), what was given;
    never a regex, a pydantic type name or a documentation URL."""
    unknown = [str(e["loc"][0]) for e in err.errors() if e["type"] == "extra_forbidden" and e["loc"]]
    out = [f"unknown argument{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}"] if unknown else []
    for e in err.errors():
        field = ".".join(str(p) for p in e["loc"]) or "arguments"
        kind, ctx, value = e["type"], e.get("ctx") or {}, e.get("input")
        info = model.model_fields.get(str(e["loc"][0])) if e["loc"] else None
        choices = [a for a in typing.get_args(info.annotation) if isinstance(a, str)] if info else []
        if kind == "extra_forbidden":
            continue
        if kind == "missing":
            out.append(f"{field} is required")
        elif kind == "literal_error" and choices:
            out.append(f"{field} must be one of: {', '.join(choices)}{_got(value)}")
        elif kind in ("int_parsing", "int_type", "int_from_float"):
            out.append(f"{field} must be a whole number{_got(value)}")
        elif kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
            bound = {"greater_than_equal": "at least", "greater_than": "more than", "less_than_equal": "at most",
                     "less_than": "less than"}[kind]
            out.append(f"{field} must be {bound} {next(iter(ctx.values()))}{_got(value)}")
        elif kind in ("bool_parsing", "bool_type"):
            out.append(f"{field} must be true or false{_got(value)}")
        elif kind in ("string_type", "string_unicode"):
            out.append(f"{field} must be a string{_got(value)}")
        else:
            out.append(f"{field}: {e['msg']}{_got(value)}")
    return out


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
