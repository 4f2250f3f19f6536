"""Where the command line's output goes: the format asked for (or chosen by --output's extension, or by the
terminal), and the file it is written to."""

from __future__ import annotations

import argparse
import sys

from .errors import PathwaysWorkloadError


def output_format(args: argparse.Namespace, person: str) -> str:
    """The format asked for; by default `person`'s on a terminal or by --output FILE's extension, JSON when piped (and
    a note on stderr says so, so a pipe never changes the output silently)."""
    from .telling.render import format_of

    if args.format:
        return args.format
    out = getattr(args, "output", None)
    if out:
        fmt = format_of(out, "")
        if not fmt:
            raise PathwaysWorkloadError(f"--output {out}: the extension names no format (.txt .md .json .html); "
                                        "rename the file or add --format text|markdown|json|html", code="bad_input")
        return fmt
    if sys.stdout.isatty():
        return person
    print(f"pathways-workload: stdout is not a terminal, so the output is JSON (--format {person} for the report)",
          file=sys.stderr)
    return "json"


def emit(args: argparse.Namespace, text: str) -> int:
    """Print the output, or write it to --output FILE (a folder or an unwritable path is a one-line error)."""
    out = getattr(args, "output", None)
    if not out:
        print(text, end="")
        return 0
    try:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as err:
        raise PathwaysWorkloadError(f"--output {out}: {err.strerror or err}", code="bad_input",
                                    hint="name a file in a folder you can write") from None
    print(f"pathways-workload: wrote {out}", file=sys.stderr)
    return 0
