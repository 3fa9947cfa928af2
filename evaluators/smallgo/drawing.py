"""Drawing a Small Go position with Pillow: lines, lettered and numbered edges, stones."""
from __future__ import annotations

from PIL import Image, ImageDraw

from .board import COLUMNS, Position

SPACING = 40
MARGIN = 36
WOOD_RGB = (222, 184, 120)
LINE_RGB = (40, 32, 24)


def draw(position: Position, last: tuple[int, int] | None = None) -> Image.Image:
    """The position at its native size; ``last`` (White's last move) is ringed."""
    side = 2 * MARGIN + (position.size - 1) * SPACING
    image = Image.new("RGB", (side, side), WOOD_RGB)
    pen = ImageDraw.Draw(image)
    far = MARGIN + (position.size - 1) * SPACING
    for i in range(position.size):
        at = MARGIN + i * SPACING
        pen.line((MARGIN, at, far, at), fill=LINE_RGB, width=2)
        pen.line((at, MARGIN, at, far), fill=LINE_RGB, width=2)
        pen.text((at, MARGIN // 3), COLUMNS[i], fill=LINE_RGB, anchor="mm")
        pen.text((MARGIN // 3, at), str(position.size - i), fill=LINE_RGB, anchor="mm")
    radius = SPACING * 2 // 5
    for stones, fill, outline in ((position.black, (16, 16, 16), (0, 0, 0)),
                                  (position.white, (245, 245, 245), (60, 60, 60))):
        for row, column in stones:
            x, y = MARGIN + column * SPACING, MARGIN + row * SPACING
            pen.ellipse((x - radius, y - radius, x + radius, y + radius), fill=fill, outline=outline, width=2)
    if last is not None:
        x, y, ring = MARGIN + last[1] * SPACING, MARGIN + last[0] * SPACING, radius // 2
        pen.ellipse((x - ring, y - ring, x + ring, y + ring), outline=(200, 40, 40), width=3)
    return image
