"""The exact solver: known optima, agreement with gym-sokoban's rewards and with the fixture files."""
from __future__ import annotations

import json
from collections import deque
from pathlib import Path

import pytest

from evaluators.sokoban.env import ACTION_CODES
from evaluators.sokoban.levels import env_from_grid, load_pickled_env, parse_grid
from evaluators.sokoban.solver import SolverBudgetExceeded, Unsolvable, solve_env, solve_grid

RESOURCES = Path(__file__).resolve().parents[2] / "fixtures" / "magebench" / "resources"
SOKOBAN = RESOURCES / "Sokoban"
LEVEL_NAMES = [Path(p).stem for p in json.loads((RESOURCES / "Sokoban_all.json").read_text())]
UPPER_BOUND = json.loads((SOKOBAN / "upper_bound.json").read_text())

ONE_PUSH = "#####\n#@$.#\n#####"
TWO_BOXES = "\n".join([
    "#######",
    "#     #",
    "# $@$ #",
    "#  .  #",
    "# . ###",
    "#######",
])
# A box starts on a target.
BOX_ALREADY_ON_TARGET = "#######\n#@ $ .#\n#  *  #\n#######"


def gym_replay(grid_or_env, actions):
    env = env_from_grid(grid_or_env) if isinstance(grid_or_env, str) else grid_or_env
    total, done = 0.0, False
    for action in actions:
        assert not done, "the solution continues after the episode ended"
        _, reward, done, _ = env.step(ACTION_CODES[action])
        total += reward
    return total, done


def env_from_grid_with_counter(grid: str, counter: int):
    env = env_from_grid(grid)
    env.boxes_on_target = counter
    return env


def breadth_first_moves(grid: str) -> int:
    """Fewest moves by plain BFS over (player, boxes): slow but obviously exact."""
    level = parse_grid(grid)
    walls, targets = level.walls, level.targets
    start = (level.player, level.boxes)
    seen = {start}
    queue = deque([(start, 0)])
    while queue:
        (player, boxes), depth = queue.popleft()
        if boxes <= targets:
            return depth
        for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            nxt = (player[0] + dr, player[1] + dc)
            if nxt in walls:
                continue
            new_boxes = boxes
            if nxt in boxes:
                beyond = (nxt[0] + dr, nxt[1] + dc)
                if beyond in walls or beyond in boxes:
                    continue
                new_boxes = (boxes - {nxt}) | {beyond}
            state = (nxt, new_boxes)
            if state not in seen:
                seen.add(state)
                queue.append((state, depth + 1))
    raise AssertionError("unsolvable")


def test_a_single_push_is_worth_ten_plus_one_minus_a_tenth():
    solution = solve_grid(ONE_PUSH)
    assert solution.actions == ["Right"]
    assert solution.letters == ["R"]
    assert (solution.steps, solution.reward) == (1, 10.9)
    assert solution.upper_bound_entry() == {"actions": ["R"], "steps": 1, "reward": 10.9}


def test_it_finds_the_hand_counted_optimum_of_a_two_box_room():
    # Left box: up, left, push down twice (4 moves); right box: walk round (4), push down (1),
    # step behind it and push left (3): 12 moves, 10 + 2 − 1.2 = 10.8.
    solution = solve_grid(TWO_BOXES)
    assert (solution.steps, solution.reward) == (12, 10.8)
    assert solution.steps == breadth_first_moves(TWO_BOXES)


def test_letters_are_upper_case_exactly_for_the_moves_that_push():
    solution = solve_grid(TWO_BOXES)
    assert "".join(solution.letters).lower() == "".join(a[0].lower() for a in solution.actions)
    env = env_from_grid(TWO_BOXES)
    for action, letter in zip(solution.actions, solution.letters):
        _, _, _, info = env.step(ACTION_CODES[action])
        assert info["action.moved_box"] == letter.isupper()


@pytest.mark.parametrize("grid", [ONE_PUSH, TWO_BOXES, BOX_ALREADY_ON_TARGET])
def test_replaying_the_solution_in_gym_sokoban_earns_exactly_the_solver_reward(grid):
    solution = solve_grid(grid)
    total, done = gym_replay(grid, solution.actions)
    assert done
    assert round(total, 1) == solution.reward
    assert total == pytest.approx(solution.reward, abs=1e-9)


def test_a_box_starting_on_a_target_counts_only_the_net_change():
    solution = solve_grid(BOX_ALREADY_ON_TARGET)
    assert (solution.steps, solution.reward) == (3, 10.7)  # 10 + (2 − 1) − 0.3


def test_a_stale_gym_sokoban_counter_is_scored_exactly_like_gym_sokoban_pays_it():
    # Right after reset() gym-sokoban's counter is 0 even with a box on a target, so the first
    # step earns +1 for "more boxes on target" although nothing moved onto one.
    env = env_from_grid(BOX_ALREADY_ON_TARGET)
    env.boxes_on_target = 0
    solution = solve_env(env)
    assert (solution.steps, solution.reward) == (3, 11.7)
    total, done = gym_replay(env, solution.actions)
    assert done and round(total, 1) == 11.7
    # Two boxes already on targets: pushing one off on the very first step costs nothing then,
    # so the best plan may differ from the fewest moves; the enumeration must match gym's payout.
    grid = "#########\n#   *   #\n#  @* $.#\n#       #\n#########"
    solution = solve_env(env_from_grid_with_counter(grid, 0))
    total, done = gym_replay(env_from_grid_with_counter(grid, 0), solution.actions)
    assert done and round(total, 1) == solution.reward
    fewest_moves = solve_grid(grid)
    naive_total, _ = gym_replay(env_from_grid_with_counter(grid, 0), fewest_moves.actions)
    assert solution.reward >= round(naive_total, 1)


def test_an_unsolvable_level_raises_unsolvable():
    with pytest.raises(Unsolvable):
        solve_grid("######\n#$  .#\n#@   #\n######")  # the box sits in a corner


def test_the_state_budget_is_enforced():
    name = max(LEVEL_NAMES, key=lambda n: UPPER_BOUND[n]["steps"])
    grid = (SOKOBAN / f"{name}.txt").read_text()
    with pytest.raises(SolverBudgetExceeded):
        solve_grid(grid, max_states=3)
    with pytest.raises(SolverBudgetExceeded):
        solve_grid(grid, time_budget=0.0)


def test_solve_env_continues_from_the_current_state_and_respects_the_step_limit():
    env = env_from_grid(TWO_BOXES)
    env.step(ACTION_CODES["Up"])
    solution = solve_env(env)
    assert solution.steps == 11
    tight = env_from_grid(TWO_BOXES, max_steps=10)
    with pytest.raises(Unsolvable, match="needs 12 moves"):
        solve_env(tight)


@pytest.mark.parametrize("name", [n for n in LEVEL_NAMES if "small" in n])
def test_it_agrees_with_plain_breadth_first_search_on_the_small_fixture_levels(name):
    grid = (SOKOBAN / f"{name}.txt").read_text()
    assert solve_grid(grid).steps == breadth_first_moves(grid)


@pytest.mark.parametrize("name", LEVEL_NAMES)
def test_every_fixture_upper_bound_matches_the_solver_and_replays_in_gym_sokoban(name):
    stored = UPPER_BOUND[name]
    solution = solve_env(load_pickled_env(SOKOBAN / f"{name}.pkl"))
    assert (solution.steps, solution.reward) == (stored["steps"], stored["reward"])
    num_boxes = load_pickled_env(SOKOBAN / f"{name}.pkl").num_boxes
    # As in every official level: R_ub = 10 + n_boxes − 0.1·steps.
    assert stored["reward"] == round(10 + num_boxes - 0.1 * stored["steps"], 1)
    names = {"U": "Up", "D": "Down", "L": "Left", "R": "Right"}
    stored_actions = [names[letter.upper()] for letter in stored["actions"]]
    total, done = gym_replay(load_pickled_env(SOKOBAN / f"{name}.pkl"), stored_actions)
    assert done and round(total, 1) == stored["reward"]
