"""The Sokoban metric card shown on the site: formula, bookkeeping, parsers and deviations."""
from __future__ import annotations

METRIC_CARD: dict[str, object] = {
    "formula": "score = 100 + 5 · (B_T − R_ub)",
    "terms": [
        ("r_t", "gym-sokoban's step reward: −0.1 per step, +1 box onto a target, −1 box off a target, +10 when solved"),
        ("A_t", "cumulative reward Σ r_1..r_t"),
        ("B_t", "best cumulative reward so far: B_0 = 0, B_t = max(B_{t−1}, A_t); the empty prefix counts"),
        ("R_ub", "the level's optimal reward from upper_bound.json = 10 + boxes − 0.1 · optimal steps"),
    ],
    "facts": [
        "An agent that never moves scores exactly 100 − 5 · R_ub; an optimal solution scores 100.",
        "The episode ends when every box is on a target or after gym-sokoban's max_steps (120) env steps.",
        "Global executes every parsed action in order until the episode ends (no 50-step cap); "
        "Online takes one action per model call, for at most max_loop = 50 calls.",
        "Only the rendered image is shown to the model, never the reward.",
    ],
    "parsers": [
        ("Global", "text after the first '### Actions' (or the whole reply), split on commas, each token stripped and "
                   "kept only if it is exactly Up, Down, Left or Right (case-sensitive); other tokens are dropped."),
        ("Online", "text after the first '# action', stripped, must be exactly one of Up, Down, Left, Right."),
    ],
    "quirks": [
        "Tokens such as 'left', 'Up.' or a newline-separated list are dropped by the official Global parser; the "
        "platform keeps that behaviour and reports them under IA.",
        "'Restart' exists in the official action set but no parser can produce it; it is not offered.",
    ],
    "deviations": [
        "Parse retries: after a reply with no valid action the model is asked to regenerate, at most parse_retries "
        "times per decision (default 2). parse_retries = 0 reproduces the official flows exactly (Global: one "
        "generation; Online: the failed turn is consumed). The value used is stored with every submission.",
        "Infrastructure failures (endpoint down, timeouts, 5xx, bad HTTP payloads) are retried and never scored; the "
        "official runner scores such a run 0 after three exceptions.",
        "gym-sokoban runs unwrapped: gym 0.26's checker and wrappers do not work with gym-sokoban 0.0.6 under numpy 2.",
    ],
}
