"""WebUI Online: refinement rounds starting from a Global generation (reference §2.4, "Natural").

Round 0 is the Global flow's single generation. Each later round shows the model the task
description again, its current code and a screenshot of the current render, and takes the code
blocks after ``# Regenerate``. Every round is scored; the attempt's score is the last round's AES
(the official runner writes one eval.json per round and leaves the aggregation to the reader).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from evaluators.agents.flows import (
    FlowResult,
    ProgressCallback,
    _finish,
    _observation_parts,
    _record_step,
    _Session,
    _system_messages,
    _user,
)
from evaluators.agents.replay import RepliesExhausted
from evaluators.base import FLOW_GLOBAL, FLOW_ONLINE, EnvironmentPlugin, Episode
from evaluators.settings import EvaluationSettings
from evaluators.trajectory import TrajectoryRecorder
from evaluators.webui.parsing import needs_continuation, parse_online
from evaluators.webui.prompts import CONTINUATION

if TYPE_CHECKING:
    from evaluators.webui.env import WebUIEpisode


def _current_code(files: dict[str, str]) -> str:
    blocks = [f"```{kind}\n{code}\n```" for kind, code in sorted(files.items())]
    return "Your current code:\n\n" + ("\n\n".join(blocks) if blocks else "(no code yet)")


def _generate(session: _Session, plugin: EnvironmentPlugin, flow: str, messages: list[dict[str, Any]],
              images: dict[int, str], retries: int, regenerate: str, round_index: int) -> tuple[Any, int]:
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
                                 _user([{"type": "text", "text": CONTINUATION}])]
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
        messages = messages + [{"role": "assistant", "content": reply}, _user([{"type": "text", "text": regenerate}])]
    return parsed, call_index


def run_webui_online(plugin: EnvironmentPlugin, episode: Episode, model: Any, settings: EvaluationSettings,
                     recorder: TrajectoryRecorder, progress: ProgressCallback | None = None) -> FlowResult:
    global_prompts, online_prompts = plugin.prompts(FLOW_GLOBAL), plugin.prompts(FLOW_ONLINE)
    session = _Session(model, settings, recorder, progress)
    images: dict[int, str] = {}
    retries, max_image, rounds = settings.parse_retries, settings.max_image, settings.max_loop
    task = episode.reset()
    first = [{"type": "text", "text": global_prompts.first_turn}] if global_prompts.first_turn else []
    messages = _system_messages(global_prompts, settings, None) + [
        _user(first + _observation_parts(task, global_prompts.format_instruction, recorder, images, max_image))]
    round_scores: list[float] = []
    parsed, call_index = _generate(session, plugin, FLOW_GLOBAL, messages, images, retries,
                                   global_prompts.regenerate, 0)
    _apply(session, episode, parsed, call_index)
    round_scores.append(episode.score())
    for round_index in range(1, rounds + 1):
        screenshot = episode.render()
        # The screenshot counts against max_image first; task images fill what is left.
        task_parts = _observation_parts(task, online_prompts.format_instruction, recorder, images,
                                        max(max_image - 1, 0))
        code = _current_code(cast("WebUIEpisode", episode).files)
        current = _observation_parts(type(task)(text="", parts=[code, screenshot]),
                                     online_prompts.next_turn, recorder, images, 1)
        messages = _system_messages(online_prompts, settings, None) + [_user(task_parts), _user(current)]
        try:
            parsed, call_index = _generate(session, plugin, FLOW_ONLINE, messages, images, retries,
                                           online_prompts.regenerate, round_index)
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
