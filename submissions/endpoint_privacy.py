"""A team's endpoint is its own: the URL the platform calls and the model id it asks for there are
shown to the team's members (and staff), never to anyone else, published or not. Everything else a
stranger may read about a submission (pages, API answers, exports, replays) has them struck out."""
from __future__ import annotations

from typing import Any, TypeVar
from urllib.parse import urlsplit

from accounts.selectors import Access
from evaluators.endpoints.credentials import display_url
from submissions.models import Submission

URL_SHOWN = "[the team's endpoint]"
MODEL_SHOWN = "[the team's model id]"
#: Shorter model ids or host names are not struck out of free text: "gpt" or "a" would mangle it.
SHORTEST_STRUCK = 4

T = TypeVar("T")


def can_see_endpoint(access: Access, submission: Submission) -> bool:
    return access.is_staff or submission.team_id in access.team_ids


def endpoint_marks(submission: Submission) -> list[tuple[str, str]]:
    """(text, what replaces it) for every form in which the endpoint may appear, longest first."""
    marks: list[tuple[str, str]] = []
    url = submission.endpoint_url or ""
    if url:
        marks += [(url, URL_SHOWN), (display_url(url), URL_SHOWN)]
        try:
            parts = urlsplit(url)
            marks += [(parts.netloc.rpartition("@")[2], URL_SHOWN), (parts.hostname or "", URL_SHOWN)]
        except ValueError:
            pass
    marks.append((submission.endpoint_model or "", MODEL_SHOWN))
    unique = {text: shown for text, shown in marks if len(text) >= SHORTEST_STRUCK}
    return sorted(unique.items(), key=lambda mark: -len(mark[0]))


def struck(value: T, marks: list[tuple[str, str]]) -> T:
    """``value`` (text, or JSON-like lists and dicts of it) with every mark replaced."""
    if not marks:
        return value
    result: Any = value
    if isinstance(value, str):
        for text, shown in marks:
            result = result.replace(text, shown)
    elif isinstance(value, dict):
        result = {key: struck(item, marks) for key, item in value.items()}
    elif isinstance(value, list):
        result = [struck(item, marks) for item in value]
    return result


def for_viewer(value: T, access: Access, submission: Submission) -> T:
    """``value`` as this viewer may read it: whole for the team, struck out for anyone else."""
    return value if can_see_endpoint(access, submission) else struck(value, endpoint_marks(submission))
