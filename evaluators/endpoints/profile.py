"""A submission's request profile: how its requests may differ from the official ones, and why.

The official client sends ``temperature``, ``top_p``, ``frequency_penalty`` and ``max_tokens`` with
every request. Reasoning models refuse some of them (OpenAI's o-series and GPT-5 answer 400 to
``max_tokens``, to a temperature other than 1, to ``top_p`` and to ``frequency_penalty``) and take
parameters of their own (``reasoning_effort``, vLLM's ``chat_template_kwargs``). A profile names
the token limit's parameter, the sampling parameters left out and a JSON object merged into every
body. Any of them makes the run a labelled variant (``evaluators.agents.requests``).
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

TOKEN_LIMIT_PARAMETERS = ("max_tokens", "max_completion_tokens")
OMITTABLE_PARAMETERS = ("temperature", "top_p", "frequency_penalty")
#: Keys the platform writes itself; an extra body naming one would change the protocol unseen.
#: ``n`` and streaming are refused too: the platform reads one choice of one JSON answer, and more
#: choices would be billed to the team for nothing.
RESERVED_BODY_KEYS = frozenset({"model", "messages", *OMITTABLE_PARAMETERS, *TOKEN_LIMIT_PARAMETERS,
                                "stream", "stream_options", "n"})
#: An extra body is a few parameters; anything larger is a mistake or an attempt to bloat every request.
MAX_EXTRA_BODY_BYTES = 4096
#: Nested objects deeper than this are not parameters anyone needs, and cost recursion to check.
MAX_EXTRA_BODY_DEPTH = 8


class ProfileError(ValueError):
    """A profile value that cannot be accepted, with a message naming the setting."""


def read_omit_parameters(value: Any) -> str:
    """The comma-separated names in their canonical order (a list is accepted too)."""
    items = value if isinstance(value, list | tuple) else str(value).split(",")
    names = {str(item).strip() for item in items if str(item).strip()}
    unknown = sorted(names - set(OMITTABLE_PARAMETERS))
    if unknown:
        raise ProfileError(f"omit_parameters takes {', '.join(OMITTABLE_PARAMETERS)}; "
                           f"{', '.join(map(repr, unknown))} cannot be left out")
    return ",".join(name for name in OMITTABLE_PARAMETERS if name in names)


def read_extra_body(value: Any) -> dict[str, Any]:
    """A JSON object (given as one, or as its text), size-capped, naming nothing the platform sets."""
    if isinstance(value, str | bytes):
        if len(value) > MAX_EXTRA_BODY_BYTES:
            raise ProfileError(f"extra_body is larger than {MAX_EXTRA_BODY_BYTES} bytes")
        try:
            value = json.loads(value)
        except ValueError:
            raise ProfileError("extra_body must be a JSON object, e.g. {\"reasoning_effort\": \"low\"}") from None
    if not isinstance(value, Mapping):
        raise ProfileError("extra_body must be a JSON object, e.g. {\"reasoning_effort\": \"low\"}")
    if _depth(value) > MAX_EXTRA_BODY_DEPTH:
        raise ProfileError(f"extra_body nests deeper than {MAX_EXTRA_BODY_DEPTH} levels")
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        raise ProfileError("extra_body must hold JSON values only") from None
    if len(text.encode("utf-8")) > MAX_EXTRA_BODY_BYTES:
        raise ProfileError(f"extra_body is larger than {MAX_EXTRA_BODY_BYTES} bytes")
    reserved = sorted(RESERVED_BODY_KEYS & set(value))
    if reserved:
        raise ProfileError(f"extra_body cannot set {', '.join(reserved)}: the platform sets "
                           f"{'it' if len(reserved) == 1 else 'them'} (see token_limit_parameter and omit_parameters)")
    return dict(json.loads(text))


def _depth(value: Any, level: int = 0) -> int:
    if level > MAX_EXTRA_BODY_DEPTH:
        return level
    if isinstance(value, Mapping):
        return max((_depth(item, level + 1) for item in value.values()), default=level + 1)
    if isinstance(value, list):
        return max((_depth(item, level + 1) for item in value), default=level + 1)
    return level


@dataclass(frozen=True)
class RequestProfile:
    """What every request of a run carries besides the model and the messages."""

    token_limit_parameter: str = "max_tokens"
    omit_parameters: frozenset[str] = frozenset()
    extra_body: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def body(self, *, temperature: float, max_tokens: int, top_p: float | None,
             frequency_penalty: float | None) -> dict[str, Any]:
        """The request's sampling, token-limit and extra keys (everything but model and messages)."""
        sampling = {"temperature": temperature, "top_p": top_p, "frequency_penalty": frequency_penalty}
        body = {name: value for name, value in sampling.items()
                if value is not None and name not in self.omit_parameters}
        body[self.token_limit_parameter] = max_tokens
        body.update(self.extra_body)
        return body


OFFICIAL_PROFILE = RequestProfile()


def profile_of(settings: Any) -> RequestProfile:
    """The profile of an ``EvaluationSettings`` (any object with the three attributes)."""
    omitted = getattr(settings, "omit_parameters", "") or ""
    return RequestProfile(
        token_limit_parameter=getattr(settings, "token_limit_parameter", "max_tokens") or "max_tokens",
        omit_parameters=frozenset(name for name in omitted.split(",") if name),
        extra_body=dict(getattr(settings, "extra_body", None) or {}),
    )


def fixing_setting(param: str | None, message: str) -> str | None:
    """The profile setting that would make a provider accept a request it refused, if one would.

    ``param`` is the provider's own field naming the refused parameter (OpenAI's ``error.param``);
    the message is searched when there is none, as proxies and other servers write only a message.
    """
    named = (param or "").strip()
    text = message or ""
    if named == "max_tokens" or ("max_tokens" in text and "max_completion_tokens" in text):
        return "token_limit_parameter=max_completion_tokens"
    if named in OMITTABLE_PARAMETERS:
        return f"omit_parameters={named}"
    for name in OMITTABLE_PARAMETERS:
        if f"'{name}'" in text or f'"{name}"' in text or f"`{name}`" in text:
            return f"omit_parameters={name}"
    if _IMAGES_REFUSED.search(text):
        # Not a fix of the request but of the model: it reads no images, and runs on text alone only so.
        return "observation_images=false"
    return None


#: How servers word a refusal of image inputs (OpenAI, vLLM, llama.cpp, Ollama).
_IMAGES_REFUSED = re.compile(r"image[_ ]?(url|input)?s? (is |are )?(only supported|not supported)|does not support "
                             r"image|not a multimodal model|image input is not supported|no vision", re.IGNORECASE)
