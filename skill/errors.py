"""The project's exceptions. Each says in one line who sees it."""

from __future__ import annotations


class PathwaysWorkloadError(Exception):
    """Base class: the CLI prints str(err) on one line and exits 2."""


class InputError(PathwaysWorkloadError):
    """The user's input (a folder, a file, a flag) is unusable; the message names the file and entry."""


class FilterSyntaxError(PathwaysWorkloadError):
    """A Logging query-language filter does not parse; the message shows the filter and the position."""

    def __init__(self, message: str, filter_text: str = "", position: int = -1):
        self.filter_text = filter_text
        self.position = position
        super().__init__(message)


class SourceError(PathwaysWorkloadError):
    """A live source (Cloud Logging, Kubernetes API) failed in a way the user must act on (auth, permission, not found)."""


class AmbiguousWorkload(InputError):
    """The data holds several JobSets and none was named; the message lists them."""


class UnknownJobSet(InputError):
    """A JobSet was named that the data does not hold; the message lists those it holds and the closest name."""
