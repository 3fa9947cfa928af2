"""The two agent flows of MageBench (reference §3), independent of any environment.

Global (official GlobalPlanning): one request (system rules; user: the observation and the format
instruction); all parsed actions are executed in order until the episode ends.

Online (official Online_HL_FBandSB): system rules + format instruction + a rolling memory that starts
with the first observation; one action per decision, the memory trimmed to the last
``2·max_memory`` messages, images kept only in the newest messages that hold at most ``max_image``.

Every request goes out as the official OpenAI-compatible client sends it: consecutive messages of
one role merged into one (so the format instruction and the first observation are one user
message), with the official sampling settings (evaluators.agents.requests).

Parse retries (``parse_retries``, default 0): 0 is the official behaviour (Global: one generation;
Online: a reply without a valid action consumes the turn and the next request carries the
regenerate message). A larger value asks again within the decision, as the paper describes; it is a
labelled option, never the default.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from PIL import Image

from evaluators.agents.diagnostics import DiagnosticsTracker
from evaluators.agents.replay import RepliesExhausted
from evaluators.agents.requests import image_media_type, merge_same_role
from evaluators.declarations import FLOW_GLOBAL, FLOW_ONLINE, Episode, Observation, PromptSet
from evaluators.endpoints.messages import image_part
from evaluators.endpoints.profile import OFFICIAL_PROFILE, RequestProfile, profile_of
from evaluators.settings import EvaluationSettings
from evaluators.trajectory import TrajectoryRecorder

if TYPE_CHECKING:
    # The plug-in interface names these flows as its default runners, so this module names it for typing only.
    from evaluators.interface import EnvironmentPlugin


class ChatModel(Protocol):
    def complete(self, messages: list[dict[str, Any]], *, temperature: float, max_tokens: int,
                 top_p: float | None = None, frequency_penalty: float | None = None,
                 profile: RequestProfile = OFFICIAL_PROFILE) -> Any: ...


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
    #: Requests the endpoint client sent again after a transient failure (a timeout, a 5xx): the
    #: endpoint saw ``model_calls + endpoint_retries`` requests for this attempt.
    endpoint_retries: int = 0
    #: The endpoint's own account of its replies: how many stopped at the token limit
    #: (``finish_reason`` "length"), how many it refused (a refusal, or "content_filter").
    replies_cut: int = 0
    refusals: int = 0
    #: Seconds spent on failed requests and the waits between them: the platform's time, which the
    #: model's seconds per scenario leave out.
    platform_wait_seconds: float = 0.0


@dataclass
class TokenTally:
    """The tokens an attempt's model calls billed, as its endpoint reported them (OpenAI ``usage``).

    A count is known only when every call of the attempt reported it: a sum over some of the calls
    would understate the attempt's cost, so one call without it makes the count unknown (None).
    """

    prompt: int = 0
    completion: int = 0
    prompt_unreported: bool = False
    completion_unreported: bool = False

    def add(self, prompt: int | None, completion: int | None) -> None:
        if prompt is None:
            self.prompt_unreported = True
        else:
            self.prompt += prompt
        if completion is None:
            self.completion_unreported = True
        else:
            self.completion += completion

    @property
    def prompt_tokens(self) -> int | None:
        return None if self.prompt_unreported else self.prompt

    @property
    def completion_tokens(self) -> int | None:
        return None if self.completion_unreported else self.completion


class _Session:
    """Model calls, token accounting and recording shared by both flows."""

    def __init__(self, model: ChatModel, settings: EvaluationSettings, recorder: TrajectoryRecorder,
                 progress: ProgressCallback | None, plugin: EnvironmentPlugin | None = None) -> None:
        self.model = model
        self.settings = settings
        self.profile = profile_of(settings)
        self.recorder = recorder
        self.progress = progress
        self.calls = 0
        self.endpoint_retries = 0
        self.replies_cut = 0
        self.refusals = 0
        self.waited = 0.0
        self.tokens = TokenTally()
        self.diagnostics = DiagnosticsTracker(
            vocabulary=frozenset(plugin.ACTIONS) if plugin else frozenset(),
            pass_actions=plugin.PASS_ACTIONS if plugin else frozenset(),
        )
        self.steps = 0
        #: Set when a recorded (uploaded) run has no reply left.
        self.model_exhausted = False

    def call(self, messages: list[dict[str, Any]], images: dict[int, str]) -> tuple[str, int]:
        started = time.monotonic()
        # What the official OpenAI-compatible client puts on the wire (its merge_role).
        messages = merge_same_role(messages)
        try:
            completion = self.model.complete(
                messages,
                temperature=self.settings.temperature,
                max_tokens=self.settings.max_tokens,
                top_p=self.settings.top_p,
                frequency_penalty=self.settings.frequency_penalty,
                profile=self.profile,
            )
        except RepliesExhausted:
            self.model_exhausted = True
            raise
        self.calls += 1
        # A model called in-process (a baseline object, a test double) makes no HTTP request to retry.
        self.endpoint_retries += max(0, int(getattr(completion, "attempts", 1)) - 1)
        self.tokens.add(completion.prompt_tokens, completion.completion_tokens)
        text = completion.text if isinstance(completion.text, str) else ""
        waited = float(getattr(completion, "waited", 0.0) or 0.0)
        self.waited += waited
        index = self.recorder.record_call({
            "messages": _redact_images(messages, images),
            "reply": text,
            "latency": round(time.monotonic() - started - waited, 4),
            "usage": {"prompt": completion.prompt_tokens, "completion": completion.completion_tokens},
            **self._reply_facts(completion, waited),
        })
        self.tick()
        return text, index

    def _reply_facts(self, completion: Any, waited: float) -> dict[str, Any]:
        """What the endpoint said about its reply besides the text, counted for the attempt; only the
        facts it gave are recorded."""
        finish = getattr(completion, "finish_reason", None)
        refusal = getattr(completion, "refusal", None)
        self.replies_cut += finish == "length"
        self.refusals += bool(refusal) or finish == "content_filter"
        facts = {"finish_reason": finish, "refusal": refusal,
                 "reasoning_chars": getattr(completion, "reasoning_chars", None),
                 "reasoning_tokens": getattr(completion, "reasoning_tokens", None),
                 "platform_wait": round(waited, 4) if waited else None}
        return {name: value for name, value in facts.items() if value is not None}

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


def _assistant(reply: str) -> dict[str, Any]:
    # The official flows store a reply as one text part, not a bare string.
    return {"role": "assistant", "content": [{"type": "text", "text": reply}]}


def _observation_parts(observation: Observation, trailer: str, recorder: TrajectoryRecorder,
                       images: dict[int, str], max_image: int | None = None, *, prompts: PromptSet,
                       settings: EvaluationSettings) -> list[dict[str, Any]]:
    """Content parts for one observation, after the prompt set's lead text (Football's, officially);
    images past ``max_image`` become the prompt set's short text, as officially."""
    sequence: list[str | Image.Image] = (
        list(observation.parts) if observation.parts is not None
        else [p for p in (observation.text, observation.image) if p is not None and p != ""]
    )
    if prompts.observation_lead:
        sequence.insert(0, prompts.observation_lead)
    parts: list[dict[str, Any]] = []
    shown = 0
    for item in sequence:
        if isinstance(item, Image.Image):
            if max_image is not None and shown >= max_image:
                parts.append({"type": "text", "text": prompts.unavailable_image})
                continue
            shown += 1
            part = image_part(item, media_type=image_media_type(settings))
            images[id(part)] = recorder.frame(item)
            parts.append(part)
        elif item:
            parts.append({"type": "text", "text": item})
    if trailer:
        parts.append({"type": "text", "text": trailer})
    return parts


def prompt_set(plugin: EnvironmentPlugin, flow: str, prompt_sets: Mapping[str, PromptSet] | None) -> PromptSet:
    """The prompt set ``flow`` runs with: the attempt's (its suite's, frozen with its submission), else
    the plug-in's own wording."""
    given = (prompt_sets or {}).get(flow)
    return given if given is not None else plugin.prompts(flow)


def _system_messages(prompts: PromptSet, settings: EvaluationSettings, extra_user: str | None, *,
                     system_as_parts: bool = False) -> list[dict[str, Any]]:
    """The rules (and ``extra_user`` after them) as the official flows open a conversation.

    With ``no_system_role`` (the official ``--model_no_system``) the rules become the first text part
    of the first user message, the extra text the next part. Official Online sends the system
    content as a list of one text part, Global as a plain string: ``system_as_parts`` picks which.
    """
    rules = {"type": "text", "text": prompts.system}
    extra = [{"type": "text", "text": extra_user}] if extra_user else []
    if settings.no_system_role:
        return [_user([rules] + extra)]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": [rules] if system_as_parts else prompts.system}]
    if extra:
        messages.append(_user(extra))
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


def run_global(plugin: EnvironmentPlugin, episode: Episode, model: ChatModel, settings: EvaluationSettings,
               recorder: TrajectoryRecorder, progress: ProgressCallback | None = None, *,
               prompt_sets: Mapping[str, PromptSet] | None = None) -> FlowResult:
    prompts = prompt_set(plugin, FLOW_GLOBAL, prompt_sets)
    session = _Session(model, settings, recorder, progress, plugin)
    images: dict[int, str] = {}
    observation = episode.reset()
    recorder.meta["initial_frame"] = recorder.frame(observation.image) if observation.image is not None else None
    first = [{"type": "text", "text": prompts.first_turn}] if prompts.first_turn else []
    messages = _system_messages(prompts, settings, None) + [
        _user(first + _observation_parts(observation, prompts.format_instruction, recorder, images,
                                         settings.max_image, prompts=prompts, settings=settings))
    ]
    retries = settings.parse_retries
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
        messages = messages + [_assistant(reply), _user([{"type": "text", "text": prompts.regenerate}])]
    assert parsed is not None
    if not parsed.ok:
        session.diagnostics.observe_failed_decision()
    episode.stop_observing()
    for action in parsed.actions:
        if episode.done:
            break
        result = episode.step(action)
        _record_step(session, episode, action, result, call_index, episode.replay_frame(result))
        session.diagnostics.observe_action(str(action), bool(result.info.get("changed", True)))
    session.tick()
    return _finish(episode, session, "no_action" if not parsed.ok else None)


def _image_count(message: dict[str, Any]) -> int:
    content = message["content"]
    return sum(1 for p in content if p.get("type") == "image_url") if isinstance(content, list) else 0


def _trim_memory(memory: list[dict[str, Any]], max_memory: int, max_image: int) -> list[dict[str, Any]]:
    """The official memory window: the last ``2·max_memory`` messages (all of them for 0); walking
    back from the newest, images stay in messages while the running image count is at most
    ``max_image``; the message that exceeds it and every older one lose all their images."""
    window = memory[-2 * max_memory:] if max_memory > 0 else list(memory)
    keep_from = len(window)
    seen = 0
    for index in range(len(window) - 1, -1, -1):
        seen += _image_count(window[index])
        if seen > max_image:
            break
        keep_from = index
    trimmed = []
    for index, message in enumerate(window):
        if index < keep_from and _image_count(message):
            message = {"role": message["role"],
                       "content": [p for p in message["content"] if p.get("type") != "image_url"]}
        trimmed.append(message)
    return trimmed


def run_online(plugin: EnvironmentPlugin, episode: Episode, model: ChatModel, settings: EvaluationSettings,
               recorder: TrajectoryRecorder, progress: ProgressCallback | None = None, *,
               prompt_sets: Mapping[str, PromptSet] | None = None) -> FlowResult:
    prompts = prompt_set(plugin, FLOW_ONLINE, prompt_sets)
    session = _Session(model, settings, recorder, progress, plugin)
    images: dict[int, str] = {}
    max_loop, max_memory, max_image = settings.max_loop, settings.max_memory, settings.max_image
    retries = settings.parse_retries

    observation = episode.reset()
    recorder.meta["initial_frame"] = recorder.frame(observation.image) if observation.image is not None else None
    header = _system_messages(prompts, settings, prompts.format_instruction, system_as_parts=True)
    memory: list[dict[str, Any]] = [
        _user(_observation_parts(observation, prompts.first_turn, recorder, images, max_image,
                                 prompts=prompts, settings=settings))]
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
            memory.append(_assistant(reply))
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
        session.diagnostics.observe_action(str(action), bool(result.info.get("changed", True)))
        memory.append(_user(_observation_parts(result.observation, prompts.next_turn, recorder, images,
                                               prompts=prompts, settings=settings)))
        session.tick()
    outcome = None if session.steps else "no_action"
    finished = _finish(episode, session, outcome)
    finished.extra["decisions"] = decisions
    return finished


def _finish(episode: Episode, session: _Session, outcome: str | None) -> FlowResult:
    details = episode.score_details()
    if outcome is None:
        outcome = str(details.get("outcome") or ("solved" if details.get("solved") else "unsolved"))
    return FlowResult(
        score=float(episode.score()),
        steps=session.steps,
        model_calls=session.calls,
        endpoint_retries=session.endpoint_retries,
        replies_cut=session.replies_cut,
        refusals=session.refusals,
        platform_wait_seconds=round(session.waited, 4),
        outcome=outcome,
        details=details,
        diagnostics=session.diagnostics,
        prompt_tokens=session.tokens.prompt_tokens,
        completion_tokens=session.tokens.completion_tokens,
    )


FLOW_RUNNERS = {FLOW_GLOBAL: run_global, FLOW_ONLINE: run_online}
