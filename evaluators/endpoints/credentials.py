"""Credentials that ride in endpoint URLs: finding them, and keeping them out of anything shown.

A key belongs in the Authorization header, where the platform puts the team's API key. One typed
into the URL instead would be stored in clear and shown to everyone who sees the submission, so
new URLs carrying one are refused, and URLs stored before that rule are shown without it.
"""
from __future__ import annotations

import re
from urllib.parse import unquote_plus, urlsplit, urlunsplit

_REDACTED = "[redacted]"

#: Query parameter names that are secrets whatever surrounds them (compared lower-cased, with
#: ``-`` and ``.`` read as ``_``).
_SECRET_NAMES = frozenset({"sig", "pwd", "pass", "passwd", "jwt", "bearer", "code", "sessionid", "session"})
#: Words that make any parameter name secret-looking: api_key, accessKey, X-Amz-Signature, client_secret…
_SECRET_WORDS = ("key", "token", "secret", "passw", "signature", "credential", "auth")


def is_secret_name(name: str) -> bool:
    normalised = re.sub(r"[-.\s]", "_", name.strip().lower())
    return normalised in _SECRET_NAMES or any(word in normalised for word in _SECRET_WORDS)


def url_credentials(url: str) -> list[str]:
    """What in ``url`` looks like a credential, described without its value; empty when nothing does."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return []
    found: list[str] = []
    if "@" in parts.netloc:
        found.append("a user name or password before the host (…@)")
    for name in _parameter_names(parts.query):
        if is_secret_name(name):
            found.append(f"query parameter {_printable(name)!r}")
    return found


def display_url(url: str) -> str:
    """``url`` as it may be shown to anyone: no user info, no secret-looking parameter, no fragment."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    netloc = parts.netloc.rpartition("@")[2]
    # Filtered as written, so the parameters kept read exactly as the team typed them.
    kept = [piece for piece in parts.query.split("&") if piece and not is_secret_name(_name_of(piece))]
    return urlunsplit((parts.scheme, netloc, parts.path, "&".join(kept), ""))


def _name_of(piece: str) -> str:
    return unquote_plus(piece.partition("=")[0])


def _parameter_names(query: str) -> list[str]:
    return [_name_of(piece) for piece in query.split("&") if piece]


# ``scheme://anything-without-slash@`` is user info; the lookahead keeps an ``@`` in a path.
_USER_INFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@'\"<>]*@")
_PARAMETER = re.compile(r"(?P<lead>[?&;])(?P<name>[^=&;#\s'\"<>]+)=(?P<value>[^&;#\s'\"<>)]*)")


def scrub_secrets(text: str) -> str:
    """``text`` with the user info of every URL in it removed and secret-looking parameter values
    replaced: for free text (exception messages, stored errors) that may quote a URL."""
    text = _USER_INFO.sub(r"\1", text)

    def parameter(match: re.Match[str]) -> str:
        if not is_secret_name(match["name"]):
            return match[0]
        return f"{match['lead']}{match['name']}={_REDACTED}"

    return _PARAMETER.sub(parameter, text)


def _printable(text: str, limit: int = 40) -> str:
    cleaned = "".join(c for c in text if c.isprintable())
    return cleaned if len(cleaned) <= limit else cleaned[:limit] + "…"
