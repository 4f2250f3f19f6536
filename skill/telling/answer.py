"""`ask`'s final answer: the `submit_diagnosis` tool, whose input schema is the Diagnosis contract, and its checks.

The input schema is the JSON Schema shipped in the package (skill/schema/diagnosis.schema.json, kept equal to the
pydantic model by a test), read at run time so a schema bump reaches the model without touching this module. What
the model submits is validated with the pydantic model and every id it cites must have appeared in a tool result of
the conversation; a rejection is one short line the model can act on.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from pydantic import ValidationError

from ..diagnosis import SCHEMA_ID, Diagnosis

FINAL_TOOL = "submit_diagnosis"
MAX_ERRORS_SHOWN = 4


@cache
def diagnosis_schema() -> dict:
    """The Diagnosis contract's JSON Schema, as the package ships it."""
    text = (resources.files("pathways_workload.skill.schema") / "diagnosis.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def submit_tool_definition() -> dict:
    """The Messages-API definition of the answer tool (a fresh dict: callers may add a cache marker)."""
    schema = json.loads(json.dumps(diagnosis_schema()))
    schema.pop("title", None)
    return {"name": FINAL_TOOL, "input_schema": schema, "description": (
        f"Submit your final answer: one complete `{SCHEMA_ID}` document (the shape of the `diagnose` result). "
        "Call it once, at the end, when your drill-down is done; calling it ends the conversation. It is validated "
        "against the contract, and every id it cites (evidence[].id, hypotheses[].evidence, timeline[].evidence) "
        "must appear in a tool result of this conversation. If it is rejected, the error says why: fix that and "
        "call it again. If the drill-down does not change the verdict, submit the deterministic diagnosis.")}


def _validation_problem(err: ValidationError) -> str:
    errors = err.errors(include_url=False, include_input=False)
    shown = [f"{'.'.join(str(p) for p in e['loc']) or 'document'}: {e['msg']}" for e in errors[:MAX_ERRORS_SHOWN]]
    more = f" (and {len(errors) - MAX_ERRORS_SHOWN} more)" if len(errors) > MAX_ERRORS_SHOWN else ""
    return f"not a valid {SCHEMA_ID} document: " + "; ".join(shown) + more


def check_answer(doc: object, seen_ids: set[str], known_classes: set[str]) -> tuple[Diagnosis | None, str | None]:
    """The submitted Diagnosis, or None and one line saying what is wrong with it."""
    if not isinstance(doc, dict):
        return None, f"the input must be a {SCHEMA_ID} object"
    if doc.get("schema", SCHEMA_ID) != SCHEMA_ID:
        return None, f"schema must be {SCHEMA_ID!r}, not {str(doc.get('schema'))[:60]!r}"
    try:
        d = Diagnosis.model_validate(doc)
    except ValidationError as err:
        return None, _validation_problem(err)
    if d.failure_class not in known_classes:
        return None, f"failure_class {d.failure_class[:60]!r} is not a taxonomy id"
    if d.hypotheses and d.hypotheses[0].failure_class != d.failure_class:
        return None, "failure_class differs from hypotheses[0].failure_class"
    unknown = sorted(d.cited_ids() - seen_ids)
    if unknown:
        more = f" (and {len(unknown) - 5} more)" if len(unknown) > 5 else ""
        return None, ("it cites ids no tool returned: " + ", ".join(i[:80] for i in unknown[:5]) + more
                      + "; cite only ids from tool results")
    return d, None
