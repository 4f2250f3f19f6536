"""What the cited lines name: the concrete things a fix has to change (a program, a shape, a dtype, a variable, a flag,
a path, an op), read from the evidence by one ordered table of rows, like the other tables here.

A fix that says "reduce memory" or "fix the code" leaves the engineer to find what; the lines that prove the cause
usually name it (`jit_attention`, `bf16[4,16,32768,32768]`, `float32` against `bfloat16`, `/dev/vfio/0`,
`JAX_COMPILATION_CACHE_DIR`). Each row is a name, a regex over the cited lines' text and how the sentence says it;
a path the workload's own spec sets through an env variable or a flag is said with that setting's name. A Python
source path is not a path to change; instead the innermost traceback frame in the program's own code is named with
the source line Python printed under it (`program_line`). Only classes whose fix is a change to the
workload (`FailureClass.fixed_in_workload`) get the sentence. Pure: no I/O.
Log text is data: what is named is quoted in a sentence, never turned into a command."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_DTYPES = ("bfloat16", "float64", "float32", "float16", "float8_e4m3fn", "float8_e5m2", "int64", "int32", "int16",
           "int8", "uint32", "uint8", "int4", "bool")
_SHORT = r"(?:bf16|f64|f32|f16|f8e4m3fn|f8e5m2|s64|s32|s16|s8|s4|u64|u32|u16|u8|pred)"


@dataclass(frozen=True)
class Row:
    name: str  # what the sentence calls these things (plural)
    when: str  # the row in words, for the generated docs
    example: str  # a line the row reads a thing from (tests check it names `names`)
    names: str
    regex: re.Pattern[str]  # group 1 (or the whole match) is one named thing
    least: int = 1  # how many distinct ones must be named before the row says anything (one dtype is no mismatch)


ROWS: tuple[Row, ...] = (
    Row("program", "an XLA program: `jit_<name>` or `jit(<name>)`",
        "XLA:TPU compile permanent error. Ran out of memory in memory space hbm ... for jit_train_step", "jit_train_step",
        re.compile(r"\b(jit_[A-Za-z_][\w]*)|\bjit\(([A-Za-z_]\w*)\)")),
    Row("op", "an op, primitive or custom-call target a compiler or lowering refused",
        "NotImplementedError: Unimplemented primitive in Pallas TPU lowering for tc: top_k.", "top_k",
        re.compile(r"(?:primitive(?: in [\w ]+? for \w+)?|[Uu]nsupported op(?:eration)?|for op): '?([a-z_]\w*(?:\.\w+)*)"
                   r"|Custom emitter for (\w+) not found|custom call to \"?(\w+)|custom_call_target=\"(\w+)\"")),
    Row("shape", "a typed shape (`bf16[4,16,32768,32768]`) or a `shape: (256, 1024)` tuple",
        "  128.00GiB(100%);  128.00GiB;            0;                1; bf16[4,16,32768,32768]", "bf16[4,16,32768,32768]",
        re.compile(rf"\b((?:{'|'.join(_DTYPES)}|{_SHORT})\[[\d, ]*\])|\b[Ss]hape:? (\(\d[\d, ]*\))")),
    Row("dtype", "two or more dtypes named together (a mismatch); one alone says nothing",
        "The input carry h has type float32[64,512] but the corresponding output carry component has type "
        "bfloat16[64,512]", "bfloat16", re.compile(rf"\b({'|'.join(_DTYPES)})\b"), least=2),
    Row("variable", "an environment variable of JAX, XLA, libtpu, PJRT, MegaScale or gRPC",
        "RuntimeError: Unable to initialize backend 'proxy' (JAX_PLATFORMS=proxy)", "JAX_PLATFORMS",
        re.compile(r"\b((?:JAX|XLA|TPU|LIBTPU|PJRT|MEGASCALE|TF_CPP|GRPC|NCCL)_[A-Z0-9_]{2,})\b")),
    Row("flag", "a command-line flag (`--name`), or the name of an unknown flag libtpu refused",
        "ERROR: Unknown command line flag 'tpu_b20_prefetch_depth'", "tpu_b20_prefetch_depth",
        re.compile(r"(?<![\w-])(--[a-z][a-z0-9_]{3,})(?=[=\s'\"]|$)|(?:[Uu]nknown command line flag|specified for flag) '([a-z][\w]*)'")),
    Row("path", "a gs:// URL, a TPU device node, or a quoted absolute path (not a Python source file); said with the "
        "env variable or flag of the spec that sets it", "FileExistsError: [Errno 17] File exists: '/var/cache/jax'",
        "/var/cache/jax", re.compile(r"(gs://[\w.\-]+(?:/[\w.\-]+)*/?|/dev/(?:vfio|accel)[\w/]*)|['\"]"
                                     r"(/(?:[\w.@+-]+/)*[\w.@+-]+)['\"]")),
)
MOST = 3  # things per row, in the order the lines name them
# A traceback frame names the program's own files, not what to change; JAX's note on its filtered frames names a
# variable that only changes what the traceback shows.
_HINT = re.compile(r"\(set JAX_PLATFORMS='' to automatically choose an available backend\)")  # JAX's stock advice
_SKIP = re.compile(r'^\s*File "|^For simplicity, JAX has removed its internal frames')


# A traceback frame, and a path that is the standard library's or an installed package's, not the program's own.
FRAME_AT = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)')
LIBRARY = re.compile(r"/(?:site|dist)-packages/|/lib/python\d\.\d+/|^<frozen ")
_NOT_CODE = re.compile(r"^\s*[\^~]+\s*$|^\s*File \"")


def program_line(texts: Iterable[str]) -> str:
    """The innermost frame of a traceback in the program's own code (not the standard library or site-packages),
    with the source line Python printed under it: `path:line` `code`, or "" when no traceback names one."""
    lines = [ln for text in texts for ln in text.splitlines()]
    found = ""
    for i, ln in enumerate(lines):
        m = FRAME_AT.match(ln)
        if not m or LIBRARY.search(m.group("path")):
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        code = nxt.strip() if nxt[:1].isspace() and not _NOT_CODE.match(nxt) else ""
        found = f"`{m.group('path')}:{m.group('line')}`" + (f" (`{code[:120]}`)" if code else "")
    return found


def named(texts: Iterable[str]) -> dict[str, list[str]]:
    """Row name -> the distinct things the lines name, first seen first (rows that name too few are left out)."""
    texts = list(texts)
    found: dict[str, list[str]] = {r.name: [] for r in ROWS}
    for line in (_HINT.sub("", ln) for text in texts for ln in text.splitlines()):
        if _SKIP.match(line):
            continue
        for row in ROWS:
            for m in row.regex.finditer(line):
                thing = next((g for g in m.groups() if g), m.group(0)).rstrip("/")
                if thing and thing not in found[row.name] and not (row.name == "path" and thing.endswith(".py")):
                    found[row.name].append(thing)
    out = {r.name: found[r.name][:MOST] for r in ROWS if found[r.name] and len(found[r.name]) >= r.least}
    if code := program_line(texts):
        out["code"] = [code]
    return out


def sentence(things: dict[str, list[str]], settings: dict[str, str] | None = None) -> str:
    """One sentence a fix can start from, or "" when the lines name nothing specific."""
    if not things:
        return ""
    parts = [f"the program's own line {things['code'][0]}"] if things.get("code") else []
    for row in ROWS:
        values = things.get(row.name)
        if not values:
            continue
        shown = []
        for v in values:
            where = (settings or {}).get(v) if row.name == "path" else None
            shown.append(f"`{v}` (set by {where})" if where else f"`{v}`")
        parts.append(f"{row.name}{'s' if len(values) > 1 else ''} {', '.join(shown)}")
    return "What the failing lines name, where the change goes: " + "; ".join(parts) + "."


def table() -> str:
    """The rows as a Markdown table, for the generated docs."""
    out = ["| # | names | read from | example line |", "|---|---|---|---|"]
    out += [f"| {i} | {r.name} | {r.when} | `{r.example.strip()}` |" for i, r in enumerate(ROWS, 1)]
    return "\n".join(out)

