"""What a provider said when it refused a request, read from any shape of error body it sends.

OpenAI, Azure OpenAI, vLLM, llama.cpp and Ollama write ``{"error": {"message", "type", "code",
"param"}}``; Anthropic's own API ``{"type": "error", "error": {"type", "message"}}``; Google's
Gemini a JSON *list* of ``{"error": {"code", "message", "status", "details"}}``; TGI
``{"error": "...", "error_type": "..."}``; FastAPI servers ``{"detail": ...}``; Cloudflare
``{"errors": [{"code", "message"}]}``. :func:`read_provider_error` finds the message, the code and
the refused parameter in any of them, and :func:`is_quota_exhausted` tells a spent quota (which no
wait will mend within a run) from a passing rate limit.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: Codes and types the providers give a spent quota, a billing problem or a spend limit.
QUOTA_CODES = frozenset({
    "insufficient_quota", "billing_hard_limit_reached", "billing_not_active", "enforced_spend_limit_reached",
    "spend_limit_reached", "credit_balance_too_low", "quota_exceeded_permanently",
})
#: The same in words, for servers and proxies that pass on only the message.
_QUOTA_WORDS = re.compile(
    r"exceeded your current quota|insufficient[ _]quota|spend(ing)? limit|credit balance is too low|"
    r"billing (hard )?limit|out of call volume quota|check your plan and billing", re.IGNORECASE)
#: A quota Google names per day is spent until the next day, whatever retry delay comes with it.
_DAILY_QUOTA = re.compile(r"per ?day", re.IGNORECASE)
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")
_TITLE = re.compile(r"<title[^>]*>([^<]{1,200})</title>", re.IGNORECASE)
#: How much of a page is searched for its title.
_MAX_PAGE = 16 * 1024
#: How far into an error body the reader looks for its message: bodies are small, and a deep one is
#: not an error object anyone wrote by hand.
_MAX_DEPTH = 6


@dataclass(frozen=True)
class ProviderError:
    """An error body's parts, as sent (not yet cleaned for showing)."""

    provider: str = ""
    message: str = ""
    code: str = ""
    param: str = ""
    #: Google's RetryInfo delay, in seconds, when the body carries one (Gemini sends no Retry-After).
    retry_delay: float | None = None
    #: Identifiers of the quotas a Google error names (``QuotaFailure`` violations).
    quota_ids: tuple[str, ...] = ()


def read_provider_error(raw: bytes, headers: Mapping[str, str]) -> ProviderError:
    """The provider's own account of a failed request; empty fields where the body has none."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        # Proxies (nginx, Cloudflare) answer with an HTML page whose title says what happened.
        title = _TITLE.search(raw[:_MAX_PAGE].decode("utf-8", "replace"))
        return ProviderError(provider=provider_name(headers, None), message=title.group(1).strip() if title else "")
    if isinstance(data, list) and data:
        data = data[0]  # Gemini's list holds one error
    provider = provider_name(headers, data)
    if not isinstance(data, dict):
        return ProviderError(provider=provider, message=data if isinstance(data, str) else "")
    error = data.get("error")
    body = error if isinstance(error, dict) else data
    message = _first_text(error if error is not None else data) or _first_text(data)
    # A numeric code only repeats the HTTP status; a named one (OpenAI's, Google's status) says more.
    named = [_text(body.get("code")), _text(body.get("type")), _text(body.get("status")), _text(data.get("error_type"))]
    code = next((each for each in named if each and not each.isdigit()), "")
    errors = data.get("errors")
    if not code and isinstance(errors, list) and errors and isinstance(errors[0], dict):
        code = _text(errors[0].get("code"))
    found = body.get("details")
    details: list[Any] = found if isinstance(found, list) else []
    return ProviderError(provider=provider, message=message, code=code, param=_text(body.get("param")),
                         retry_delay=_google_retry_delay(details), quota_ids=_google_quota_ids(details))


def provider_name(headers: Mapping[str, str], data: Any) -> str:
    """Who answered, where the answer says so: for a cause a team recognises at a glance."""
    names = {name.lower() for name in headers}
    if any(name.startswith("openai-") for name in names):
        return "OpenAI"
    if "apim-request-id" in names or any(name.startswith("x-ms-") for name in names):
        return "Azure OpenAI"
    if any(name.startswith("anthropic-") for name in names) or (
            isinstance(data, dict) and data.get("type") == "error"):
        return "Anthropic"
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("status"), str) and error["status"].isupper():
        return "Gemini"
    if "cf-ray" in names:
        return "Cloudflare"
    server = next((value for name, value in headers.items() if name.lower() == "server"), "").lower()
    return "nginx" if "nginx" in server else ""


def is_quota_exhausted(status: int, error: ProviderError, retry_after: float | None, max_wait: float) -> bool:
    """Whether a refusal is a spent quota, billing problem or spend limit: no retry within a run helps.

    A quota the provider itself says comes back soon (a retry delay within ``max_wait``, as Gemini
    gives for its per-minute quotas) is a rate limit, unless the quota it names is a daily one.
    """
    if status not in (400, 402, 403, 429):
        return False
    named = error.code.lower() in QUOTA_CODES or bool(_QUOTA_WORDS.search(error.message))
    if not named:
        return False
    if error.code.lower() in QUOTA_CODES:
        return True
    if any(_DAILY_QUOTA.search(quota) for quota in error.quota_ids):
        return True
    wait = error.retry_delay if error.retry_delay is not None else retry_after
    return wait is None or wait > max_wait


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return ""


def _first_text(value: Any, depth: int = 0) -> str:
    """The first message-like string in ``value`` (breadth first over the usual keys)."""
    if depth > _MAX_DEPTH:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        for item in value[:5]:
            found = _first_text(item, depth + 1)
            if found:
                return found
        return ""
    if isinstance(value, dict):
        for key in ("message", "msg", "detail", "error", "errors", "description"):
            if key in value:
                found = _first_text(value[key], depth + 1)
                if found:
                    return found
    return ""


def _google_retry_delay(details: list[Any]) -> float | None:
    for detail in details:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            match = _DURATION.match(str(detail.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


def _google_quota_ids(details: list[Any]) -> tuple[str, ...]:
    ids: list[str] = []
    for detail in details:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("QuotaFailure"):
            for violation in detail.get("violations") or []:
                if isinstance(violation, dict) and isinstance(violation.get("quotaId"), str):
                    ids.append(violation["quotaId"])
    return tuple(ids)
