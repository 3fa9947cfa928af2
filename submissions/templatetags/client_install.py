"""How a page tells a submitter to install the command-line client: the wheel the site serves."""
from __future__ import annotations

from typing import Any

from django import template

from submissions.client_wheel import client_wheel_url

register = template.Library()


@register.simple_tag(takes_context=True)
def client_install_url(context: dict[str, Any]) -> str:
    """The absolute address of the client's wheel, for ``pip install`` on the visitor's machine."""
    return client_wheel_url(context["request"])
