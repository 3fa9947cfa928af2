"""``Authorization: Bearer mbw_…`` for the REST API."""
from __future__ import annotations

import math
import time
from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from accounts.models import ApiToken
from accounts.selectors import client_ip, locked_until, token_authenticate, token_scopes
from accounts.services import token_failure_record, token_touch


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Any) -> tuple[Any, ApiToken] | None:
        header = authentication.get_authorization_header(request).decode("latin-1").split()
        if not header or header[0] != self.keyword:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("the Authorization header is 'Bearer <token>'")
        token = token_authenticate(header[1])
        if token is None:
            ip = client_ip(request)
            until = locked_until(token_scopes(ip=ip))
            if until is not None:
                # Only wrong tokens are held: a team's right token from the same address (a shared
                # NAT, a CI runner) keeps working while a guesser there is slowed down.
                raise exceptions.Throttled(wait=max(1, math.ceil(until.timestamp() - time.time())),
                                           detail="too many wrong API tokens from your address")
            token_failure_record(ip=ip)
            raise exceptions.AuthenticationFailed("unknown or revoked API token")
        token_touch(token=token)
        return token.created_by, token

    def authenticate_header(self, request: Any) -> str:
        return self.keyword


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """Describes the team tokens in the OpenAPI schema."""

    target_class = "accounts.authentication.BearerTokenAuthentication"
    name = "teamToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {"type": "http", "scheme": "bearer",
                "description": "A team's API token: mbr_… (read-only) or mbw_… (read-write)."}
