"""The two agent flows of MageBench (reference §3), independent of any environment.

Global: one request (system rules; user: task text, observation image, format instruction); all
parsed actions are executed in order until the episode ends.

Online: system rules + format instruction + a rolling memory; one action per decision, the memory
trimmed to the last ``2·max_memory`` messages with at most ``max_image`` images (newest kept).

Parse retries: after a reply that yields no valid action the model is asked to regenerate, at most
``parse_retries`` times per decision. With ``parse_retries = 0`` both flows behave exactly like the
official code (Global: one generation; Online: the failed turn is consumed and the next request
carries the regenerate message). A decision that still has no action after its retries counts as
an invalid decision (IA) and, Online, consumes the turn.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from PIL import Image

from evaluators.agents.replay import RepliesExhausted
from evaluators.agents.diagnostics import DiagnosticsTracker
from evaluators.base import FLOW_GLOBAL, FLOW_ONLINE, EnvironmentPlugin, Episode, Observation, PromptSet
from evaluators.endpoints.client import image_part
from evaluators.trajectory import TrajectoryRecorder


class ChatModel(Protocol):
    def complete(self, messages: list[dict[str, Any]], *, temperature: float, max_tokens: int,
                 top_p: float | None = None) -> Any: ...


class Cancelled(Exception):
    """Raised from the progress callback to stop an attempt whose submission was cancelled."""


ProgressCallback = Callable[[dict[str, Any]], None]


@dataclass
class FlowResult:
    score: float
    steps: int
    model_calls: int
    outcome: str
    details: dict[str, Any]
    diagnostics: DiagnosticsTracker
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class _Session:
    """Model calls, token accounting and recording shared by both flows."""

    def __init__(self, model: ChatModel, settings: dict[str, Any], recorder: TrajectoryRecorder,
                 progress: ProgressCallback | None) -> None:
        self.model = model
        self.settings = settings
        self.recorder = recorder
        self.progress = progress
        self.calls = 0
        self.prompt_tokens: int | None = None
        self.completion_tokens: int | None = None
        self.diagnostics = DiagnosticsTracker()
        self.steps = 0
        #: Set when a recorded (uploaded) run has no reply left.
        self.model_exhausted = False

    def call(self, messages: list[dict[str, Any]], images: dict[int, str]) -> tuple[str, int]:
        started = time.monotonic()
        try:
            completion = self.model.complete(
                messages,
                temperature=float(self.settings.get("temperature", 0.1)),
                max_tokens=int(self.settings.get("max_tokens", 1000)),
                top_p=self.settings.get("top_p"),
            )
        except RepliesExhausted:
            self.model_exhausted = True
            raise
        self.calls += 1
        if completion.prompt_tokens is not None:
            self.prompt_tokens = (self.prompt_tokens or 0) + completion.prompt_tokens
        if completion.completion_tokens is not None:
            self.completion_tokens = (self.completion_tokens or 0) + completion.completion_tokens
        text = completion.text if isinstance(completion.text, str) else ""
        index = self.recorder.record_call({
            "messages": _redact_images(messages, images),
            "reply": text,
            "latency": round(time.monotonic() - started, 4),
            "usage": {"prompt": completion.prompt_tokens, "completion": completion.completion_tokens},
        })
        self.tick()
        return text, index

    def call_for_retry(self, messages: list[dict[str, Any]], images: dict[int, str], *,
                       answered: bool) -> tuple[str, int] | None:
        """``call``, or None when a recorded run has no reply left for a retry: a recorded run that
        made no retry ends with the reply it gave."""
        try:
            return self.call(messages, images)
        except RepliesExhausted:
            if not answered:
                raise
            return None

    def annotate_call(self, index: int, **fields: Any) -> None:
        self.recorder.calls[index].update(fields)

    def tick(self) -> None:
        if self.progress is not None:
            self.progress({"model_calls": self.calls, "steps": self.steps})


def _redact_images(messages: list[dict[str, Any]], images: dict[int, str]) -> list[dict[str, Any]]:
    """Replace data URIs with references to recorded frames (looked up by part identity)."""
    redacted = []
    for message in messages:
        content = message["content"]
        if isinstance(content, list):
            parts = []
            for part in content:
                if part.get("type") == "image_url":
                    parts.append({"type": "image_ref", "frame": images.get(id(part), "?")})
                else:
                    parts.append(part)
            content = parts
        redacted.append({"role": message["role"], "content": content})
    return redacted


def _user(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": "user", "content": parts}


UNAVAILABLE_IMAGE = "image not available."


def _observation_parts(observation: Observation, trailer: str, recorder: TrajectoryRecorder,
                       images: dict[int, str], max_image: int | None = None) -> list[dict[str, Any]]:
    """Content parts for one observation; images past ``max_image`` become a short text, as officially."""
    sequence: list[str | Image.Image] = (
        list(observation.parts) if observation.parts is not None
        else [p for p in (observation.text, observation.image) if p is not None and p != ""]
    )
    parts: list[dict[str, Any]] = []
    shown = 0
    for item in sequence:
        if isinstance(item, Image.Image):
            if max_image is not None and shown >= max_image:
                parts.append({"type": "text", "text": UNAVAILABLE_IMAGE})
                continue
            shown += 1
            part = image_part(item)
            images[id(part)] = recorder.frame(item)
            parts.append(part)
        elif item:
            parts.append({"type": "text", "text": item})
    if trailer:
        parts.append({"type": "text", "text": trailer})
    return parts


def _system_messages(prompts: PromptSet, settings: dict[str, Any], extra_user: str | None) -> list[dict[str, Any]]:
    if settings.get("no_system_role"):
        # Some models reject the system role; the rules then open the first user message.
        text = prompts.system + ("\n\n" + extra_user if extra_user else "")
        return [_user([{"type": "text", "text": text}])]
    messages = [{"role": "system", "content": prompts.system}]
    if extra_user:
        messages.append(_user([{"type": "text", "text": extra_user}]))
    return messages


def _record_step(session: _Session, episode: Episode, action: Any, result: Any, call_index: int,
                 image: Image.Image | None) -> None:
    session.steps += 1
    frames = [session.recorder.frame(frame) for frame in episode.replay_frames()]
    session.recorder.record_step({
        "call": call_index,
        "action": str(action),
        "reward": result.reward,
        "score_so_far": episode.running_score(),
        "done": result.done,
        "frame": session.recorder.frame(image) if image is not None else None,
        "extra_frames": frames,
        "info": result.info,
    })


def run_global(plugin: EnvironmentPlugin, episode: Episode, model: ChatModel, settings: dict[str, Any],
               recorder: TrajectoryRecorder, progress: ProgressCallback | None = None) -> FlowResult:
    prompts = plugin.prompts(FLOW_GLOBAL)
    session = _Session(model, settings, recorder, progress)
    images: dict[int, str] = {}
    observation = episode.reset()
    recorder.meta["initial_frame"] = recorder.frame(observation.image) if observation.image is not None else None
    first = [{"type": "text", "text": prompts.first_turn}] if prompts.first_turn else []
    max_image = settings.get("max_image")
    messages = _system_messages(prompts, settings, None) + [
        _user(first + _observation_parts(observation, prompts.format_instruction, recorder, images,
                                         None if max_image is None else int(max_image)))
    ]
    retries = int(settings.get("parse_retries", 0))
    parsed = None
    call_index = -1
    for attempt in range(retries + 1):
        called = session.call_for_retry(messages, images, answered=parsed is not None)
        if called is None:
            break
        reply, call_index = called
        parsed = plugin.parse(FLOW_GLOBAL, reply)
        session.diagnostics.observe_reply(reply, parsed.tokens, parsed.foreign_tokens, parsed.ok)
        session.annotate_call(call_index, parsed=[str(a) for a in parsed.actions], parse_error=parsed.error,
                              foreign_tokens=parsed.foreign_tokens, retry=attempt)
        if parsed.ok:
            break
        messages = messages + [{"role": "assistant", "content": reply}, _user([{"type": "text", "text": prompts.regenerate}])]
    assert parsed is not None
    if not parsed.ok:
        session.diagnostics.observe_failed_decision()
    for action in parsed.actions:
        if episode.done:
            break
        result = episode.step(action)
        _record_step(session, episode, action, result, call_index, result.observation.image)
    session.tick()
    return _finish(episode, session, "no_action" if not parsed.ok else None)


def _trim_memory(memory: list[dict[str, Any]], max_memory: int, max_image: int) -> list[dict[str, Any]]:
    window = memory[-2 * max_memory:] if max_memory > 0 else list(memory)
    kept_images = 0
    trimmed: list[dict[str, Any]] = []
    for message in reversed(window):
        content = message["content"]
        if isinstance(content, list) and any(p.get("type") == "image_url" for p in content):
            parts = []
            for part in reversed(content):
                if part.get("type") == "image_url":
                    if kept_images >= max_image:
                        continue  # older frames are dropped, newest first kept
                    kept_images += 1
                parts.append(part)
            message = {"role": message["role"], "content": list(reversed(parts))}
        trimmed.append(message)
    return list(reversed(trimmed))


def run_online(plugin: EnvironmentPlugin, episode: Episode, model: ChatModel, settings: dict[str, Any],
               recorder: TrajectoryRecorder, progress: ProgressCallback | None = None) -> FlowResult:
    prompts = plugin.prompts(FLOW_ONLINE)
    session = _Session(model, settings, recorder, progress)
    images: dict[int, str] = {}
    max_loop = int(settings.get("max_loop", 50))
    max_memory = int(settings.get("max_memory", 5))
    max_image = int(settings.get("max_image", 1))
    retries = int(settings.get("parse_retries", 0))

    observation = episode.reset()
    recorder.meta["initial_frame"] = recorder.frame(observation.image) if observation.image is not None else None
    header = _system_messages(prompts, settings, prompts.format_instruction)
    memory: list[dict[str, Any]] = [_user(_observation_parts(observation, prompts.first_turn, recorder, images))]
    decisions = 0
    while decisions < max_loop and not episode.done:
        decisions += 1
        action = None
        call_index = -1
        for attempt in range(retries + 1):
            try:
                reply, call_index = session.call(header + _trim_memory(memory, max_memory, max_image), images)
            except RepliesExhausted:
                break
            memory.append({"role": "assistant", "content": reply})
            parsed = plugin.parse(FLOW_ONLINE, reply)
            session.diagnostics.observe_reply(reply, parsed.tokens, parsed.foreign_tokens, parsed.ok)
            session.annotate_call(call_index, parsed=[str(a) for a in parsed.actions], parse_error=parsed.error,
                                  foreign_tokens=parsed.foreign_tokens, retry=attempt, decision=decisions)
            if parsed.ok:
                action = parsed.actions[0]
                break
            memory.append(_user([{"type": "text", "text": prompts.regenerate}]))
        if session.model_exhausted:
            break  # a recorded run ends where its replies end, as if max_loop had been reached there
        if action is None:
            session.diagnostics.observe_failed_decision()
            continue
        result = episode.step(action)
        _record_step(session, episode, action, result, call_index, result.observation.image)
        session.diagnostics.observe_online_action(str(action), bool(result.info.get("changed", True)))
        memory.append(_user(_observation_parts(result.observation, prompts.next_turn, recorder, images)))
        session.tick()
    outcome = None if session.steps else "no_action"
    result = _finish(episode, session, outcome)
    result.extra["decisions"] = decisions
    return result


def _finish(episode: Episode, session: _Session, outcome: str | None) -> FlowResult:
    details = episode.score_details()
    if outcome is None:
        outcome = str(details.get("outcome") or ("solved" if details.get("solved") else "unsolved"))
    return FlowResult(
        score=float(episode.score()),
        steps=session.steps,
        model_calls=session.calls,
        outcome=outcome,
        details=details,
        diagnostics=session.diagnostics,
        prompt_tokens=session.prompt_tokens,
        completion_tokens=session.completion_tokens,
    )


FLOW_RUNNERS = {FLOW_GLOBAL: run_global, FLOW_ONLINE: run_online}
