"""The one notice the apps below the boards give when what a board shows may have changed.

The catalogue and the submissions sit below the boards and import nothing of them: a write that
changes what a board shows (a score, a team's name, a reported result, an environment's title) sends
:data:`shown_results_changed`, and the boards, which connect to it when their app is ready, drop and
restore what they cached and stored. Receivers run at once, inside the writer's transaction, as a
direct call would.
"""
from __future__ import annotations

from django.dispatch import Signal

#: One board: (environment, flow, subset).
BoardRef = tuple[str, str, str]

#: Sent with ``boards``: the boards whose rows changed, or none when every board may have.
shown_results_changed = Signal()


def results_changed(*boards: BoardRef) -> None:
    """Tell whoever shows results that ``boards`` (none: every board) changed."""
    shown_results_changed.send(sender=None, boards=boards)
