"""Splits group logs written by record.py into one folder per scenario under fixtures/recordings/.

    python -m pathways_workload.evals.recording.split group-A.log group-B.log [--out fixtures/recordings]

Each folder gets output.log (the captured lines exactly as recorded: TAG<TAB>SECONDS<TAB>TEXT, TAG O for stdout,
E for stderr, N for a harness note) and provenance.yaml (what was run, how it ended, and the versions, build label,
chip and date read from the group's _env probe). Probe blocks (ids starting with _) and skipped scenarios get no
folder. An existing folder is overwritten.
"""

from __future__ import annotations

import argparse
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "scenarios.toml"
DEFAULT_OUT = HERE.parent.parent / "fixtures" / "recordings"
GROUP_ENV = {"PYTHONUNBUFFERED": "1", "TPU_STDERR_LOG_LEVEL": "0", "TPU_MIN_LOG_LEVEL": "0"}
BEGIN = re.compile(r"^===== SCENARIO BEGIN (\S+) =====$")
END = re.compile(r"^===== SCENARIO END (\S+) =====$")
# libtpu's start-up line naming its build; the wording is not known before a recording, so several are tried
LABEL = re.compile(r"\] Build label: (\S+)")
BUILD_LINE = re.compile(r"(?i)(build label|built on|libtpu version|libtpu.*\bbuild\b)")
REQUIRED = ("id", "description", "kind", "expected_class", "program", "command", "env", "exit_code", "jax_version",
            "jaxlib_version", "libtpu_version", "libtpu_build_label", "chip", "date")


@dataclass
class Block:
    """One scenario's section of a group log: its header fields and its tagged output lines."""

    id: str
    fields: dict[str, str] = field(default_factory=dict)
    output: list[str] = field(default_factory=list)


def parse(text: str) -> list[Block]:
    """The scenario blocks of a group log, in order (a block cut off by a killed run is dropped)."""
    blocks, cur, in_output = [], None, False
    for line in text.splitlines():
        if m := BEGIN.match(line):
            cur, in_output = Block(m.group(1)), False
        elif cur is None:
            continue
        elif END.match(line):
            blocks.append(cur)
            cur = None
        elif line.startswith("----- OUTPUT"):
            in_output = True
        elif line.startswith("----- END OUTPUT"):
            in_output = False
        elif in_output:
            cur.output.append(line)
        elif ": " in line:
            key, value = line.split(": ", 1)
            cur.fields[key] = value
    return blocks


def probe_facts(block: Block | None) -> dict[str, str]:
    """Versions, chip and build label read from the _env probe's output."""
    facts: dict[str, str] = {}
    if block is None:
        return facts
    build = ""
    for line in block.output:
        tag, _, text = (line.split("\t", 2) + ["", ""])[:3]
        if tag == "O" and ": " in text and not text.startswith(" "):
            key, value = text.split(": ", 1)
            facts.setdefault(key.strip(), value.strip())
        elif tag == "E" and (m := LABEL.search(text)) is not None:
            build = m.group(1)  # libtpu's own "Build label: ..." line names the release build
        elif tag == "E" and not build and BUILD_LINE.search(text):
            build = text.strip()
    facts["build_line"] = build
    return facts


def provenance(block: Block, row: dict, facts: dict[str, str], group_log: str) -> dict:
    """The provenance.yaml of one recorded scenario."""
    f = block.fields
    env = {**GROUP_ENV, **json.loads(f.get("env", "{}"))}
    libtpu = facts.get("dist_libtpu", "")
    if libtpu in ("", "not installed"):
        libtpu = facts.get("dist_libtpu-nightly", "unknown")
    code = f.get("exit_code", "unknown")
    return {
        "id": block.id,
        "description": row["description"],
        "kind": row["kind"],
        "expected_class": row["expected_class"],
        "program": row["program"],
        "args": list(row.get("args", [])),
        "command": f.get("command", ""),
        "env": env,
        "exit_code": int(code) if code.lstrip("-").isdigit() else code,
        "signal": f.get("signal", ""),
        "timed_out": f.get("timed_out") == "true",
        "wall_s": float(f["wall_s"]) if "wall_s" in f else None,
        "lines": f.get("lines", ""),
        "start_utc": f.get("start_utc", ""),
        "end_utc": f.get("end_utc", ""),
        "date": f.get("start_utc", "")[:10],
        "jax_version": facts.get("jax_version", "unknown"),
        "jaxlib_version": facts.get("jaxlib_version", "unknown"),
        "libtpu_version": libtpu,
        "libtpu_build_label": facts.get("build_line") or facts.get("platform_version", "unknown"),
        "platform_version": facts.get("platform_version", "unknown"),
        "chip": facts.get("device_kind", "unknown"),
        "device_count": facts.get("device_count", "unknown"),
        "python": facts.get("python", "unknown"),
        "host": facts.get("uname", "unknown"),
        "group_log": group_log,
        "output_format": "TAG<TAB>SECONDS<TAB>TEXT; O=stdout E=stderr N=recorder note (not program output)",
    }


def split(logs: list[Path], out: Path) -> list[str]:
    """Writes a folder per recorded scenario of every log; returns the ids written."""
    rows = {r["id"]: r for r in tomllib.loads(MANIFEST.read_text())["scenario"]}
    written = []
    for log in logs:
        blocks = parse(log.read_text(encoding="utf-8", errors="replace"))
        facts = probe_facts(next((b for b in blocks if b.id == "_env" and "skipped" not in b.fields), None))
        for b in blocks:
            if b.id.startswith("_") or "skipped" in b.fields:
                continue
            row = rows.get(b.id)
            if row is None:
                print(f"{log.name}: {b.id} is not in scenarios.toml, left out")
                continue
            prov = provenance(b, row, facts, log.name)
            if prov["kind"] == "healthy" and prov["exit_code"] != 0:
                print(f"{b.id}: kind healthy but exit code {prov['exit_code']}: check scenarios.toml")
            folder = out / b.id
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "output.log").write_text("\n".join(b.output) + "\n", encoding="utf-8")
            (folder / "provenance.yaml").write_text(yaml.safe_dump(prov, sort_keys=False, allow_unicode=True),
                                                    encoding="utf-8")
            written.append(b.id)
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Split record.py group logs into fixtures/recordings/<id>/.")
    ap.add_argument("logs", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    a = ap.parse_args(argv)
    ids = split(a.logs, a.out)
    print(f"{len(ids)} recordings written to {a.out}: {', '.join(ids)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
