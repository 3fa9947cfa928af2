"""What every model request carries: the official sampling settings and the official message layout.

The official runner (main.py) sends temperature, top_p, max_tokens and frequency_penalty with every
request (their official values, unchanged by every experiment script, are the defaults of
``evaluators.settings.EvaluationSettings``), and its OpenAI-compatible client joins consecutive
messages of one role into one message before sending. The platform talks to OpenAI-compatible
endpoints only, so it sends what that client sends.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaluators.endpoints.messages import text_part

#: The media type the official flows write in every image's data URL, although the bytes are PNG.
OFFICIAL_IMAGE_LABEL = "image/jpeg"


def image_media_type(settings: Any) -> str:
    """The media type an image's data URL names: the official label, or with ``png_image_label`` the
    type its bytes really have (a labelled option)."""
    return "image/png" if getattr(settings, "png_image_label", False) else OFFICIAL_IMAGE_LABEL


#: What every environment's requests share with the official client, and where they may differ,
#: for the metric cards.
REQUEST_NOTES = (
    "Top-level keys as the official OpenAI-compatible client sends them: model, messages, temperature, top_p, "
    "frequency_penalty and max_tokens; consecutive messages of one role are merged into one, as its merge_role does.",
    "Images go out as PNG bytes in a data URL labelled image/jpeg, as officially (the label is wrong; servers that "
    "decode the bytes see the PNG). Labelled option png_image_label: the same bytes labelled image/png, for a "
    "server that trusts the label. Measured effect: none on the pixels (the bytes are identical); a server that "
    "decodes by the label may refuse or misread the official requests, which the option avoids.",
    "Images are encoded as PNG with unfiltered rows deflated by ISA-L at its fastest level, where the official code "
    "uses PIL's default level: the same pixels in about 7% more bytes (a rendered 1280×720 frame, 0.97 MB against "
    "0.91 MB), encoded in 7 ms instead of 301 ms.",
    "Images are resized as the official code resizes them: longest side to the resolution, LANCZOS, each side "
    "truncated to whole pixels.",
    "The model id is the submission's; left blank, it is the first model the endpoint lists at /models, as the "
    "official client calls it. The list is read once per attempt, where the official client reads it before every "
    "request (the same id unless the server changes its list during an attempt).",
    "Request profile (labelled variants, off by default): token_limit_parameter=max_completion_tokens sends the "
    "completion-token limit under that name, omit_parameters leaves temperature, top_p or frequency_penalty out, "
    "extra_body merges a JSON object into every request (e.g. reasoning_effort). OpenAI's reasoning models refuse "
    "the official requests with 400 and can be run only so; the official harness cannot run them at all, so no "
    "official figure exists to compare with.",
    "The official client retries a failed request 3 times whatever the failure; here only transient failures "
    "(time-outs, 5xx, 429, refused connections) are retried, and an attempt whose endpoint never answered is "
    "re-queued rather than scored 0.",
)


def _as_parts(content: Any) -> list[Any]:
    return [text_part(content)] if isinstance(content, str) else list(content)


def merge_same_role(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive messages of one role become one message whose content is theirs, in order.

    Two string contents are joined with nothing in between, as the official client's list/str
    ``+`` does; a string next to a list of parts becomes one text part (the official client would
    fail there, which none of its flows triggers).
    """
    merged: list[dict[str, Any]] = []
    for message in messages:
        if merged and merged[-1]["role"] == message["role"]:
            previous = merged[-1]["content"]
            content = message["content"]
            if isinstance(previous, str) and isinstance(content, str):
                merged[-1]["content"] = previous + content
            else:
                merged[-1]["content"] = _as_parts(previous) + _as_parts(content)
            continue
        copy = dict(message)
        if isinstance(copy.get("content"), list):
            copy["content"] = list(copy["content"])
        merged.append(copy)
    return merged
