"""The GridWalk metric card shown on the site: formula, terms, parsers and IA/RA rules."""
from __future__ import annotations

from evaluators.agents.diagnostics import RA_MAX_NGRAM, RA_MAX_NOOP_DECISIONS, RA_MIN_TAIL_REPEATS

METRIC_CARD: dict[str, object] = {
    "formula": "score = 100 · max(0, 1 − d_T / d_0)",
    "terms": [
        ("d_t", "the shortest number of moves from the walker's square to the goal after t moves, around the walls "
                "(breadth-first search; outside the grid counts as wall)"),
        ("d_0", "that distance from the start; every level has d_0 ≥ 1"),
        ("T", "the moves made when the episode ends: on the goal, after the level's max_steps moves, or when the "
              "flow stops asking"),
    ],
    "normalisation": (
        "Floor 0 (standing still keeps d_T = d_0); ceiling 100 (the goal reached, d_T = 0). The summary's"
        " score is the progress score itself."),
    "facts": [
        "Reaching the goal scores exactly 100; ending where it started, or farther away, scores 0.",
        "An agent that never moves scores exactly 0 on every level.",
        "Example: d_0 = 6 and the walker ends 2 moves from the goal: 100 · (1 − 2/6) = 66.666667.",
        "A step's reward is the distance it gained: 1 towards the goal, −1 away from it, 0 into a wall.",
        "The model sees the grid as an image (blue disc: walker, green square: goal, dark squares: walls) and a "
        "line giving the number of rows and columns.",
    ],
    "flows": [
        "Global: one request showing the starting position; every move read from the reply is carried out in "
        "order until the episode ends.",
        "Online: one move per request, for at most max_loop requests; the conversation keeps the last "
        "2 · max_memory messages and images in the newest max_image of them.",
    ],
    "parsers": [
        ("Global", "text after the first 'Moves:' (or the whole reply), split on commas, each piece stripped and "
                   "kept only if it is exactly North, South, West or East (case-sensitive); other pieces are dropped."),
        ("Online", "the rest of the line after the first 'Move:' (or the whole reply), stripped: it must be exactly "
                   "one of North, South, West, East."),
    ],
    "diagnostics": [
        ("IA", "Any reply that is not read as valid: Online, the text read as the move is not exactly one move name; "
               "Global, the list holds no move name or a piece that is not one (e.g. 'north', 'Up'). Counted on "
               "every reply the model sent, parse retries or not."),
        ("RA", f"A reply whose tail is one n-gram of at most {RA_MAX_NGRAM} words repeated {RA_MIN_TAIL_REPEATS} "
               f"times or more (n-grams made only of move names excepted); or the same move made "
               f"{RA_MAX_NOOP_DECISIONS} times in a row without the walker moving (walking into a wall), in Online "
               "decisions or along a Global plan."),
    ],
    "quirks": [
        "GridWalk is the platform's own environment, not part of MageBench: there is no official code, so every "
        "rule above is the platform's.",
    ],
    "deviations": [
        "None: there is no official implementation to deviate from.",
    ],
}
