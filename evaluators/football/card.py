"""The Football metric card shown on the site: formula, terms, auto-rendering, parsers and deviations."""
from __future__ import annotations

from evaluators.agents.diagnostics import RA_MAX_NGRAM, RA_MAX_NOOP_DECISIONS, RA_MIN_PASS_ONLY, RA_MIN_TAIL_REPEATS
from evaluators.football.env import ACCEPTED_ACTIONS, MAX_AUTO_STEPS, MOVE_MIN_DISTANCE
from evaluators.football.reward import (LAMBDA_MOVE, LAMBDA_OPPONENTS, LAMBDA_PASS, LAMBDA_SCORE, LAMBDA_SHOT,
                                        LAMBDA_STOLEN, PASS_DECAY, SCALING, SHOT_CAP)

METRIC_CARD: dict[str, object] = {
    "formula": f"score = Σ_t {SCALING:g} · (S_move + S_oppo + S_score + S_stolen + S_pass + S_shot)",
    "terms": [
        ("S_move", f"{LAMBDA_MOVE:g} · max(0, ball.x − best_x) while our team owns the ball; best_x is the furthest "
                   "ball x reached so far"),
        ("S_oppo", f"{LAMBDA_OPPONENTS:g} · (opponents behind the ball now − before) / 11 while we own the ball "
                   "(can be negative)"),
        ("S_score", f"+{LAMBDA_SCORE:g} at every step where our goal count is above 0"),
        ("S_stolen", f"+{LAMBDA_STOLEN:g} · (1 − steps_left / 400) when the opponents win the ball and no shot is "
                     "in flight; the episode then ends"),
        ("S_pass", f"{LAMBDA_PASS:g} · pass_clear · scale when a pass is received by another player of ours; "
                   f"scale starts at 1 and is multiplied by {PASS_DECAY:g} after every completed pass. pass_clear = "
                   "min over opponents of d / (10 · max(cos θ, 0) + 1), d the opponent–ball distance, θ the angle "
                   "between (opponent − ball) and (goal − ball)"),
        ("S_shot", f"min({LAMBDA_SHOT:g} · shot_clear · shot_distance, {SHOT_CAP:.3f}) on a shot while we own "
                   "the ball, once per possession; shot_clear = max over five goal points (y = −0.044, −0.02, 0, "
                   "0.022, 0.044) of the closest approach of any opponent to 100 points on the ball→goal-point "
                   "segment; shot_distance = 1 beyond x = 0.7, else max(ball.x, 0)"),
    ],
    "facts": [
        "The first engine step only sets the references (best_x, opponents behind the ball) and scores 0.",
        "An episode ends on a goal, when the ball goes out of play, on a change of possession, after 400 engine "
        "steps, or when the stolen term fires.",
        "Configuration: full action set, 400-step game, non-deterministic engine, no offsides, right team "
        "difficulty 0.0, left team difficulty 1.0, one controlled left player (gfootball switches it).",
        f"Auto-rendering: repeating the previous move direction keeps running while the path is clear (still on "
        f"the pitch 3 steps ahead, no opponent within {MOVE_MIN_DISTANCE:g} over the next 6 steps), at most "
        f"{MAX_AUTO_STEPS} engine steps; a pass or shot while someone holds the ball alternates the action with "
        "the last direction until the ball leaves the passer, then gfootball's built-in AI plays until someone "
        "receives it. The first decision is always a single step. The model sees only the last frame.",
        "The model sees a 1280×720 frame with the official colour correction (brightness ×1.5, contrast ×0.6, "
        "brightness ×1.2), resized to the submission's resolution.",
    ],
    "flows": [
        "Every request carries the official sampling settings: temperature 0.1, top_p 0.95, frequency_penalty 1.0, "
        "max_tokens 1000; the values used are frozen with every submission.",
        "Messages go out as the official OpenAI-compatible client sends them: consecutive messages of one role are "
        "merged into one, so the first five requests open with [system: rules] [user: format instruction, "
        "'Current game scene:', first frame, first-turn text]; from the sixth the memory window (last "
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
        "S_oppo can be negative, and the first step's reference is taken wherever the ball is, owned or not.",
        "The official code reads the executed action from gfootball's trace; the trace records the requested "
        "action, so the requested action is used.",
        "Football has no Global flow in the official release; only the Online flow is offered.",
    ],
    "deviations": [
        "Frames are rendered only when the model must see one (after each decision), not at every engine step; "
        "the replay draws every engine step from the stored raw observations instead of video frames.",
        "gfootball's episode dumps are not written; every raw observation is kept in the replay file instead.",
        "Each attempt records its engine seed. gfootball is stochastic and moving the game into its renderer "
        "perturbs it, so a seed reproduces an episode exactly only for an agent that reads no images.",
        "An endpoint that declares it reads no images (setting observation_images = false) is sent the text "
        "'Current game scene:' alone and nothing is rendered for it.",
        "Prompts are the platform's own wording of the official texts (same facts: the controlled player's yellow "
        "jersey and blue name, the right-hand goal, the 16 action IDs and what they do; same reply format and "
        "example). Their effect on a model cannot be measured with the platform's baselines.",
        "Images are labelled image/png; the official code sends the same PNG bytes labelled image/jpeg.",
        "The model named in the submission is called; the official OpenAI-compatible client calls the first model "
        "its server lists at /v1/models. The paper's API models ran through the Azure OpenAI client, which does "
        "not merge same-role messages.",
        "A reply with no text is a reply without an action; the official client would ask again.",
        "Infrastructure failures are retried and never scored.",
    ],
}
