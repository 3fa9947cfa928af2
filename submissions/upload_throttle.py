"""One budget of files per user and per address, shared by uploads and checks on the site and the API.

A check spends no quota, yet reading a file costs the site as much as an upload's: without this
budget one account could keep every web process parsing. Counted in the cache the API throttles use
(one shared cache in production), at MAGEBENCH_THROTTLE_UPLOADS, read at each request.
"""
from __future__ import annotations

from abc import abstractmethod
from typing import Any

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from accounts.selectors import address_key, client_ip


class _UploadThrottle(SimpleRateThrottle):
    scope = "uploads"

    def get_rate(self) -> str:
        return settings.MAGEBENCH_THROTTLE_UPLOADS

    @abstractmethod
    def who(self, request: Any) -> str | None:
        """Whose budget a request spends; None: nobody's (this throttle lets it through)."""

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        who = self.who(request)
        return None if who is None else self.cache_format % {"scope": self.scope, "ident": who}


class UploadUserThrottle(_UploadThrottle):
    """Per user, whichever team or token they send the file with."""

    def who(self, request: Any) -> str | None:
        user = getattr(request, "user", None)
        return f"user-{user.pk}" if user is not None and user.is_authenticated else None


class UploadAddressThrottle(_UploadThrottle):
    """Per address, so that many accounts from one place share one budget."""

    def who(self, request: Any) -> str | None:
        # Counted as every other per-address budget is: an IPv6 client per /64.
        return f"address-{address_key(client_ip(request))}"


UPLOAD_THROTTLES = (UploadUserThrottle, UploadAddressThrottle)


def upload_wait(request: Any) -> float | None:
    """Counts one file against the budgets; the seconds to wait when one of them is used up, else None."""
    waits = []
    view = APIView()  # the throttles key on the request alone; a page has no view of its own to give
    for throttle_class in UPLOAD_THROTTLES:
        throttle = throttle_class()
        if not throttle.allow_request(request, view):
            waits.append(throttle.wait() or 1.0)
    return max(waits) if waits else None
