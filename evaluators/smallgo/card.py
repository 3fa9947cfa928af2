"""The Small Go metric card shown on the site."""
from __future__ import annotations

METRIC_CARD: dict[str, object] = {
    "formula": "score = 100 · A_B / N²",
    "terms": [
        ("A_B", "Black's area when the episode ends: its stones, and every empty point from which only black "
                "stones can be reached (area scoring; every stone on the board counts as alive)"),
        ("N", "the board's side, 3 to 9 points"),
    ],
    "normalisation": "Not normalised across environments: the best reachable area depends on GNU Go's play.",
    "facts": [
        "White is GNU Go 3.8 at the scenario's level, with the scenario's seed: the same moves meet the same "
        "answers.",
        "A move onto an occupied point, a suicide, a ko or a point off the board is played as a pass.",
        "The episode ends after Black's pass answered by White's pass, White's resignation, or max_moves "
        "Black moves.",
        "Example: on a 5 × 5 board Black holds 9 stones and surrounds 4 empty points: 100 · 13 / 25 = 52.",
    ],
    "flows": [
        "Global: one request showing the starting position; every move read from the reply is played in order, "
        "GNU Go answering each, until the episode ends.",
        "Online: one move per request, for at most max_loop requests.",
    ],
    "parsers": [
        ("Global", "the official Global parser: text after the first '### Actions', split on commas, each piece "
                   "kept only if it is exactly a point name (A1 to J9, capital letter) or 'pass'."),
        ("Online", "the official Online parser: the text after '# action', stripped, must be exactly one move."),
    ],
    "diagnostics": [
        ("IA", "a reply without a readable move, or with a piece that is not one."),
        ("RA", "replies made only of passes, or the same reply repeated at its tail."),
    ],
    "quirks": [
        "Small Go is the platform's own environment, not part of MageBench: every rule above is the platform's.",
    ],
    "deviations": [
        "None: there is no official implementation to deviate from.",
    ],
}
