"""One Messages API call of the `ask` loop, within the time the deadline leaves: its own retries of what is worth
retrying, and a one-line SourceError for what is not (skill/ask.py)."""

from __future__ import annotations

import time
from typing import Protocol

from .errors import SourceError
from .reading.sources.base import connection_failure


class AskResult(Protocol):
    """What a call counts into (skill.ask.AskResult): steps, tokens, and whether the API ever answered."""

    answered: bool
    steps: int
    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int


def call_model(client, res: AskResult, remaining: float, **request):
    """One Messages API call within the time left; counts the step and its tokens. An API error is a SourceError.

    The SDK's own retries are off: 429, 5xx (529 overloaded) and a dropped connection are retried here, only while
    the deadline leaves time, so a hung or failing endpoint ends within --deadline; an endpoint no connection could
    be made to before it ever answered (refused, unknown host, TLS) ends at once."""
    import anthropic

    end = time.monotonic() + remaining
    for attempt in range(_API_ATTEMPTS):
        left = end - time.monotonic()
        try:
            resp = client.with_options(timeout=max(0.5, left), max_retries=0).messages.create(**request)
            res.answered = True
            break
        except anthropic.APIError as err:
            pause = min(8.0, 2.0 ** attempt)
            if not _worth_retry(err, res) or attempt == _API_ATTEMPTS - 1 or pause >= end - time.monotonic() - 1:
                raise SourceError(_api_failure(err, client, res)) from err
            time.sleep(pause)
    res.steps += 1
    u = resp.usage
    res.input_tokens += u.input_tokens or 0
    res.output_tokens += u.output_tokens or 0
    res.cache_creation_input_tokens += getattr(u, "cache_creation_input_tokens", 0) or 0
    res.cache_read_input_tokens += getattr(u, "cache_read_input_tokens", 0) or 0
    return resp


_API_ATTEMPTS = 4  # one call and up to three retries, each inside the deadline


def _worth_retry(err: Exception, res: AskResult) -> bool:
    """429 and 5xx unless the server says not to (`x-should-retry: false`); a connection dropped or timed out once the
    endpoint has answered. A call that timed out used the time left: no retry."""
    import anthropic

    if isinstance(err, anthropic.APIStatusError):
        res.answered = True
        if err.response.headers.get("x-should-retry") == "false":
            return False
        return err.status_code == 429 or err.status_code >= 500
    if isinstance(err, anthropic.APITimeoutError):
        return False
    return isinstance(err, anthropic.APIConnectionError) and (res.answered or connection_failure(err) is None)


def _api_failure(err: Exception, client, res: AskResult) -> str:
    """The one line for an API call that failed for good."""
    import anthropic

    why = connection_failure(err) if isinstance(err, anthropic.APIConnectionError) else None
    if why and not res.answered:
        return (f"cannot reach the Anthropic API at {str(getattr(client, 'base_url', '')).rstrip('/')} ({why}): "
                "check ANTHROPIC_BASE_URL (unset it for the real API) and the network and proxy settings")
    if isinstance(err, anthropic.APITimeoutError):
        return (f"the Anthropic API did not answer step {res.steps + 1} within the --deadline: raise --deadline "
                "or retry later")
    status = getattr(err, "status_code", None)
    return (f"the Anthropic API failed at step {res.steps + 1}: {type(err).__name__}"
            + (f" {status}" if status else "") + f": {short(err)}")


def short(err: Exception) -> str:
    body = getattr(err, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("message", ""))[:200]
    return str(err).splitlines()[0][:200] if str(err) else ""
