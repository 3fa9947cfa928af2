"""How the API's lists are paged: DRF's limit and offset paging, its parameters read strictly.

A list answers the page's rows as the plain JSON list it always was (the command-line client and
scripts read that), and says where it stands in headers: ``X-Total-Count`` (the rows of the whole
list) and ``Link`` (the next and previous pages, rel="next" and rel="prev", as GitHub's API does).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from drf_spectacular.utils import OpenApiParameter
from rest_framework import exceptions, serializers
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response

#: The largest offset a list or a trajectory page takes; far past any real list, far below 2**63 (the
#: database's OFFSET is a 64-bit integer: a larger one would fail there, as a server error).
OFFSET_MAX = 10**9
#: The most rows one page of a list holds, and how many it holds unless asked.
LIST_PAGE_MAX = 200
LIST_PAGE_DEFAULT = 50


class PageQuery(serializers.Serializer):
    """A list's page: ``limit`` rows from the ``offset``-th."""

    limit = serializers.IntegerField(required=False, default=LIST_PAGE_DEFAULT, min_value=1, max_value=LIST_PAGE_MAX,
                                     help_text="how many rows")
    offset = serializers.IntegerField(required=False, default=0, min_value=0, max_value=OFFSET_MAX,
                                      help_text="the first row to return, from 0")


class BadQuery(exceptions.ValidationError):
    """A query string that cannot be read: ``errors`` maps each refused parameter to what it takes. An API
    answers it as any validation error, a 400 naming the parameters; a page shows its own 400 page."""

    def __init__(self, errors: Mapping[str, Sequence[Any]]) -> None:
        self.errors = {name: [str(message) for message in messages] for name, messages in errors.items()}
        super().__init__({"detail": f"invalid query parameter: {', '.join(self.errors)}", **self.errors})


def checked(serializer_class: type[serializers.Serializer], query: Mapping[str, Any]) -> dict[str, Any]:
    """``query``'s parameters as ``serializer_class`` reads them; BadQuery names each it refuses."""
    serializer = serializer_class(data=query)
    if not serializer.is_valid():
        raise BadQuery(serializer.errors)
    return dict(serializer.validated_data)


def checked_query(serializer_class: type[serializers.Serializer], request: Any) -> dict[str, Any]:
    """The query string's parameters, read by ``serializer_class``: a bad value is a 400 naming it."""
    # Django's request and DRF's (which hands attributes on to Django's) both have the query as GET.
    return checked(serializer_class, request.GET)


class ListPagination(LimitOffsetPagination):
    """DRF's limit and offset paging with ``PageQuery``'s bounds: a limit or offset out of range is a 400
    naming it, where DRF's own would quietly read the default or the maximum instead."""

    default_limit = LIST_PAGE_DEFAULT
    max_limit = LIST_PAGE_MAX
    #: The parameters' bounds and defaults.
    query_class: type[PageQuery] = PageQuery

    def paginate_queryset(self, queryset: Any, request: Request, view: Any = None) -> list[Any] | None:
        self.page = checked_query(self.query_class, request)
        return super().paginate_queryset(queryset, request, view)

    def get_limit(self, request: Request) -> int:
        return int(self.page["limit"])

    def get_offset(self, request: Request) -> int:
        return int(self.page["offset"])

    def get_paginated_response(self, data: Any) -> Response:
        links = [f'<{url}>; rel="{rel}"' for rel, url in (("next", self.get_next_link()),
                                                           ("prev", self.get_previous_link())) if url]
        headers = {"X-Total-Count": str(self.count), **({"Link": ", ".join(links)} if links else {})}
        return Response(data, headers=headers)


def paged(request: Request, rows: Any, shown: Callable[[Sequence[Any]], Any]) -> Response:
    """The page of ``rows`` (a queryset, or a list) the request asks for, each shown by ``shown``."""
    paginator = ListPagination()
    page = paginator.paginate_queryset(rows, request) or []
    return paginator.get_paginated_response(shown(page))


#: What the schema says of a paged list's headers.
PAGE_HEADERS = [
    OpenApiParameter("X-Total-Count", int, OpenApiParameter.HEADER, response=[200],
                     description="rows in the whole list"),
    OpenApiParameter("Link", str, OpenApiParameter.HEADER, response=[200],
                     description='the next and previous pages, where there are: <url>; rel="next", <url>; rel="prev"'),
]
