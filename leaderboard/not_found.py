"""The site's page for an address that shows nothing: on a board's address whose environment, flow or set
names no board, it says which part is wrong and links every board (the same page of each)."""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import Resolver404, resolve, reverse

from leaderboard.board_names import board_name_problem, known_boards

#: The pages addressed by a board's environment, flow and set; the list links the same page of each board.
BOARD_PAGES = ("board", "board-analysis", "board-compare", "board-cost")


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """Django's 404 handler for the site (config/urls.py), and the page config.notfound shows instead of
    Django's technical one when DEBUG is on."""
    context: dict[str, object] = {}
    try:
        match = request.resolver_match or resolve(request.path_info)
    except Resolver404:
        match = None
    if match is not None and match.url_name in (*BOARD_PAGES, "board-export"):
        kwargs = match.kwargs
        problem = board_name_problem(kwargs["env"], kwargs["flow"], kwargs["subset"])
        if problem is not None:
            # An export's address lists the boards themselves: an export of each is on its board.
            name = match.url_name if match.url_name in BOARD_PAGES else "board"
            grouped: dict[str, list[tuple[str, str]]] = {}
            for board in known_boards():
                url = reverse(name, args=[board.env, board.flow, board.subset])
                grouped.setdefault(board.title, []).append((f"{board.flow.title()} · {board.subset}", url))
            context.update(problem=problem, boards=list(grouped.items()))
    return render(request, "404.html", context, status=404)
