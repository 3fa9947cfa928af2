"""Endpoints that answer as real providers document: their statuses, headers and JSON bodies.

Each double is a :class:`ScriptedServer` answering by request. The bodies follow the providers'
documented error formats: OpenAI's ``{"error": {message, type, param, code}}`` (also Azure OpenAI,
llama.cpp, Ollama), vLLM's top-level ``{"object": "error", …}``, TGI's ``{"error", "error_type"}``,
Anthropic's ``{"type": "error", "error": {type, message}}`` and Gemini's list of Google RPC errors.
"""
from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from evaluators.baselines.agents import BaselineAgent
from evaluators.tests.scripted_server import Answer

OPENAI_HEADERS = {"Content-Type": "application/json", "openai-organization": "org-test", "openai-version": "2020-10-01",
                  "x-request-id": "req_test"}
ANTHROPIC_HEADERS = {"Content-Type": "application/json", "anthropic-ratelimit-requests-limit": "50",
                     "request-id": "req_011test"}
AZURE_HEADERS = {"Content-Type": "application/json", "apim-request-id": "8b5b0f7a-test", "x-ms-region": "East US"}
JSON = {"Content-Type": "application/json"}

OPENAI_QUOTA = {"error": {
    "message": "You exceeded your current quota, please check your plan and billing details. For more information on "
               "this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
    "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}}
OPENAI_MAX_TOKENS = {"error": {
    "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' "
               "instead.", "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}}
OPENAI_TEMPERATURE = {"error": {
    "message": "Unsupported value: 'temperature' does not support 0.1 with this model. Only the default (1) value is "
               "supported.", "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"}}


def openai_unsupported(param: str) -> dict[str, Any]:
    return {"error": {"message": f"Unsupported parameter: '{param}' is not supported with this model.",
                      "type": "invalid_request_error", "param": param, "code": "unsupported_parameter"}}


ANTHROPIC_SPEND_LIMIT = {"type": "error", "error": {
    "type": "rate_limit_error",
    "message": "This request would exceed your account's monthly spend limit. Please try again later."}}
ANTHROPIC_CREDIT = {"type": "error", "error": {
    "type": "invalid_request_error",
    "message": "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade "
               "or purchase credits."}}
ANTHROPIC_OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def gemini_quota(quota_id: str, retry_delay: str) -> list[dict[str, Any]]:
    """Gemini's 429: a JSON list of one Google RPC error, with the quota and a retry delay."""
    return [{"error": {
        "code": 429,
        "message": "You exceeded your current quota, please check your plan and billing details. For more "
                   "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.",
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure",
             "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                             "quotaId": quota_id}]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay},
        ]}}]


AZURE_RATE = {"error": {"code": "429", "message": (
    "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token "
    "rate limit of your current OpenAI S0 pricing tier. Please retry after 2 seconds.")}}
VLLM_CONTEXT = {"object": "error", "message": (
    "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, "
    "1000 in the completion). Please reduce the length of the messages or completion."),
    "type": "BadRequestError", "param": None, "code": 400}
TGI_VALIDATION = {"error": "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 3900 "
                           "`inputs` tokens and 1000 `max_new_tokens`", "error_type": "validation"}
LLAMA_CPP_UNAVAILABLE = {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}
OLLAMA_NOT_FOUND = {"error": {"message": "model \"gpt-x\" not found, try pulling it first", "type": "api_error",
                              "param": None, "code": None}}
SIGN_IN_PAGE = b"<!DOCTYPE html><html><head><title>Sign in</title></head><body><form>...</form></body></html>"
NGINX_503 = (b"<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n"
             b"<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n<hr><center>nginx</center>\r\n"
             b"</body>\r\n</html>")


def chat_completion(text: str, *, model: str = "double", finish_reason: str = "stop",
                    reasoning_tokens: int | None = None, refusal: str | None = None,
                    reasoning_content: str | None = None) -> dict[str, Any]:
    """A chat completion as OpenAI's reference documents it."""
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": refusal}
    if reasoning_content is not None:
        message["reasoning_content"] = reasoning_content
    usage: dict[str, Any] = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    if reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    return {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": usage}


def always(status: int, body: Any, headers: dict[str, str] | None = None) -> Callable[[dict[str, Any]], Answer]:
    """The same answer to every request."""
    return lambda request: (status, body, dict(headers or JSON))


def reasoning_model(agent: BaselineAgent) -> Callable[[dict[str, Any]], Answer]:
    """An OpenAI reasoning model (o-series, GPT-5): it refuses ``max_tokens``, a temperature other than
    1, ``top_p`` and ``frequency_penalty`` as OpenAI documents, and bills reasoning tokens."""

    def answer(request: dict[str, Any]) -> Answer:
        body = request.get("json") or {}
        if request["path"].endswith("/models"):
            return 200, {"object": "list", "data": [{"id": "o-double", "object": "model"}]}, dict(OPENAI_HEADERS)
        if "max_tokens" in body:
            return 400, OPENAI_MAX_TOKENS, dict(OPENAI_HEADERS)
        if "temperature" in body and body["temperature"] != 1:
            return 400, OPENAI_TEMPERATURE, dict(OPENAI_HEADERS)
        for param in ("top_p", "frequency_penalty"):
            if param in body:
                return 400, openai_unsupported(param), dict(OPENAI_HEADERS)
        if body.get("reasoning_effort") not in (None, "minimal", "low", "medium", "high"):
            return 400, openai_unsupported("reasoning_effort"), dict(OPENAI_HEADERS)
        reply = agent.reply(body["messages"])
        return 200, chat_completion(reply, model=body.get("model") or "o-double", reasoning_tokens=64), dict(
            OPENAI_HEADERS)

    return answer

