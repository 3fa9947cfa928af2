"""Talking to teams' OpenAI-compatible endpoints, and telling infrastructure failures from answers."""
from evaluators.endpoints.client import ChatClient, models_url, normalise_endpoint_url
from evaluators.endpoints.errors import (
    AUTH_ERROR,
    ENDPOINT_UNREACHABLE,
    INVALID_REQUEST,
    INVALID_RESPONSE,
    KINDS,
    NOT_CHAT_API,
    QUOTA_EXHAUSTED,
    RATE_LIMITED,
    REQUEST_TIMEOUT,
    RETRYABLE_KINDS,
    SERVER_ERROR,
    InfraError,
)
from evaluators.endpoints.messages import Completion, image_part, text_part

__all__ = [
    "AUTH_ERROR",
    "ENDPOINT_UNREACHABLE",
    "INVALID_REQUEST",
    "INVALID_RESPONSE",
    "KINDS",
    "NOT_CHAT_API",
    "QUOTA_EXHAUSTED",
    "RATE_LIMITED",
    "REQUEST_TIMEOUT",
    "RETRYABLE_KINDS",
    "SERVER_ERROR",
    "ChatClient",
    "Completion",
    "InfraError",
    "image_part",
    "models_url",
    "normalise_endpoint_url",
    "text_part",
]
