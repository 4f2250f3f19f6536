"""Failing fast on BigQuery (issue 38): every call gets the diagnosis's Deadline (the API timeout and the client's
retry series end with it), and only 429/500/502/503/504 and transient network errors are retried; an endpoint no
connection could be made to (refused, unknown host, TLS, connect timeout) before it ever answered is one SourceError at
once, as in cloud_logging.py, instead of google-cloud-bigquery's default ten-minute retry series."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import SourceError
from .base import LogQuery, connection_failure, google_client, past_deadline, unreachable

if TYPE_CHECKING:
    from .cloud_logging import Deadline

DEFAULT_ENDPOINT = "https://bigquery.googleapis.com"


def make_bigquery_client(project: str, endpoint: str | None = None, location: str | None = None):
    """A google.cloud.bigquery Client: ADC, or anonymous for a plain http:// endpoint (an emulator or a fake)."""
    try:
        from google.cloud import bigquery
    except ImportError as err:
        raise SourceError("--log-analytics needs google-cloud-bigquery: pip install google-cloud-bigquery "
                          "(see README, 'Log Analytics')") from err
    options = {"api_endpoint": endpoint.rstrip("/")} if endpoint else None
    return google_client(bigquery.Client, endpoint, project=project, client_options=options, location=location)


class FailFast:
    """The deadline, retry and failure handling of LogAnalyticsSource's BigQuery calls."""

    deadline: Deadline
    timeout_s: float
    answered: bool
    endpoint: str | None
    table: str

    def _left(self) -> float:
        return max(0.5, self.deadline.remaining())

    def _timeout(self) -> float:
        """One HTTP request's timeout: the per-request limit, within what is left of the deadline."""
        return min(self.timeout_s, self._left())

    def _retry(self):
        """google-cloud-bigquery's retry for one call: transient failures only, ending with the deadline."""
        from google.api_core.retry import Retry

        return Retry(predicate=self._transient, initial=1.0, maximum=8.0, timeout=self._left())

    def _transient(self, err: BaseException) -> bool:
        """Worth another attempt: 429/500/502/503/504, or a network error once the endpoint has answered."""
        from google.api_core import exceptions as gx
        import requests

        if isinstance(err, (gx.TooManyRequests, gx.InternalServerError, gx.BadGateway, gx.ServiceUnavailable,
                            gx.GatewayTimeout)):
            self.answered = True
            return True
        if isinstance(err, (requests.exceptions.ConnectionError, requests.exceptions.Timeout)):
            return self.answered or connection_failure(err) is None
        return False

    def _failure(self, err: Exception, q: LogQuery) -> Exception:
        """A SourceError for an endpoint that cannot be reached or a deadline that passed; else `err` itself."""
        from google.api_core import exceptions as gx
        import requests

        why = connection_failure(err)
        if why and not self.answered:
            return SourceError(self._unreachable(why))
        if isinstance(err, (gx.RetryError, requests.exceptions.ConnectionError, requests.exceptions.Timeout,
                            gx.ServerError, gx.TooManyRequests, gx.DeadlineExceeded, TimeoutError)) \
                or self.deadline.expired():
            cause = getattr(err, "cause", None) or err
            last = _short(f"{type(cause).__name__}: {cause}", 120)
            return SourceError(past_deadline("Log Analytics", f"query {q.name!r} on {self.table}", self.deadline.seconds,
                                             last))
        return err

    def _unreachable(self, why: str) -> str:
        return unreachable("BigQuery", self.endpoint, DEFAULT_ENDPOINT, "--bigquery-endpoint (or PATHWAYS_WORKLOAD_BIGQUERY_ENDPOINT)", why)


def _short(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"
