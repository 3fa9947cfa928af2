"""Reading a level back from nothing but its rendered frame."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from evaluators.images import resize_longest_side
from evaluators.sokoban.env import SokobanEpisode
from evaluators.sokoban.levels import env_from_grid, load_pickled_env, normalize_grid
from evaluators.sokoban.vision import read_grid

RESOURCES = Path(__file__).resolve().parents[2] / "fixtures" / "magebench" / "resources"
SOKOBAN = RESOURCES / "Sokoban"
LEVEL_NAMES = [Path(p).stem for p in json.loads((RESOURCES / "Sokoban_all.json").read_text())]
RESOLUTIONS = (None, 128, 256, 640, 1280)  # None: gym-sokoban's raw 16-px-per-tile frame


def raw_frame(name: str) -> Image.Image:
    env = load_pickled_env(SOKOBAN / f"{name}.pkl")
    return Image.fromarray(env.render(mode="rgb_array"))


@pytest.mark.parametrize("name", LEVEL_NAMES)
def test_every_fixture_level_is_read_back_exactly_at_every_resolution(name):
    expected = normalize_grid((SOKOBAN / f"{name}.txt").read_text())
    frame = raw_frame(name)
    for resolution in RESOLUTIONS:
        image = frame if resolution is None else resize_longest_side(frame, resolution)
        assert read_grid(image) == expected, f"{name} at {resolution or 'raw'}"


def test_a_non_square_room_is_read_with_its_own_row_and_column_counts():
    name = next(n for n in LEVEL_NAMES if n.endswith("large-v0"))
    image = resize_longest_side(raw_frame(name), 640)
    assert image.size == (541, 640)  # 11 columns x 13 rows: 176 x 208 scaled by 640/208, truncated as officially
    rows = read_grid(image).split("\n")
    assert (len(rows), len(rows[0])) == (13, 11)


def test_a_mid_game_frame_from_an_episode_is_read_exactly():
    grid = "#######\n#@ $ .#\n#  .$ #\n#######"
    episode = SokobanEpisode(env_from_grid(grid), upper_bound=10.0, resolution=256)
    episode.reset()
    episode.step("Right")
    frame = episode.step("Right").observation.image  # first box pushed, player beside a target
    assert read_grid(frame) == "#######\n#  @$.#\n#  .$ #\n#######"


def test_the_jpeg_previews_are_read_exactly_too():
    for name in LEVEL_NAMES[::6]:
        with Image.open(SOKOBAN / f"img-{name}.jpg") as image:
            assert read_grid(image) == normalize_grid((SOKOBAN / f"{name}.txt").read_text())


@pytest.mark.parametrize("image", [
    Image.fromarray(np.random.default_rng(0).integers(0, 256, (640, 640, 3), dtype=np.uint8)),
    Image.new("RGB", (640, 640), (255, 255, 255)),
    Image.new("RGB", (160, 160), (0, 0, 0)),  # all floor: no walls, no player
    Image.fromarray(np.tile(np.linspace(0, 255, 640, dtype=np.uint8)[None, :, None], (480, 1, 3))),
    Image.new("RGB", (2, 2), (10, 20, 30)),
], ids=["noise", "white", "black", "gradient", "tiny"])
def test_an_image_that_is_not_a_sokoban_board_raises_value_error(image):
    with pytest.raises(ValueError, match="not a Sokoban board"):
        read_grid(image)


def test_a_board_with_a_tile_painted_over_is_rejected():
    name = LEVEL_NAMES[0]
    array = np.array(resize_longest_side(raw_frame(name), 256))
    array[100:160, 100:160] = (40, 200, 220)
    with pytest.raises(ValueError, match="not a Sokoban board"):
        read_grid(Image.fromarray(array))
