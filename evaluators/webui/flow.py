"""WebUI Online: refinement rounds starting from a Global generation (reference §2.4).

Round 0 is the Global flow's single generation. Each later round shows the model its current code
and, as the run's official Online flow has it (``webui_online_flow``, see
:mod:`evaluators.webui.online_variants`), a screenshot of the current render, that screenshot under
the description's image (its second part), or no picture, after the rules and the task
description (or the flow's own rules alone); it takes the code blocks after ``# Regenerate``.
Every round is scored; the attempt's score is the last round's AES (the official runner writes
one eval.json per round and leaves the aggregation to the reader).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from PIL import Image

from evaluators.agents.flows import (
    FlowResult,
    ProgressCallback,
    _finish,
    _observation_parts,
    _record_step,
    _Session,
    _system_messages,
    _user,
    prompt_set,
)
from evaluators.agents.replay import RepliesExhausted
from evaluators.base import FLOW_GLOBAL, FLOW_ONLINE, EnvironmentPlugin, Episode, Observation, PromptSet
from evaluators.images import resize_longest_side
from evaluators.settings import EvaluationSettings
from evaluators.trajectory import TrajectoryRecorder
from evaluators.webui.online_variants import OnlineVariant
from evaluators.webui.options import WebUIOptions
from evaluators.webui.parsing import needs_continuation, parse_online

if TYPE_CHECKING:
    from evaluators.webui.env import WebUIEpisode


def _round_turn(texts: Mapping[str, str], prompts: PromptSet, files: dict[str, str], picture: Image.Image | None,
                session: _Session, images: dict[int, str], settings: EvaluationSettings) -> dict[str, Any]:
    """The user turn of one refinement round as the official Online flows build it: the current
    files in one text (html, then css, then javascript; each only once written), the round's picture
    (if the flow shows one) and the refinement request; or, with no file yet, the no-code text alone."""
    code = "".join(texts[f"code_{kind}"].format(**{kind: files[kind]})
                   for kind in ("html", "css", "javascript") if _shown(files, kind))
    if not code:
        return _user([{"type": "text", "text": texts["no_code"]}])
    shown = Observation(text="", parts=[code] + ([picture] if picture is not None else []))
    return _user(_observation_parts(shown, texts["refine"], session.recorder, images, prompts=prompts,
                                    settings=settings))


def _picture(variant: OnlineVariant, episode: Episode, task: Observation, resolution: int) -> Image.Image | None:
    """What a round of ``variant`` shows of the page: its render resized as the official flows resize
    it, that render stacked under the description's image (its second part), or nothing (and then
    nothing is rendered)."""
    if not variant.picture:
        return None
    screenshot = resize_longest_side(episode.render(), resolution)
    if variant.picture == "screenshot":
        return screenshot
    return stack_vertically(resize_longest_side(description_image(task), resolution), screenshot)


def description_image(task: Observation) -> Image.Image:
    """The image the description's second part is, the target page the merged flow shows on top."""
    parts = task.parts or []
    if len(parts) < 2 or not isinstance(parts[1], Image.Image):
        raise ValueError("this page's description has no image right after its opening text, which the "
                         "mergenodes Online flow shows as the target")
    return parts[1]


def stack_vertically(top: Image.Image, bottom: Image.Image) -> Image.Image:
    """One RGB picture of ``top`` above ``bottom``, left-aligned; a narrower one leaves black beside it."""
    stacked = Image.new("RGB", (max(top.width, bottom.width), top.height + bottom.height))
    stacked.paste(top, (0, 0))
    stacked.paste(bottom, (0, top.height))
    return stacked


def _shown(files: Mapping[str, str], kind: str) -> bool:
    # Officially an empty index.html counts as none written, while an empty css or js file is shown.
    return bool(files.get(kind)) if kind == "html" else kind in files


def _generate(session: _Session, plugin: EnvironmentPlugin, flow: str, messages: list[dict[str, Any]],
              images: dict[int, str], retries: int, prompts: PromptSet, round_index: int,
              continuation: str = "") -> tuple[Any, int]:
    parsed = None
    call_index = -1
    for attempt in range(retries + 1):
        called = session.call_for_retry(messages, images, answered=parsed is not None)
        if called is None:
            break
        reply, call_index = called
        if flow == FLOW_ONLINE and needs_continuation(reply):
            # Official Online variants ask once for the rest of a reply cut off inside a code block,
            # then read the joined text even if it is still unterminated.
            follow = messages + [{"role": "assistant", "content": reply},
                                 {"role": "user", "content": continuation}]
            more, _ = session.call(follow, images)
            reply = reply + more
            parsed = parse_online(reply, allow_unterminated=True)
        else:
            parsed = plugin.parse(flow, reply)
        session.diagnostics.observe_reply(reply, [], [], parsed.ok)
        session.annotate_call(call_index, parsed=[str(a) for a in parsed.actions], parse_error=parsed.error,
                              retry=attempt, decision=round_index)
        if parsed.ok:
            break
        messages = messages + [{"role": "assistant", "content": reply},
                               _user([{"type": "text", "text": prompts.regenerate}])]
    return parsed, call_index


def run_webui_online(plugin: EnvironmentPlugin, episode: Episode, model: Any, settings: EvaluationSettings,
                     recorder: TrajectoryRecorder, progress: ProgressCallback | None = None, *,
                     prompt_sets: Mapping[str, PromptSet] | None = None) -> FlowResult:
    """Round 0 is the Global generation (with the Global prompts); each refinement round then sends
    the run's Online flow's opening (the rules and the whole task description, or its own rules) and
    the round's turn."""
    global_prompts = prompt_set(plugin, FLOW_GLOBAL, prompt_sets)
    online_prompts = prompt_set(plugin, FLOW_ONLINE, prompt_sets)
    session = _Session(model, settings, recorder, progress)
    images: dict[int, str] = {}
    retries, max_image, rounds = settings.parse_retries, settings.max_image, settings.max_loop
    task = episode.reset()
    first = [{"type": "text", "text": global_prompts.first_turn}] if global_prompts.first_turn else []
    messages = _system_messages(global_prompts, settings, None) + [
        _user(first + _observation_parts(task, global_prompts.format_instruction, recorder, images, max_image,
                                         prompts=global_prompts, settings=settings))]
    round_scores: list[float] = []
    parsed, call_index = _generate(session, plugin, FLOW_GLOBAL, messages, images, retries, global_prompts, 0)
    _apply(session, episode, parsed, call_index)
    round_scores.append(episode.score())
    variant = WebUIOptions.of(settings).online_flow
    texts = variant.texts(online_prompts)
    rules = dataclasses.replace(online_prompts, system=texts["system"])
    opening = _system_messages(rules, settings, None, system_as_parts=True)
    if variant.described:
        # The whole description, without the image limit, as officially.
        opening.append(_user(_observation_parts(task, "", recorder, images, prompts=online_prompts,
                                                settings=settings)))
    for round_index in range(1, rounds + 1):
        files = cast("WebUIEpisode", episode).files
        picture = _picture(variant, episode, task, settings.resolution) if files else None
        turn = _round_turn(texts, online_prompts, files, picture, session, images, settings)
        try:
            parsed, call_index = _generate(session, plugin, FLOW_ONLINE, opening + [turn], images, retries,
                                           online_prompts, round_index, texts["continuation"])
        except RepliesExhausted:
            break  # a recorded run ends with its last refinement round
        _apply(session, episode, parsed, call_index)
        round_scores.append(episode.score())
        session.tick()
    result = _finish(episode, session, None)
    result.extra["round_scores"] = round_scores
    return result


def _apply(session: _Session, episode: Episode, parsed: Any, call_index: int) -> None:
    if not parsed.ok:
        session.diagnostics.observe_failed_decision()
        return
    for action in parsed.actions:
        result = episode.step(action)
        _record_step(session, episode, action, result, call_index, None)
