"""The Sokoban metric card shown on the site: formula, bookkeeping, parsers, IA/RA and deviations."""
from __future__ import annotations

from evaluators.agents.diagnostics import RA_MAX_NGRAM, RA_MAX_NOOP_DECISIONS, RA_MIN_TAIL_REPEATS

METRIC_CARD: dict[str, object] = {
    "formula": "score = 100 + 5 · (B_T − R_ub)",
    "terms": [
        ("r_t", "gym-sokoban's step reward: −0.1 per step, +1 box onto a target, −1 box off a target, +10 when solved"),
        ("A_t", "cumulative reward Σ r_1..r_t"),
        ("B_t", "best cumulative reward so far: B_0 = 0, B_t = max(B_{t−1}, A_t); the empty prefix counts"),
        ("R_ub", "the level's optimal reward from upper_bound.json = 10 + boxes − 0.1 · optimal steps"),
    ],
    "floor": "The score has a floor well above 0. An agent that does nothing keeps B_T = B_0 = 0 and scores "
             "100 − 5 · R_ub; with R_ub = 10 + boxes − 0.1 · optimal steps, that is about 40 to 55 on the paper's "
             "levels (one box solved in 10 steps: R_ub = 10, floor 50). Moving boxes off targets or wandering cannot "
             "take the score below it, since B_T never falls below B_0. A score is therefore read against the idle "
             "floor (the idle baseline's row on every board), not against 0: the range of the metric that separates "
             "agents is the floor to 100, not 0 to 100.",
    "normalisation": (
        "Floor: the score of doing nothing on each level, 100 − 5 · R_ub (its own per level, about 40 to "
        "55); ceiling 100 (an optimal solution, B_T = R_ub, scores exactly 100 + 5 · 0). The summary's "
        "score is how far an entry got from the idle floor to an optimal solution, level by level."),
    "facts": [
        "An agent that never moves scores exactly 100 − 5 · R_ub; an optimal solution scores 100.",
        "The episode ends when every box is on a target or after gym-sokoban's max_steps (120) env steps.",
        "Global executes every parsed action in order until the episode ends (no 50-step cap); "
        "Online takes one action per model call, for at most max_loop = 50 calls.",
        "Only the rendered image is shown to the model, never the reward.",
    ],
    "flows": [
        "Every request carries the official sampling settings: temperature 0.1, top_p 0.95, frequency_penalty 1.0, "
        "max_tokens 1000 (Global) or 300 (Online); the values used are frozen with every submission.",
        "Messages go out as the official OpenAI-compatible client sends them: consecutive messages of one role are "
        "merged into one. Global: [system: rules] [user: level image, format instruction]. Online: [system: rules] "
        "[user: format instruction, first image, first-turn text] in the first five requests; from the sixth the "
        "memory window (last 2 · max_memory = 10 messages) no longer holds the first observation, so the format "
        "instruction stands alone before the oldest kept reply.",
        "no_system_role = true is the official no-system-role variant: the rules become the first text part of the "
        "first user message (Global and Online).",
        "Online memory: walking back from the newest message, images stay while at most max_image (1) are counted; "
        "that message and every older one lose their images.",
        "parse_retries = 0 (the default) is the official protocol: Global makes one generation; Online counts a reply "
        "without a valid action as one of its max_loop turns and sends the regenerate message as the next turn. "
        "parse_retries > 0 asks again within the same decision, as the paper describes: such an entry is labelled a "
        "variant on the boards and never ranked, and a model that keeps failing makes up to 1 + parse_retries calls "
        "per decision. Measured on the 31 fixture levels with the oracle baseline answering without an action on "
        "every third reply (Online): mean 100.00 with parse_retries = 2 against 89.32 with the official 0 (1082 "
        "against 1015 calls, the 50-turn budget binds); every second reply, Global: 100.00 against 73.55 (61 "
        "against 31 calls).",
    ],
    "parsers": [
        ("Global", "text after the first '### Actions' (or the whole reply), split on commas, each token stripped and "
                   "kept only if it is exactly Up, Down, Left or Right (case-sensitive); other tokens are dropped."),
        ("Online", "text between the first '# action' and the next '# action' (or the end); the whole reply when it "
                   "has no '# action'. Stripped, it must be exactly one of Up, Down, Left, Right: a bare 'Up' is a "
                   "valid reply, 'Up.' or 'up' are not."),
    ],
    "diagnostics": [
        ("IA", "Any reply that is not read as valid: Online, the text read as the action is not exactly one action "
               "name; Global, the action list holds no action name or an entry that is not one (e.g. 'up', 'Up.', "
               "a newline-separated list). Counted on every reply the model sent, parse retries or not."),
        ("RA", f"A reply whose tail is one n-gram of at most {RA_MAX_NGRAM} words repeated {RA_MIN_TAIL_REPEATS} times "
               f"or more (n-grams made only of move names excepted); or the same move executed "
               f"{RA_MAX_NOOP_DECISIONS} times in a row without changing the board (the player and every box stay "
               "put, e.g. walking into a wall), in Online decisions or along a Global plan. A Global plan with many "
               "identical moves is not RA while those moves keep changing the board: corridors call for long "
               "straight runs."),
    ],
    "quirks": [
        "Tokens such as 'left', 'Up.' or a newline-separated list are dropped by the official Global parser; the "
        "platform keeps that behaviour and reports them under IA.",
        "The rules tell the model to restart after a deadlock, as the official prompt does, but no parser accepts "
        "'Restart': such a reply is refused (and counts as IA).",
    ],
    "deviations": [
        "Prompts: a suite imported with an official checkout sends the official texts, read from it (see Prompts "
        "below); any other suite sends the platform's own wording of them (same facts: piece colours, the four "
        "action IDs, the side-by-side rule, the wall pattern, deadlocks and the restart advice; same reply "
        "formats and composition). The wording's effect on a model cannot be measured with the platform's "
        "baselines, which read the format only; the two kinds are separate board generations.",
        "The paper's API models ran through the official Azure OpenAI client, which does not merge same-role "
        "messages; the platform sends the merged layout of the OpenAI-compatible client to every endpoint.",
        "A reply with no text (an empty or missing content) is a reply without an action; the official client "
        "would raise inside its parser callback and ask again (up to three requests).",
        "Infrastructure failures (endpoint down, timeouts, 5xx, bad HTTP payloads) are retried and never scored; the "
        "official runner scores such a run 0 after three exceptions.",
        "Online with max_image = 0 sends no image at all; the official Online flow refuses to start with it.",
        "gym-sokoban runs unwrapped: gym 0.26's checker and wrappers do not work with gym-sokoban 0.0.6 under numpy 2.",
    ],
}


def floor_note(upper_bounds: list[float]) -> str:
    """The idle floor, 100 − 5 · R_ub, over levels with these optimal rewards."""
    if not upper_bounds:
        return ""
    # The official metric's own function, so that the note cannot drift from the scoring.
    from evaluators.sokoban.env import idle_score_from

    floors = [idle_score_from(bound) for bound in upper_bounds]
    low, high = min(floors), max(floors)
    levels = f"{len(floors)} level{'s' if len(floors) != 1 else ''}"
    spread = f"{low:.1f}" if low == high else f"{low:.1f} to {high:.1f} (mean {sum(floors) / len(floors):.1f})"
    return (f"Score floor: an agent that does nothing scores 100 − 5 · R_ub (R_ub: the level's optimal cumulative "
            f"reward), here {spread} over the {levels}; read a score against that floor, not against 0.")
