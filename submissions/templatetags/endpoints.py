"""Endpoint URLs and error texts as anyone may see them: no user info, no secret parameters."""
from __future__ import annotations

from django import template

from evaluators.endpoints.credentials import display_url, scrub_secrets

register = template.Library()


@register.filter(name="display_url")
def display_url_filter(url: str | None) -> str:
    return display_url(url) if url else ""


@register.filter(name="scrub_secrets")
def scrub_secrets_filter(text: str | None) -> str:
    return scrub_secrets(text) if text else ""
