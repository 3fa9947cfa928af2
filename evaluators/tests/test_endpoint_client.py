"""The chat-completions client against real local HTTP servers."""
from __future__ import annotations

import base64
import email.utils
import io
import logging
import pickle
import socket
import time
import traceback
from collections.abc import Iterator
from typing import Any

import pytest
from PIL import Image

from evaluators.baselines.agents import IdleAgent
from evaluators.baselines.server import Fault, start_server
from evaluators.endpoints import (
    AUTH_ERROR,
    ENDPOINT_UNREACHABLE,
    INVALID_REQUEST,
    INVALID_RESPONSE,
    KINDS,
    RATE_LIMITED,
    REQUEST_TIMEOUT,
    RETRYABLE_KINDS,
    SERVER_ERROR,
    ChatClient,
    InfraError,
    image_part,
    models_url,
    normalise_endpoint_url,
    text_part,
)
from evaluators.endpoints.profile import RequestProfile
from evaluators.sokoban.prompts import ONLINE
from evaluators.tests.scripted_server import ScriptedServer

SECRET = "sk-test-9f8e7d6c5b4a39281706"

MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": ONLINE.system},
    {"role": "user", "content": [text_part(ONLINE.first_turn + "\n" + ONLINE.format_instruction)]},
]


def _complete(client: ChatClient) -> Any:
    return client.complete(MESSAGES, temperature=0.1, max_tokens=300)


def _fast_client(url: str, **overrides: Any) -> ChatClient:
    settings: dict[str, Any] = {"timeout": 5.0, "max_retries": 2, "backoff": 0.01, "max_backoff": 0.05}
    settings.update(overrides)
    return ChatClient(url, "test-model", settings.pop("api_key", None), **settings)


def _closed_port() -> int:
    # Bind to get a free port from the OS, then close it so nothing listens there.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _chat(content: Any, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "scripted",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }
    body.update(extra)
    return body


# --------------------------------------------------------------------------------------------
# URLs and message parts
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "given",
    [
        "http://host:8000/v1",
        "http://host:8000/v1/",
        "http://host:8000/v1//",
        "http://host:8000/v1/chat/completions",
        "http://host:8000/v1/chat/completions/",
        "  http://host:8000/v1  ",
        "HTTP://host:8000/v1",
    ],
)
def test_it_normalises_base_and_full_urls_to_the_chat_completions_url(given: str) -> None:
    assert normalise_endpoint_url(given) == "http://host:8000/v1/chat/completions"


def test_it_keeps_https_paths_and_queries_when_normalising() -> None:
    assert (
        normalise_endpoint_url("https://gw.example/openai/v1?api-version=2024#frag")
        == "https://gw.example/openai/v1/chat/completions?api-version=2024"
    )
    assert models_url("https://gw.example/v1/chat/completions/") == "https://gw.example/v1/models"


@pytest.mark.parametrize("bad", ["", "   ", "ftp://host/v1", "host:8000/v1", "file:///etc/passwd", "http:///v1"])
def test_it_rejects_urls_that_are_not_http_with_a_clear_message(bad: str) -> None:
    with pytest.raises(ValueError, match="endpoint URL"):
        normalise_endpoint_url(bad)


def test_image_parts_carry_png_bytes_in_a_data_uri() -> None:
    image = Image.new("RGB", (5, 3), (200, 10, 30))
    part = image_part(image)
    assert part["type"] == "image_url"
    prefix = "data:image/png;base64,"
    url = part["image_url"]["url"]
    assert url.startswith(prefix)
    raw = base64.b64decode(url[len(prefix) :])
    assert raw.startswith(b"\x89PNG")
    decoded = Image.open(io.BytesIO(raw))
    assert decoded.size == (5, 3) and decoded.convert("RGB").getpixel((2, 1)) == (200, 10, 30)
    assert text_part("hi") == {"type": "text", "text": "hi"}


def test_image_parts_convert_modes_png_cannot_store() -> None:
    url = image_part(Image.new("CMYK", (2, 2)))["image_url"]["url"]
    raw = base64.b64decode(url.split(",", 1)[1])
    assert Image.open(io.BytesIO(raw)).mode == "RGB"


# --------------------------------------------------------------------------------------------
# Answers
# --------------------------------------------------------------------------------------------


def test_it_returns_the_text_tokens_and_finish_reason_of_a_real_server() -> None:
    with start_server(IdleAgent(), api_key=SECRET) as server:
        completion = _complete(_fast_client(server.url, api_key=SECRET))
    assert completion.text.endswith("# action")
    assert completion.attempts == 1
    assert completion.finish_reason == "stop"
    assert completion.prompt_tokens and completion.completion_tokens
    assert completion.latency > 0
    assert completion.model == "test-model"


def test_it_sends_the_model_settings_and_extra_fields_in_the_request() -> None:
    with ScriptedServer([(200, _chat("ok"), {})]) as server:
        client = _fast_client(server.url, api_key=SECRET)
        client.complete(MESSAGES, temperature=0.3, max_tokens=42, top_p=0.95,
                        profile=RequestProfile(extra_body={"seed": 7}))
        client.complete(MESSAGES, temperature=0.0, max_tokens=1)
    first, second = (r["json"] for r in server.requests)
    assert first == {
        "model": "test-model",
        "messages": MESSAGES,
        "temperature": 0.3,
        "max_tokens": 42,
        "top_p": 0.95,
        "seed": 7,
    }
    assert "top_p" not in second and "frequency_penalty" not in second
    assert server.requests[0]["path"] == "/v1/chat/completions"
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {SECRET}"


def test_it_sends_the_frequency_penalty_the_official_client_sends() -> None:
    with ScriptedServer([(200, _chat("ok"), {})]) as server:
        _fast_client(server.url).complete(MESSAGES, temperature=0.1, max_tokens=300, top_p=0.95,
                                          frequency_penalty=1.0)
    sent = server.requests[0]["json"]
    assert (sent["temperature"], sent["top_p"], sent["frequency_penalty"], sent["max_tokens"]) == (0.1, 0.95, 1.0, 300)


def test_it_sends_no_authorization_header_without_a_key() -> None:
    with ScriptedServer([(200, _chat("ok"), {})]) as server:
        _complete(_fast_client(server.url))
    assert "Authorization" not in server.requests[0]["headers"]


def test_it_refuses_to_ask_for_a_streamed_answer() -> None:
    with pytest.raises(ValueError, match="stream"):
        _fast_client("http://127.0.0.1:9/v1").complete(
            MESSAGES, temperature=0.1, max_tokens=1, profile=RequestProfile(extra_body={"stream": True})
        )


@pytest.mark.parametrize("content", [None, ""])
def test_an_empty_or_null_content_is_an_empty_model_answer_not_an_infra_error(content: Any) -> None:
    with ScriptedServer([(200, _chat(content), {})]) as server:
        completion = _complete(_fast_client(server.url))
    assert completion.text == ""
    assert completion.attempts == 1


def test_it_joins_the_text_parts_of_a_content_list() -> None:
    parts = [
        {"type": "text", "text": "# analyze\nthink\n"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"type": "text", "text": "# action\nUp"},
    ]
    with ScriptedServer([(200, _chat(parts), {})]) as server:
        assert _complete(_fast_client(server.url)).text == "# analyze\nthink\n# action\nUp"


def test_it_tolerates_a_missing_usage_block() -> None:
    body = _chat("hi")
    del body["usage"]
    with ScriptedServer([(200, body, {})]) as server:
        completion = _complete(_fast_client(server.url))
    assert completion.text == "hi"
    assert completion.prompt_tokens is None and completion.completion_tokens is None


@pytest.mark.parametrize(
    "body",
    [
        {"choices": [{"index": 0, "finish_reason": "stop"}]},
        {"choices": [{"message": "just a string"}]},
        {"choices": "nope"},
        {"error": {"message": "upstream exploded"}},
        [1, 2, 3],
        _chat(42),
        _chat({"text": "an object"}),
        _chat([1, 2]),
    ],
)
def test_it_reports_answers_without_a_usable_message_as_invalid_responses(body: Any) -> None:
    with ScriptedServer([(200, body, {})]) as server, pytest.raises(InfraError) as caught:
        _complete(_fast_client(server.url, max_retries=1))
    assert caught.value.kind == INVALID_RESPONSE
    assert caught.value.attempts == 2


def test_without_a_model_id_it_calls_the_first_model_the_endpoint_lists_as_the_official_client_does() -> None:
    listing = {"object": "list", "data": [{"id": "first-model", "object": "model"}, {"id": "second"}]}
    with ScriptedServer([(200, listing, {}), (200, _chat("one"), {}), (200, _chat("two"), {})]) as server:
        client = ChatClient(server.url, "", timeout=5.0, max_retries=0)
        client.complete(MESSAGES, temperature=0.1, max_tokens=5)
        client.complete(MESSAGES, temperature=0.1, max_tokens=5)
    assert [(r["method"], r["path"]) for r in server.requests] == [
        ("GET", "/v1/models"), ("POST", "/v1/chat/completions"), ("POST", "/v1/chat/completions")]
    assert [r["json"]["model"] for r in server.requests[1:]] == ["first-model", "first-model"]


def test_without_a_model_id_an_endpoint_that_lists_no_model_is_an_infra_error_not_a_score() -> None:
    with ScriptedServer([(200, {"object": "list", "data": []}, {})]) as server, pytest.raises(InfraError) as caught:
        ChatClient(server.url, "", timeout=5.0, max_retries=0).complete(MESSAGES, temperature=0.1, max_tokens=5)
    assert "lists no model" in str(caught.value) and len(server.requests) == 1


def test_it_lists_the_models_of_an_endpoint() -> None:
    with start_server(IdleAgent()) as server:
        assert _fast_client(server.url).list_models() == ["idle"]


# --------------------------------------------------------------------------------------------
# Infrastructure failures and retries
# --------------------------------------------------------------------------------------------


def test_the_error_kinds_are_the_documented_constants() -> None:
    assert set(KINDS) == {
        "endpoint_unreachable",
        "auth_error",
        "rate_limited",
        "request_timeout",
        "server_error",
        "invalid_response",
        "invalid_request",
        "quota_exhausted",
        "not_chat_api",
    }
    assert RETRYABLE_KINDS == {ENDPOINT_UNREACHABLE, REQUEST_TIMEOUT, RATE_LIMITED, SERVER_ERROR, INVALID_RESPONSE}
    with pytest.raises(ValueError):
        InfraError("model_was_wrong", "no such kind")


def test_infra_errors_survive_pickling_with_their_kind_and_attempts() -> None:
    error = InfraError(RATE_LIMITED, "slow down", 429, attempts=4, retry_after=2.0)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.kind, copy.message, copy.status, copy.attempts, copy.retry_after) == (
        RATE_LIMITED,
        "slow down",
        429,
        4,
        2.0,
    )
    assert str(copy) == "rate_limited (HTTP 429): slow down"


@pytest.mark.parametrize("mode", ["500", "429", "garbage", "drop", "empty_choices", "timeout"])
def test_it_retries_each_transient_fault_and_succeeds_once_it_clears(mode: str) -> None:
    fault = Fault(mode, first_n=2, delay=2.0)
    with start_server(IdleAgent(), fault=fault) as server:
        completion = _complete(_fast_client(server.url, timeout=0.3, max_retries=3))
        requests_made = server.chat_requests
    assert completion.attempts == 3
    assert requests_made == 3
    assert completion.text.endswith("# action")


@pytest.mark.parametrize(
    ("mode", "kind", "status"),
    [
        ("500", SERVER_ERROR, 500),
        ("429", RATE_LIMITED, 429),
        ("garbage", INVALID_RESPONSE, 200),
        ("empty_choices", INVALID_RESPONSE, 200),
        ("drop", SERVER_ERROR, None),
        ("timeout", REQUEST_TIMEOUT, None),
    ],
)
def test_each_persistent_fault_ends_in_its_infra_error_kind_after_the_retries(
    mode: str, kind: str, status: int | None
) -> None:
    with start_server(IdleAgent(), fault=Fault(mode, delay=2.0)) as server:
        with pytest.raises(InfraError) as caught:
            _complete(_fast_client(server.url, timeout=0.3, max_retries=2))
        requests_made = server.chat_requests
    error = caught.value
    assert (error.kind, error.status) == (kind, status)
    assert error.attempts == 3
    assert requests_made == 3
    assert error.retryable


def test_only_every_nth_request_fails_with_an_every_n_fault() -> None:
    with start_server(IdleAgent(), fault=Fault("500", every_n=2)) as server:
        client = _fast_client(server.url, max_retries=0)
        _complete(client)
        with pytest.raises(InfraError):
            _complete(client)
        _complete(client)


def test_a_timeout_is_honoured_even_when_the_server_would_answer_later() -> None:
    with start_server(IdleAgent(), fault=Fault("timeout", delay=3.0)) as server:
        started = time.monotonic()
        with pytest.raises(InfraError) as caught:
            _complete(_fast_client(server.url, timeout=0.25, max_retries=0))
        elapsed = time.monotonic() - started
    assert caught.value.kind == REQUEST_TIMEOUT
    assert elapsed < 1.5


def test_a_refused_connection_is_an_unreachable_endpoint_after_the_retries() -> None:
    client = _fast_client(f"http://127.0.0.1:{_closed_port()}/v1", max_retries=2)
    with pytest.raises(InfraError) as caught:
        _complete(client)
    assert caught.value.kind == ENDPOINT_UNREACHABLE
    assert caught.value.attempts == 3
    assert caught.value.status is None


@pytest.mark.parametrize("client_key", [None, "sk-wrong-key"])
def test_auth_errors_are_not_retried(client_key: str | None) -> None:
    with start_server(IdleAgent(), api_key=SECRET) as server:
        with pytest.raises(InfraError) as caught:
            _complete(_fast_client(server.url, api_key=client_key, max_retries=3))
        reached_agent = server.chat_requests
    assert (caught.value.kind, caught.value.status, caught.value.attempts) == (AUTH_ERROR, 401, 1)
    assert reached_agent == 0
    assert "invalid or missing API key" in str(caught.value)


@pytest.mark.parametrize("status", [400, 403, 404, 413, 422])
def test_refused_requests_are_not_retried(status: int) -> None:
    body = {"error": {"message": f"refused with {status}", "type": "invalid_request_error"}}
    with ScriptedServer([(status, body, {})]) as server, pytest.raises(InfraError) as caught:
        _complete(_fast_client(server.url, max_retries=3))
    expected = AUTH_ERROR if status == 403 else INVALID_REQUEST
    assert (caught.value.kind, caught.value.status, caught.value.attempts) == (expected, status, 1)
    assert len(server.requests) == 1
    assert f"refused with {status}" in str(caught.value)


def test_a_wrong_path_on_a_real_server_is_an_invalid_request() -> None:
    with start_server(IdleAgent()) as server, pytest.raises(InfraError) as caught:
        _complete(_fast_client(server.url.replace("/v1", "/v2"), max_retries=3))
    assert (caught.value.kind, caught.value.status, caught.value.attempts) == (INVALID_REQUEST, 404, 1)


def test_redirects_are_reported_instead_of_followed() -> None:
    with (
        ScriptedServer([(308, b"", {"Location": "https://elsewhere.example/v1/chat/completions"})]) as server,
        pytest.raises(InfraError) as caught,
    ):
        _complete(_fast_client(server.url))
    assert caught.value.kind == INVALID_REQUEST
    assert "elsewhere.example" in str(caught.value)


def _recording_sleep() -> tuple[list[float], Any]:
    slept: list[float] = []
    return slept, slept.append


def test_a_retry_after_header_sets_the_wait_instead_of_the_backoff() -> None:
    slept, sleep = _recording_sleep()
    with start_server(IdleAgent(), fault=Fault("429", first_n=2, retry_after=0.4)) as server:
        client = ChatClient(server.url, "m", backoff=10.0, max_backoff=30.0, sleep=sleep)
        completion = _complete(client)
    assert completion.attempts == 3
    assert slept == [0.4, 0.4]


def test_a_retry_after_of_zero_retries_at_once_and_a_long_one_is_handed_to_the_caller_unasked() -> None:
    slept, sleep = _recording_sleep()
    with start_server(IdleAgent(), fault=Fault("429", first_n=1, retry_after=0)) as server:
        _complete(ChatClient(server.url, "m", backoff=10.0, sleep=sleep))
    assert slept == []
    # Longer than the client may hold its caller: no early request, the wait goes up with the error.
    with start_server(IdleAgent(), fault=Fault("429", first_n=1, retry_after=120)) as server:
        with pytest.raises(InfraError) as caught:
            _complete(ChatClient(server.url, "m", backoff=10.0, max_backoff=0.5, sleep=sleep))
        assert server.chat_requests == 1
    assert slept == []
    assert caught.value.kind == RATE_LIMITED and caught.value.retry_after == 120 and caught.value.retryable


def test_a_retry_after_header_is_really_waited_for() -> None:
    with start_server(IdleAgent(), fault=Fault("429", first_n=1, retry_after=0.3)) as server:
        started = time.monotonic()
        _complete(ChatClient(server.url, "m", backoff=0.0))
        elapsed = time.monotonic() - started
    assert elapsed >= 0.3


def test_a_retry_after_http_date_is_understood() -> None:
    slept, sleep = _recording_sleep()
    soon = email.utils.formatdate(time.time() + 60, usegmt=True)
    # A date in the past means "now"; it must not turn into a negative or absurd delay.
    answers = [
        (503, b"busy", {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}),
        (503, b"busy", {"Retry-After": soon}),
    ]
    with ScriptedServer(answers) as server:
        client = ChatClient(server.url, "m", backoff=10.0, max_backoff=0.5, sleep=sleep)
        with pytest.raises(InfraError) as caught:
            _complete(client)
    assert slept == [] and caught.value.attempts == 2
    assert caught.value.retry_after is not None and 55 <= caught.value.retry_after <= 60


def test_the_backoff_grows_exponentially_with_jitter_up_to_the_cap() -> None:
    slept, sleep = _recording_sleep()
    with start_server(IdleAgent(), fault=Fault("500")) as server:
        client = ChatClient(server.url, "m", max_retries=5, backoff=1.0, max_backoff=3.0, sleep=sleep)
        with pytest.raises(InfraError) as caught:
            _complete(client)
    assert caught.value.attempts == 6
    bounds = [(0.5, 1.0), (1.0, 2.0), (1.5, 3.0), (1.5, 3.0), (1.5, 3.0)]
    assert len(slept) == len(bounds)
    for delay, (low, high) in zip(slept, bounds):
        assert low <= delay <= high


# --------------------------------------------------------------------------------------------
# The API key stays secret
# --------------------------------------------------------------------------------------------


def _everything_said_about(error: BaseException) -> str:
    chain: list[BaseException] = []
    item: BaseException | None = error
    while item is not None and item not in chain:
        chain.append(item)
        item = item.__cause__ or item.__context__
    parts = ["".join(traceback.format_exception(error))]
    for exc in chain:
        parts += [str(exc), repr(exc), repr(vars(exc)) if hasattr(exc, "__dict__") else ""]
    return "\n".join(parts)


@pytest.fixture
def failing_endpoints() -> Iterator[dict[str, str]]:
    echo = ScriptedServer([(500, b"proxy saw {auth}", {})])
    echo_ok = ScriptedServer([(200, b"not json, but your header was {auth}", {})])
    echo_json = ScriptedServer([(400, b'{"error": {"message": "bad key? {auth}"}}', {"X-Echo": "x"})])
    with (
        echo,
        echo_ok,
        echo_json,
        start_server(IdleAgent(), api_key="sk-another-key") as auth,
        start_server(IdleAgent(), fault=Fault("timeout", delay=2.0)) as slow,
        start_server(IdleAgent(), fault=Fault("drop")) as drop,
    ):
        yield {
            "echoed in a 500": echo.url,
            "echoed in a 200": echo_ok.url,
            "refused": echo_json.url,
            "wrong key": auth.url,
            "timeout": slow.url,
            "dropped": drop.url,
            "unreachable": f"http://127.0.0.1:{_closed_port()}/v1",
        }


def test_the_api_key_never_appears_in_errors_reprs_or_logs(
    failing_endpoints: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    said: list[str] = []
    kinds: dict[str, str] = {}
    for name, url in failing_endpoints.items():
        client = ChatClient(url, "m", SECRET, timeout=0.3, max_retries=1, backoff=0.01)
        said.append(repr(client))
        with pytest.raises(InfraError) as caught:
            client.complete(MESSAGES, temperature=0.1, max_tokens=10)
        said.append(_everything_said_about(caught.value))
        kinds[name] = caught.value.kind
    # Each scenario must really have failed in its own way, or the check below proves little.
    assert kinds == {
        "echoed in a 500": SERVER_ERROR,
        "echoed in a 200": INVALID_RESPONSE,
        "refused": INVALID_REQUEST,
        "wrong key": AUTH_ERROR,
        "timeout": REQUEST_TIMEOUT,
        "dropped": SERVER_ERROR,
        "unreachable": ENDPOINT_UNREACHABLE,
    }
    text = "\n".join(said)
    assert "[redacted]" in text, "the echoing servers should have had the key scrubbed"
    assert SECRET not in text
    assert SECRET not in caplog.text
    assert caplog.records, "the failures should have been logged"
