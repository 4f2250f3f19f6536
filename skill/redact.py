"""Secret redaction: applied to every excerpt before it is printed, saved or sent to a model."""

from __future__ import annotations

import re

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"-----BEGIN (?:[A-Z ]+ )?PRIVATE KEY-----.*?(?:-----END (?:[A-Z ]+ )?PRIVATE KEY-----|$)", re.S),
     "[REDACTED private key]"),
    (re.compile(r"\bya29\.[0-9A-Za-z_\-.]{10,}"), "[REDACTED oauth token]"),
    (re.compile(r"\b1//0[0-9A-Za-z_\-]{20,}"), "[REDACTED refresh token]"),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{35,}"), "[REDACTED api key]"),
    (re.compile(r"\bsk-ant-[0-9A-Za-z_\-]{16,}"), "[REDACTED api key]"),
    (re.compile(r"\bsk-[0-9A-Za-z]{20,}\b"), "[REDACTED api key]"),
    (re.compile(r"\bgh[pousr]_[0-9A-Za-z]{30,}\b"), "[REDACTED token]"),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "[REDACTED access key]"),
    (re.compile(r"\beyJ[0-9A-Za-z_\-]{8,}\.[0-9A-Za-z_\-]{8,}\.[0-9A-Za-z_\-]{8,}"), "[REDACTED jwt]"),
    (re.compile(r"(?i)\b(authorization\s*[:=]\s*)(?:bearer|basic)\s+[^\s'\"]+"), r"\1[REDACTED]"),
    (re.compile(r"(?i)([?&](?:X-Goog-Signature|X-Goog-Credential|X-Amz-Signature|Signature|sig|token|access_token)=)[^&\s'\"]+"),
     r"\1[REDACTED]"),
    # KEY=value, KEY: value, and the JSON spelling "key": "value" (a structured log line or an env dump as JSON)
    (re.compile(r"(?i)\b((?:[A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_KEY|APIKEY|PRIVATE_KEY|CREDENTIALS?))[\"']?\s*[=:]\s*)"
                r"(?!\[REDACTED)(\"[^\"]*\"|'[^']*'|[^\s,;&]+)"), r"\1[REDACTED]"),
    # command-line flags: --password VALUE, --token=VALUE
    (re.compile(r"(?i)(--?(?:password|passwd|token|secret|api-key|apikey)(?:=|\s+))(?!\[REDACTED)([^\s'\"]+)"),
     r"\1[REDACTED]"),
)


def redact(text: str) -> str:
    """The text with tokens, keys, signed-URL signatures and password-like values replaced."""
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)
    return text


def redact_obj(value: object) -> object:
    """Redact every string inside a JSON-like value."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_obj(v) for v in value]
    if isinstance(value, dict):
        return {k: redact_obj(v) for k, v in value.items()}
    return value
