"""What goes into a chat-completions request and what is read out of its answer."""
from __future__ import annotations

import base64
import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from PIL import Image

from evaluators.endpoints.errors import INVALID_RESPONSE, InfraError
from evaluators.images import png_bytes

Message = Mapping[str, Any]


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def image_part(img: Image.Image, *, media_type: str = "image/png") -> dict[str, Any]:
    """An ``image_url`` content part carrying the image as PNG bytes in a data URI labelled
    ``media_type`` (the official flows label their PNG bytes ``image/jpeg``)."""
    encoded = base64.b64encode(png_bytes(img)).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{media_type};base64,{encoded}"}}


@dataclasses.dataclass(frozen=True)
class Completion:
    """One answered request. ``text`` is ``""`` when the model answered with nothing.

    ``latency`` is the duration of the request that succeeded (seconds), not counting earlier
    failed attempts or the waits between them, which ``waited`` counts; ``attempts`` counts every
    request made. ``refusal`` is a refusal the model gave instead of content (OpenAI's
    ``message.refusal``); ``reasoning_chars`` the length of reasoning text the endpoint returned
    beside the content (``reasoning_content``, ``reasoning``) and ``reasoning_tokens`` what it
    billed for reasoning (``usage.completion_tokens_details.reasoning_tokens``), when it said.
    """

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency: float
    attempts: int
    finish_reason: str | None
    model: str | None = None
    waited: float = 0.0
    refusal: str | None = None
    reasoning_chars: int | None = None
    reasoning_tokens: int | None = None


def completion_from(data: Any, latency: float, clean: Callable[[str], str]) -> Completion:
    """The answer in a decoded response body; ``clean`` makes an error text it quotes fit to show."""
    if not isinstance(data, dict):
        raise InfraError(INVALID_RESPONSE, "the response is JSON but not an object", 200)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        error = data.get("error")
        text = clean(error_text(error)) if error else ""
        hint = f" (it carries an error: {text})" if text else (" (it carries an error)" if error else "")
        raise InfraError(INVALID_RESPONSE, f"the response has no choices{hint}", 200)
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise InfraError(INVALID_RESPONSE, "the first choice has no message object", 200)
    try:
        text = _message_text(message.get("content"))
    except ValueError as exc:
        raise InfraError(INVALID_RESPONSE, str(exc), 200) from None
    usage = data.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    finish_reason = choice.get("finish_reason")
    model = data.get("model")
    refusal = message.get("refusal")
    reasoning = [message.get(name) for name in ("reasoning_content", "reasoning")]
    reasoning_texts = [text for text in reasoning if isinstance(text, str)]
    details = usage.get("completion_tokens_details")
    return Completion(
        text=text,
        prompt_tokens=_int_or_none(usage.get("prompt_tokens")),
        completion_tokens=_int_or_none(usage.get("completion_tokens")),
        latency=latency,
        attempts=1,
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
        model=model if isinstance(model, str) else None,
        refusal=clean(refusal) if isinstance(refusal, str) and refusal else None,
        reasoning_chars=sum(map(len, reasoning_texts)) if reasoning_texts else None,
        reasoning_tokens=_int_or_none(details.get("reasoning_tokens")) if isinstance(details, dict) else None,
    )


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _message_text(content: Any) -> str:
    """The text of a message's ``content``; ``None`` (an empty answer) gives ``""``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_part_texts(content))
    raise ValueError(f"message content is a {type(content).__name__}, not a string or a list")


def _part_texts(parts: Iterable[Any]) -> Iterable[str]:
    for part in parts:
        if isinstance(part, str):
            yield part
        elif isinstance(part, dict):
            # Non-text parts (images, audio, refusals) carry nothing the parser could use.
            if part.get("type", "text") in ("text", "output_text") and isinstance(
                part.get("text"), str
            ):
                yield part["text"]
        else:
            raise ValueError(f"a content part is a {type(part).__name__}, not an object")


def error_text(error: Any) -> str:
    """The message of an error object as OpenAI-compatible servers (and FastAPI) write it."""
    if isinstance(error, str):
        return error
    if isinstance(error, dict):
        for field in ("message", "detail", "error"):
            if isinstance(error.get(field), str):
                return error[field]
    return ""

