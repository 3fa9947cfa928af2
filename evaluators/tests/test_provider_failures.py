"""Each provider's documented failures, through the real client against a local double: what kind
each becomes, how many requests it costs, and what the team reads."""
from __future__ import annotations

from typing import Any

import pytest

from evaluators.baselines.agents import make_agent
from evaluators.endpoints import (
    INVALID_REQUEST,
    NOT_CHAT_API,
    QUOTA_EXHAUSTED,
    RATE_LIMITED,
    SERVER_ERROR,
    ChatClient,
    InfraError,
    text_part,
)
from evaluators.endpoints.profile import OFFICIAL_PROFILE, RequestProfile
from evaluators.tests import provider_doubles as doubles
from evaluators.tests.scripted_server import ScriptedServer

MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": [text_part("# action\nwhere next?")]}]
REASONING_PROFILE = RequestProfile(token_limit_parameter="max_completion_tokens",
                                   omit_parameters=frozenset({"temperature", "top_p", "frequency_penalty"}),
                                   extra_body={"reasoning_effort": "low"})


def _client(server: ScriptedServer, slept: list[float], **overrides: Any) -> ChatClient:
    options: dict[str, Any] = {"timeout": 10.0, "max_retries": 3, "backoff": 0.01, "max_backoff": 30.0,
                               "sleep": slept.append}
    options.update(overrides)
    return ChatClient(server.url, "model-x", "sk-team-key-0123456789", **options)


def _ask(client: ChatClient, profile: RequestProfile = OFFICIAL_PROFILE) -> Any:
    return client.complete(MESSAGES, temperature=0.1, max_tokens=300, top_p=0.95, frequency_penalty=1.0,
                           profile=profile)


def _fails(answers: Any, **overrides: Any) -> tuple[InfraError, ScriptedServer, list[float]]:
    slept: list[float] = []
    with ScriptedServer(answers) as server, pytest.raises(InfraError) as caught:
        _ask(_client(server, slept, **overrides))
    return caught.value, server, slept


def test_an_openai_spent_quota_costs_one_request_and_is_named_in_openai_words() -> None:
    error, server, slept = _fails(doubles.always(429, doubles.OPENAI_QUOTA, doubles.OPENAI_HEADERS))
    assert error.kind == QUOTA_EXHAUSTED and not error.retryable
    assert server.hits == 1 and slept == []
    assert "OpenAI: insufficient_quota — You exceeded your current quota" in error.message
    assert error.code == "insufficient_quota"


def test_an_anthropic_spend_limit_is_not_waited_for_as_a_rate_limit() -> None:
    headers = {**doubles.ANTHROPIC_HEADERS, "retry-after": "2400"}
    error, server, slept = _fails(doubles.always(429, doubles.ANTHROPIC_SPEND_LIMIT, headers))
    assert error.kind == QUOTA_EXHAUSTED and server.hits == 1 and slept == []
    assert "Anthropic: rate_limit_error — This request would exceed your account's monthly spend limit" in error.message


def test_an_anthropic_credit_balance_refusal_is_a_spent_quota() -> None:
    error, server, _ = _fails(doubles.always(400, doubles.ANTHROPIC_CREDIT, doubles.ANTHROPIC_HEADERS))
    assert error.kind == QUOTA_EXHAUSTED and server.hits == 1
    assert "credit balance is too low" in error.message


def test_an_anthropic_overload_is_retried_as_a_passing_server_error() -> None:
    answers = [(529, doubles.ANTHROPIC_OVERLOADED, doubles.ANTHROPIC_HEADERS),
               (200, doubles.chat_completion("# action\nUp"), doubles.JSON)]
    slept: list[float] = []
    with ScriptedServer(answers) as server:
        completion = _ask(_client(server, slept))
    assert completion.text == "# action\nUp" and completion.attempts == 2 and len(slept) == 1


def test_an_azure_rate_limit_waits_its_retry_after_and_then_answers() -> None:
    answers = [(429, doubles.AZURE_RATE, {**doubles.AZURE_HEADERS, "Retry-After": "2"}),
               (200, doubles.chat_completion("# action\nUp"), doubles.AZURE_HEADERS)]
    slept: list[float] = []
    with ScriptedServer(answers) as server:
        completion = _ask(_client(server, slept))
    assert slept == [2.0] and completion.attempts == 2 and server.hits == 2


def test_a_gemini_daily_quota_is_spent_whatever_retry_delay_it_gives() -> None:
    body = doubles.gemini_quota("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "43s")
    error, server, _ = _fails(doubles.always(429, body))
    assert error.kind == QUOTA_EXHAUSTED and server.hits == 1
    # Gemini's body is a JSON list: its message is quoted all the same.
    assert "Gemini: RESOURCE_EXHAUSTED — You exceeded your current quota" in error.message


def test_a_gemini_per_minute_quota_is_waited_out_by_its_retry_delay() -> None:
    answers = [(429, doubles.gemini_quota("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "7s"), doubles.JSON),
               (200, doubles.chat_completion("# action\nUp"), doubles.JSON)]
    slept: list[float] = []
    with ScriptedServer(answers) as server:
        completion = _ask(_client(server, slept))
    assert slept == [7.0] and completion.attempts == 2 and server.hits == 2


def test_a_retry_after_longer_than_the_platform_honours_is_not_waited_for_or_asked_again() -> None:
    answers = doubles.always(429, doubles.AZURE_RATE, {**doubles.AZURE_HEADERS, "Retry-After": "7200"})
    error, server, slept = _fails(answers, max_retry_after=600.0)
    assert error.kind == RATE_LIMITED and not error.retryable and server.hits == 1 and slept == []
    assert "asks to wait 7200s, longer than the 600s allowed" in error.message


def test_a_refused_max_tokens_costs_one_request_and_names_the_setting_that_fixes_it() -> None:
    error, server, _ = _fails(doubles.reasoning_model(make_agent("idle")))
    assert error.kind == INVALID_REQUEST and server.hits == 1
    assert "OpenAI: unsupported_parameter" in error.message
    assert "set token_limit_parameter=max_completion_tokens in the submission's request settings" in error.message


def test_a_refused_temperature_names_omit_parameters() -> None:
    slept: list[float] = []
    profile = RequestProfile(token_limit_parameter="max_completion_tokens")
    with ScriptedServer(doubles.reasoning_model(make_agent("idle"))) as server, pytest.raises(InfraError) as caught:
        _ask(_client(server, slept), profile)
    assert server.hits == 1 and "set omit_parameters=temperature" in caught.value.message


@pytest.mark.parametrize("param", ["top_p", "frequency_penalty"])
def test_a_refused_sampling_parameter_names_omit_parameters(param: str) -> None:
    error, _, _ = _fails(doubles.always(400, doubles.openai_unsupported(param), doubles.OPENAI_HEADERS))
    assert f"set omit_parameters={param}" in error.message


def test_a_reasoning_model_answers_requests_made_with_its_profile() -> None:
    slept: list[float] = []
    with ScriptedServer(doubles.reasoning_model(make_agent("idle"))) as server:
        completion = _ask(_client(server, slept), REASONING_PROFILE)
    sent = server.requests[0]["json"]
    assert set(sent) == {"model", "messages", "max_completion_tokens", "reasoning_effort"}
    assert sent["max_completion_tokens"] == 300 and sent["reasoning_effort"] == "low"
    assert completion.reasoning_tokens == 64 and completion.attempts == 1


def test_an_html_sign_in_page_answering_200_is_never_asked_again() -> None:
    error, server, _ = _fails(doubles.always(200, doubles.SIGN_IN_PAGE, {"Content-Type": "text/html; charset=utf-8"}))
    assert error.kind == NOT_CHAT_API and server.hits == 1
    assert "an HTML page, not a chat completion" in error.message


def test_an_unasked_event_stream_is_never_asked_again() -> None:
    stream = b'data: {"choices":[{"delta":{"content":"Up"}}]}\n\ndata: [DONE]\n\n'
    error, server, _ = _fails(doubles.always(200, stream, {"Content-Type": "text/event-stream"}))
    assert error.kind == NOT_CHAT_API and server.hits == 1 and "event stream" in error.message


def test_a_body_cut_short_is_asked_again() -> None:
    answers = [(200, b'{"id": "chatcmpl-1", "choi', doubles.JSON),
               (200, doubles.chat_completion("# action\nUp"), doubles.JSON)]
    slept: list[float] = []
    with ScriptedServer(answers) as server:
        completion = _ask(_client(server, slept))
    assert completion.attempts == 2 and server.hits == 2


def test_an_nginx_503_page_is_retried_and_reported_as_a_server_error() -> None:
    error, server, _ = _fails(doubles.always(503, doubles.NGINX_503, {"Content-Type": "text/html", "Server": "nginx"}))
    assert error.kind == SERVER_ERROR and server.hits == 4 and error.attempts == 4
    assert "Service Unavailable: nginx: 503 Service Temporarily Unavailable" in error.message


def test_a_llama_cpp_model_still_loading_is_retried() -> None:
    error, server, _ = _fails(doubles.always(503, doubles.LLAMA_CPP_UNAVAILABLE))
    assert error.kind == SERVER_ERROR and server.hits == 4 and "unavailable_error — Loading model" in error.message


@pytest.mark.parametrize("status, body, quoted", [
    (400, doubles.VLLM_CONTEXT, "This model's maximum context length is 4096 tokens"),
    (422, doubles.TGI_VALIDATION, "Unprocessable Entity: Input validation error: `inputs` tokens"),
    (404, doubles.OLLAMA_NOT_FOUND, 'api_error — model "gpt-x" not found'),
])
def test_a_refused_request_of_each_server_is_asked_once_and_quoted(status: int, body: Any, quoted: str) -> None:
    error, server, _ = _fails(doubles.always(status, body))
    assert error.kind == INVALID_REQUEST and server.hits == 1
    assert quoted in error.message


def test_an_error_body_of_any_json_shape_is_quoted() -> None:
    body = [{"detail": [{"loc": ["body", "messages"], "msg": "field required", "type": "missing"}]}]
    error, _, _ = _fails(doubles.always(422, body))
    assert "field required" in error.message and "no error message" not in error.message


def test_the_reply_s_finish_reason_refusal_and_reasoning_are_read() -> None:
    slept: list[float] = []
    body = doubles.chat_completion("", finish_reason="length", refusal="I can't help with that.",
                                   reasoning_content="thinking " * 10, reasoning_tokens=30)
    with ScriptedServer([(200, body, doubles.JSON)]) as server:
        completion = _ask(_client(server, slept))
    assert completion.finish_reason == "length" and completion.refusal == "I can't help with that."
    assert completion.reasoning_chars == len("thinking " * 10) and completion.reasoning_tokens == 30


def test_the_time_lost_to_retries_is_counted_apart_from_the_model_s() -> None:
    answers = [(503, doubles.NGINX_503, {"Content-Type": "text/html"}),
               (200, doubles.chat_completion("# action\nUp"), doubles.JSON)]
    with ScriptedServer(answers) as server:
        completion = ChatClient(server.url, "m", backoff=0.3, max_backoff=0.3, timeout=10).complete(
            MESSAGES, temperature=0.1, max_tokens=10)
    assert completion.attempts == 2
    assert completion.waited >= 0.15 and completion.latency < completion.waited + 1
