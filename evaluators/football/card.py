"""The Football metric card shown on the site: formula, terms, auto-rendering, parsers and deviations."""
from __future__ import annotations

from evaluators.agents.diagnostics import RA_MAX_NGRAM, RA_MAX_NOOP_DECISIONS, RA_MIN_PASS_ONLY, RA_MIN_TAIL_REPEATS
from evaluators.football.env import ACCEPTED_ACTIONS, MAX_AUTO_STEPS, MOVE_MIN_DISTANCE
from evaluators.football.options import SHOT_HELD_SETTING
from evaluators.football.reference import SUMMARY_REFERENCES
from evaluators.football.reward import (
    LAMBDA_MOVE,
    LAMBDA_OPPONENTS,
    LAMBDA_PASS,
    LAMBDA_SCORE,
    LAMBDA_SHOT,
    LAMBDA_STOLEN,
    PASS_DECAY,
    SCALING,
    SHOT_CAP,
)

# Effects measured by bench/football_fidelity.py: 12 fixture scenarios × 10 seeds = 120 episodes of
# random decisions without images (85 engine steps on average); "mean" is new − old per episode
# with its standard error. Re-run the script after changing a rule and update these lines.
_FIDELITY_RUN = "bench/football_fidelity.py, 120 random episodes on the 12 fixture scenarios"

METRIC_CARD: dict[str, object] = {
    "formula": f"score = Σ_t {SCALING:g} · (S_move + S_oppo + S_score + S_stolen + S_pass + S_shot)",
    "terms": [
        ("S_move", f"{LAMBDA_MOVE:g} · max(0, ball.x − best_x) while our team owns the ball; best_x is the furthest "
                   "ball x reached so far"),
        ("S_oppo", f"{LAMBDA_OPPONENTS:g} · (opponents behind the ball now − before) / 11 while we own the ball "
                   "(can be negative)"),
        ("S_score", f"+{LAMBDA_SCORE:g} at every step where our goal count is above 0"),
        ("S_stolen", f"+{LAMBDA_STOLEN:g} · (1 − steps_left / 400) when the opponents hold the ball and no shot is "
                     "in flight; the episode then ends. A shot is in flight from the step it is scored until the "
                     "first step on which the ball is loose, so a goalkeeper's save or catch after a shot is a "
                     "stolen ball"),
        ("S_pass", f"{LAMBDA_PASS:g} · pass_clear · scale when a pass action (long, high or short pass) was executed "
                   "at an earlier step and a player other than the last holder now holds the ball (a last holder "
                   "known, the ball not stolen at this step); the pass flag then resets. scale starts at 1 and is "
                   f"multiplied by {PASS_DECAY:g} after every paid pass. pass_clear = min over opponents of "
                   "d / (10 · max(cos θ, 0) + 1), d the opponent–ball distance, θ the angle between "
                   "(opponent − ball) and (goal − ball)"),
        ("S_shot", f"min({LAMBDA_SHOT:g} · shot_clear · shot_distance, {SHOT_CAP:.3f}) on a shot while a player of "
                   "ours holds the ball and no shot is in flight; shot_clear = max over five goal points (x = 1, "
                   "y = −0.044, −0.02, 0, 0.022, 0.044) of the smallest distance from an opponent to the 100 points "
                   "at k/100 of the ball→goal-point segment, k = 1 … 100 (the ball's own position is not a sample); "
                   "shot_distance = 1 when 1 − ball.x < 0.3, else max(1 − (1 − ball.x), 0)"),
    ],
    "normalisation": (
        "No closed form for either end: the episode is stochastic, so doing nothing has no fixed reward, and the "
        "dense reward has no meaningful analytic maximum (its shot, pass and scoring terms depend on the play and "
        "the episode ends on a goal, a loss of possession or the ball going out). Both ends are therefore fixed "
        "published numbers, the same on every scenario of a board and never taken from the entries on it: "
        + "; ".join(f"{flow.title()} · {subset} set: floor {ref.floor.value:g} ({ref.floor.source}), ceiling "
                    f"{ref.ceiling.value:g} ({ref.ceiling.source})"
                    for (flow, subset), ref in SUMMARY_REFERENCES.items() if ref.floor is not None)
        + ". 100 means \"as good as the paper's best model\", not \"perfect play\"; an entry above it reads "
        "above 100, and a new entry, however good, changes no other entry's score. The score is the linear map "
        "100 · (mean − floor) / (ceiling − floor) of the board's mean, its ± the board's SE × 100 / (ceiling − "
        "floor). The numbers were measured on the official scenarios with the official harness; on another suite "
        "(the platform's own fixtures) they are the same fixed reference, not a measurement on those scenarios."),
    "facts": [
        "Order within an engine step (it decides the edge cases): S_move and S_oppo, S_score, S_stolen (tested "
        "with the shot flag as the previous step left it), S_pass; then the last holder becomes the current "
        "holder unless the ball is loose; then a pass action arms the pass flag; then S_shot; last, the shot flag "
        "is cleared when the current holder differs from the last holder, which in effect means on any step the "
        "ball is loose. The terms are summed in that order and the sum multiplied by 20; the score is the running "
        "sum of the steps.",
        "The first engine step only sets the references (best_x, opponents behind the ball) and scores 0; it "
        "records no holder and arms no pass, whatever the action.",
        "An episode ends on a goal, when the ball goes out of play, on a change of possession, after 400 engine "
        "steps, or when the stolen term fires.",
        "Configuration: full action set, 400-step game, non-deterministic engine, no offsides, right team "
        "difficulty 0.0, left team difficulty 1.0, one controlled left player (gfootball switches it).",
        "Auto-rendering, decision by decision: the first decision is one engine step and is not remembered. From "
        "the second decision on, the platform remembers the previous decision's action (none at first) and the "
        "last move direction (right at first). A move repeating the previous decision's action runs while the "
        f"path is clear (still on the pitch 3 steps ahead, no opponent within {MOVE_MIN_DISTANCE:g} of our "
        f"extrapolated position over the next 6 steps), at most {MAX_AUTO_STEPS} engine steps, so a move segment "
        "starts at the third decision at the earliest. A pass or shot while someone holds the ball plays "
        "(pass or shot, last move direction) pairs while the passer still holds it, reading the holder again only "
        "after each pair, then gfootball's built-in AI while the ball is loose, until someone else holds it. "
        "Anything else is one engine step. The model sees only the last frame of a decision.",
        "The model sees a 1280×720 frame with the official colour correction (brightness ×1.5, contrast ×0.6, "
        "brightness ×1.2), resized to the submission's resolution. The first frame (the initial scene) comes from "
        "gfootball's render('rgb_array') like the official one, with red and blue swapped (our yellow shirts look "
        "cyan); the later frames are gfootball's observation frames.",
        "Attempts scored before this revision of the Football rules kept a shot in flight until a new holder "
        "took the ball, sampled the shot line from the ball itself, remembered the first decision (move segments "
        "from decision 2, pass direction idle by default) and read the holder after every step of a pass. "
        f"Measured ({_FIDELITY_RUN}): 57 of 120 episodes score differently, mean −0.26 ± 0.82 per episode (mean "
        "|Δ| 3.65): the reward changes alone, on the same games, 34/120, +1.13 ± 0.28 (largest +17.9); the "
        "auto-rendering changes alone 31/120, −1.68 ± 0.87 (mean |Δ| 2.99; the games themselves change); the shot "
        "sampling alone 8/120, −0.001 (49 of 51 scored shots change clearance, most are capped).",
    ],
    "flows": [
        "Every request carries the official sampling settings: temperature 0.1, top_p 0.95, frequency_penalty 1.0, "
        "max_tokens 1000; the values used are frozen with every submission.",
        "Messages go out as the official OpenAI-compatible client sends them: consecutive messages of one role are "
        "merged into one, so the first five requests open with [system: rules] [user: format instruction, "
        "the observation's lead text, first frame, first-turn text]; from the sixth the memory window (last "
        "2 · max_memory = 10 messages) no longer holds the first observation.",
        "no_system_role = true is the official no-system-role variant: the rules become the first text part of the "
        "first user message.",
        "Online memory: walking back from the newest message, images stay while at most max_image (1) are counted; "
        "that message and every older one lose their images.",
        "parse_retries = 0 (the default) is the official protocol: a reply without a valid action is one of the "
        "max_loop turns and the regenerate message is sent as the next turn. parse_retries > 0 asks again within "
        "the decision, as the paper describes: such an entry is labelled a variant on the boards and never ranked.",
    ],
    "parsers": [
        ("Online", "text between the first '# action' and the next '# action' (or the end); the whole reply when it "
                   "has no '# action'. Stripped, it must be exactly one of: " + ", ".join(ACCEPTED_ACTIONS)
                   + " (idle, sliding, release_direction, builtin_ai and bare names such as 'left' are not "
                   "accepted)."),
    ],
    "diagnostics": [
        ("IA", "Any reply whose text read as the action is not exactly one of the 16 action names (a bare 'left', "
               "'action_idle', a reply without '# action' that is not an action name), counted on every reply the "
               "model sent, parse retries or not."),
        ("RA", f"A reply whose tail is one n-gram of at most {RA_MAX_NGRAM} words repeated {RA_MIN_TAIL_REPEATS} times "
               f"or more (n-grams made only of action names excepted); or the same action chosen at "
               f"{RA_MAX_NOOP_DECISIONS} consecutive decisions none of which had an effect; or a trajectory of at "
               f"least {RA_MIN_PASS_ONLY} decisions that are all passes (action_long_pass, action_short_pass, "
               "action_high_pass). A decision has no effect when, from just before it to just after its last "
               "engine step, the ball moved at most 0.005 pitch units (x, y) and possession (team and player) "
               "did not change."),
    ],
    "quirks": [
        "The stolen term is added, not subtracted: losing the ball late in the game scores more than losing it "
        "early, and an agent that does nothing usually ends with a small positive score.",
        "A goalkeeper's save or catch after a shot is a stolen ball (positive term, the task ends): the shot flag "
        "ends on the first loose-ball step, although the official comment meant it to let a new holder shoot "
        f"again. Measured against the {SHOT_HELD_SETTING} variant on the same games ({_FIDELITY_RUN}): 27 of "
        "120 episodes differ, +1.12 ± 0.28 per episode, largest +17.9.",
        "A shot flag survives a change of holder with no loose step between (a tackle straight from the "
        "shooter's foot, or a hand-over to a team-mate, who then cannot score a shot until the ball was loose).",
        "Holders are compared by player index whatever their team: with the shot flag set, an opponent taking the "
        "ball straight from the shooter is not a stolen ball, and if a pass was armed and his index differs "
        "from the shooter's it is paid as a completed pass. The move check likewise looks the holder up in our "
        "team even when an opponent holds the ball.",
        "shot_distance goes through the gap to the goal line: 1 − (1 − 0.1) = 0.09999999999999998, and at "
        "x = 0.7 the gap rounds above 0.3, so the value is 0.7, not 1.",
        "The first frame the model sees has red and blue swapped (render('rgb_array') returns the channels in "
        "OpenCV's order); the later frames do not.",
        "S_oppo can be negative, and the first step's reference is taken wherever the ball is, owned or not.",
        "The official code reads the executed action from gfootball's trace; the trace records the requested "
        "action, so the requested action is used.",
        "Football has no Global flow in the official release; only the Online flow is offered.",
    ],
    "deviations": [
        "Frames are rendered only when the model must see one (the initial scene and the end of each decision), "
        "not at every engine step; the replay draws every engine step from the stored raw observations instead "
        "of video frames. Measured (bench/football_fidelity.py --rendering, 3 fixed sequences of 24 engine "
        "steps): the game is the same step for step; gfootball's camera moves only when a frame is drawn, so a "
        "decision's frame is shifted by a few pixels against the official one: mean absolute difference 0.01 to "
        "3.4 grey levels (of 255) per channel on the raw frames, largest at the first decision.",
        f"{SHOT_HELD_SETTING} = true (a submission setting, off by default; such entries are labelled variants "
        "and never ranked) keeps a shot in flight until a player other than the shooter holds the ball, so a "
        "goalkeeper's save is not a stolen ball; only the moment the flag ends differs. Effect on the same games: "
        "27 of 120 random episodes score lower, by 1.12 ± 0.28 per episode on average.",
        "gfootball's episode dumps are not written; every raw observation is kept in the replay file instead.",
        "Each attempt records its engine seed, drawn per attempt; officially gfootball draws one per episode from "
        "Python's random module (same distribution). gfootball is stochastic and moving the game into its "
        "renderer perturbs it, so a seed reproduces an episode exactly only for an agent that reads no images.",
        "An endpoint that declares it reads no images (setting observation_images = false) is sent the text "
        "the observation's lead text alone and nothing is rendered for it. The game then never enters gfootball's "
        "renderer, which the official env always does: with the same seed and actions the games part from the "
        "first engine step (2 of the 3 measured sequences); the distribution is the same.",
        "Engine: gfootball 2.10.2, the version the official installer's unpinned 'pip install gfootball' "
        "resolves to, built from source here, with gym 0.26.2 as officially; frames are drawn by Mesa's software "
        "OpenGL, where the official runs used a GPU (the official colour correction exists for GPU colour "
        "issues), so pixel colours may differ; not measurable without the official machine.",
        "The scenario is built from the parsed file with the same builder calls instead of importing it, and the "
        "engine is reset once more after it is created, with the same seed, so the game starts from the same "
        "state.",
        "Scores are stored rounded to 6 decimals. The replay shows the pass term after its decay and the shot "
        "term after its cap (their sum is the score); the official video overlay prints both before.",
        "Prompts: a suite imported with an official checkout sends the official texts, read from it (see Prompts "
        "below); any other suite sends the platform's own wording of them (same facts: the controlled player's "
        "yellow jersey and blue name, the right-hand goal, the 16 action IDs and what they do; same reply format, "
        "example and composition). The wording's effect on a model cannot be measured with the platform's "
        "baselines; the two kinds are separate board generations.",
        "The paper's API models ran through the Azure OpenAI client, which does not merge same-role messages.",
        "A reply with no text is a reply without an action; the official client would ask again.",
        "Infrastructure failures are retried and never scored.",
    ],
}
