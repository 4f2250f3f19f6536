"""The project's exceptions, and the one shape an error takes wherever it is shown as JSON.

Each exception says in one line what failed; `code` is a stable word a program can branch on and `hint` (or None)
what to do about it. The CLI prints the message on stderr (exit 2), or with JSON output `error_object` on stdout;
tools and MCP return `error_object` as their result.
"""

from __future__ import annotations


def error_object(code: str, message: str, hint: str | None = None) -> dict:
    """`{"error": {"code", "message", "hint"}}`: every JSON surface (CLI --format json, tool results, MCP)."""
    return {"error": {"code": code, "message": message, "hint": hint}}


class PathwaysWorkloadError(Exception):
    """Base class: the CLI prints str(err) on one line and exits 2."""

    code = "error"
    hint: str | None = None

    def __init__(self, message: str = "", *, code: str | None = None, hint: str | None = None):
        super().__init__(message)
        self.code = code or self.code
        self.hint = hint or self.hint

    def as_dict(self) -> dict:
        return error_object(self.code, str(self), self.hint)


class UsageError(PathwaysWorkloadError):
    """The command line does not parse, or names something that does not exist (an agent, a command)."""

    code = "usage"
    usage: str  # the command's usage line, set by the CLI's parser when it raises one


class InputError(PathwaysWorkloadError):
    """The user's input (a folder, a file, a flag) is unusable; the message names the file and entry."""

    code = "bad_input"


class FilterSyntaxError(PathwaysWorkloadError):
    """A Logging query-language filter does not parse; the message shows the filter and the position."""

    code = "bad_filter"
    hint = 'the Cloud Logging query language, e.g. severity>=ERROR textPayload:"FATAL"'

    def __init__(self, message: str, filter_text: str = "", position: int = -1):
        self.filter_text = filter_text
        self.position = position
        super().__init__(message)


class SourceError(PathwaysWorkloadError):
    """A live source (Cloud Logging, Kubernetes API) failed in a way the user must act on (auth, permission, not found)."""

    code = "source_error"


class AmbiguousWorkload(InputError):
    """The data holds several JobSets and none was named; the message lists them."""

    code = "ambiguous_jobset"
    hint = "name one of them with --jobset (the jobset argument of a tool)"


class UnknownJobSet(InputError):
    """A JobSet was named that the data does not hold; the message lists those it holds and the closest name."""

    code = "unknown_jobset"
    hint = "name one of the JobSets present with --jobset (the jobset argument of a tool)"
