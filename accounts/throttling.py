"""The API's rate limits, counting anonymous callers by ``address_key``: an IPv6 client per /64."""
from __future__ import annotations

from typing import Any

from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

from accounts.selectors import address_key


class AddressAnonRateThrottle(AnonRateThrottle):
    def get_ident(self, request: Any) -> str:
        # DRF's own reading of the address (REMOTE_ADDR, or X-Forwarded-For behind NUM_PROXIES).
        return address_key(super().get_ident(request))


class AddressUserRateThrottle(UserRateThrottle):
    def get_ident(self, request: Any) -> str:
        return address_key(super().get_ident(request))
