"""Drawing a GridWalk position with Pillow, and reading one back (for the oracle baseline).

Every square is a flat colour with the walker and the goal drawn well inside it, so the centre of a
square tells what it holds even after the frame is resized to the submission's resolution.
"""
from __future__ import annotations

from PIL import Image, ImageDraw

from evaluators.gridwalk.grid import Cell, Level

CELL_PIXELS = 24
FLOOR_RGB = (236, 234, 224)
WALL_RGB = (64, 64, 76)
GOAL_RGB = (64, 168, 88)
WALKER_RGB = (48, 96, 220)
LINE_RGB = (200, 198, 188)
PALETTE: dict[str, tuple[int, int, int]] = {
    "floor": FLOOR_RGB, "wall": WALL_RGB, "goal": GOAL_RGB, "walker": WALKER_RGB,
}


def draw(level: Level, walker: Cell) -> Image.Image:
    """The position at its native size (CELL_PIXELS per square)."""
    image = Image.new("RGB", (level.cols * CELL_PIXELS, level.rows * CELL_PIXELS), FLOOR_RGB)
    pen = ImageDraw.Draw(image)
    for r in range(level.rows):
        for c in range(level.cols):
            left, top = c * CELL_PIXELS, r * CELL_PIXELS
            box = (left, top, left + CELL_PIXELS - 1, top + CELL_PIXELS - 1)
            pen.rectangle(box, fill=WALL_RGB if (r, c) in level.walls else FLOOR_RGB, outline=LINE_RGB)
            if (r, c) == level.goal:
                pen.rectangle((left + 3, top + 3, left + CELL_PIXELS - 4, top + CELL_PIXELS - 4), fill=GOAL_RGB)
            if (r, c) == walker:
                pen.ellipse((left + 4, top + 4, left + CELL_PIXELS - 5, top + CELL_PIXELS - 5), fill=WALKER_RGB)
    return image


def _nearest(colour: tuple[int, ...]) -> str:
    return min(PALETTE, key=lambda name: sum((a - b) ** 2 for a, b in zip(PALETTE[name], colour)))


def read(image: Image.Image, rows: int, cols: int) -> dict[str, list[Cell]]:
    """The squares of each kind in a frame of a ``rows`` × ``cols`` grid, from the square centres."""
    image = image.convert("RGB")
    width, height = image.size
    found: dict[str, list[Cell]] = {name: [] for name in PALETTE}
    for r in range(rows):
        for c in range(cols):
            x = min(width - 1, int((c + 0.5) * width / cols))
            y = min(height - 1, int((r + 0.5) * height / rows))
            pixel = image.getpixel((x, y))
            found[_nearest(pixel if isinstance(pixel, tuple) else (int(pixel or 0),) * 3)].append((r, c))
    return found
