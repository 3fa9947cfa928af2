"""A file's size as every page of the site writes it ("812 bytes", "68.0 kB"), the exports' links included."""
from __future__ import annotations

from django import template

from magebench_client.output import size_text

register = template.Library()


@register.filter
def file_size(size: int | None) -> str:
    return "—" if size is None else size_text(int(size))
