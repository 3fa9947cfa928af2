"""Reads of the prompt sets a suite runs with (the catalogue's): the current one of a board, the one a
submission froze, and the sets one attempt needs.

Without an official checkout a suite runs with the plug-in's own wording (no row); an import with a
checkout stores the official texts per flow (``catalogue.services.prompt_sets_import``), and the
newest row of a flow is what new submissions on that suite freeze.
"""
from __future__ import annotations

from dataclasses import fields

from catalogue.models import SuitePromptSet
from evaluators.base import PromptSet, get_plugin

_COMMON = tuple(f.name for f in fields(PromptSet) if f.name not in ("version", "source", "extra"))


def prompt_set_texts(prompts: PromptSet) -> dict[str, object]:
    """The stored form of a prompt set's texts."""
    return {**{name: getattr(prompts, name) for name in _COMMON}, "extra": dict(prompts.extra)}


def _from_row(row: SuitePromptSet) -> PromptSet:
    texts = dict(row.texts)
    return PromptSet(version=row.version, source=row.source, extra=dict(texts.pop("extra", {}) or {}),
                     **{name: str(texts.get(name, "")) for name in _COMMON})


def prompt_set_current(env: str, suite: str, flow: str) -> PromptSet:
    """What a new submission on this board runs with: the newest stored set, else the platform's."""
    row = (SuitePromptSet.objects.filter(environment_id=env, suite=suite, flow=flow)
           .order_by("-imported_at", "-id").first())
    return _from_row(row) if row is not None else get_plugin(env).prompts(flow)


def prompt_set_get(env: str, suite: str, flow: str, version: str) -> PromptSet | None:
    """The set stored under ``version``, the platform's own when it is its version, else None."""
    platform = get_plugin(env).prompts(flow)
    if version == platform.version:
        return platform
    row = SuitePromptSet.objects.filter(environment_id=env, suite=suite, flow=flow, version=version).first()
    return _from_row(row) if row is not None else None


def prompt_sets_for_run(env: str, suite: str, flow: str, version: str) -> dict[str, PromptSet]:
    """The sets an attempt of ``flow`` frozen at ``version`` plays with, by flow: its own, and those of
    the other flows read in the same import (WebUI Online opens with a Global generation). Empty for
    the platform's wording, which the plug-in supplies (an earlier platform version included: its
    texts are no longer held, and the plug-in's current ones are played)."""
    row = prompt_set_row(env, suite, flow, version)
    if row is None:
        return {}
    siblings = SuitePromptSet.objects.filter(environment_id=env, suite=suite, checkout_digest=row.checkout_digest)
    return {sibling.flow: _from_row(sibling) for sibling in siblings}


def prompt_set_row(env: str, suite: str, flow: str, version: str) -> SuitePromptSet | None:
    return SuitePromptSet.objects.filter(environment_id=env, suite=suite, flow=flow, version=version).first()
