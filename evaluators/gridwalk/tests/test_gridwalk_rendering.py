"""Drawing GridWalk positions, and reading them back as the oracle does."""
from __future__ import annotations

import pytest

from evaluators.gridwalk.drawing import CELL_PIXELS, GOAL_RGB, WALKER_RGB, WALL_RGB, draw, read
from evaluators.gridwalk.env import GridWalkEpisode
from evaluators.gridwalk.grid import Level

MAZE = Level.from_rows(["#########", "#@..#...#", "##.##.#.#", "#..#..#.#", "#.##.##.#", "#......G#", "#########"])


def test_each_square_is_drawn_in_its_colour() -> None:
    image = draw(MAZE, MAZE.start)
    assert image.size == (9 * CELL_PIXELS, 7 * CELL_PIXELS)
    centre = CELL_PIXELS // 2
    assert image.getpixel((centre, centre)) == WALL_RGB
    assert image.getpixel((CELL_PIXELS + centre, CELL_PIXELS + centre)) == WALKER_RGB
    assert image.getpixel((7 * CELL_PIXELS + centre, 5 * CELL_PIXELS + centre)) == GOAL_RGB


def test_the_observation_is_the_frame_at_the_resolution_and_the_grid_size() -> None:
    episode = GridWalkEpisode(MAZE, resolution=180)
    observation = episode.reset()
    assert observation.image is not None and observation.image.size == (180, 140)
    assert observation.text == "The grid has 7 rows and 9 columns."


def test_an_endpoint_that_reads_no_images_gets_no_frame() -> None:
    assert GridWalkEpisode(MAZE, render_observations=False).reset().image is None


@pytest.mark.parametrize("resolution", [64, 180, 320, 640])
def test_a_resized_frame_reads_back_as_the_position(resolution: int) -> None:
    episode = GridWalkEpisode(MAZE, resolution=resolution)
    episode.reset()
    episode.step("East")
    squares = read(episode.render(), MAZE.rows, MAZE.cols)
    assert squares["walker"] == [(1, 2)] and squares["goal"] == [MAZE.goal]
    assert set(squares["wall"]) == MAZE.walls
