"""Read a Sokoban level back from a rendered frame, using nothing but the pixels.

The frames the platform shows a model are gym-sokoban's ``render('rgb_array')`` (16 px square
tiles), usually resized with LANCZOS so the longest side equals the submission's resolution (up or
down). :func:`read_grid` inverts that:

1. Grid size: tiles are square, so a room of h x w tiles renders at an aspect ratio of h:w and the
   resized short side is the long side times that ratio, rounded. Every (h, w) consistent with the
   image size to within a pixel is a candidate.
2. Each candidate is scored by resampling the image back to 16 px per tile and measuring how far
   every tile is from the nearest of gym-sokoban's own sprites (taken from the installed package).
   Only the true size makes every tile look like a sprite; a cheap 2-px-per-tile pass ranks the
   candidates and only the best two are examined at full size.
3. The tiles of the best candidate are labelled by nearest sprite. Where two labels are close (a
   player on or off a target blurs together at small resolutions), the choice is settled by
   re-rendering the room both ways, resizing it exactly like the input, and keeping the label whose
   picture matches the input better.
4. The result must be a valid room (walled border, one player, as many targets as boxes) and its
   re-rendering must match the input closely; otherwise ``ValueError`` says the image is not a
   Sokoban board.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image

from evaluators.sokoban.levels import (
    BOX_ON_TARGET,
    FLOOR,
    PLAYER,
    PLAYER_ON_TARGET,
    TARGET,
    TILE,
    WALL,
    format_grid,
    level_from_arrays,
    tile_sprites,
)

MIN_TILES = 3
MAX_TILES = 48
#: Candidate sizes examined at full resolution after the coarse ranking.
FINALISTS = 2
COARSE_TILE = 2
COARSE_SIDE = COARSE_TILE * MAX_TILES
#: Mean squared tile-to-sprite distance (per channel, 0..255 scale) above which no grid of
#: gym-sokoban tiles fits the image. Fixture boards measure at most ~90 from 256 px up, ~620 at
#: 128 px, ~1400 at 64 px; plain images measured 2100 (flat brick colour) to 26000.
MAX_TILE_ERROR = 2000.0
#: Mean absolute per-channel error (0..255) of the re-rendered board above which the image is
#: not taken for a Sokoban board. A LANCZOS-resized frame is reproduced exactly (error 0); the
#: JPEG previews reach ~8; plain images measured 31 and more.
MAX_BOARD_ERROR = 12.0
#: Ambiguous tiles: second-best sprite distance within this factor of the best.
AMBIGUITY_RATIO = 3.0
#: Tiles of room rendered around an ambiguous tile when re-rendering it.
_CROP_MARGIN = 3

@dataclass
class _Candidate:
    height: int
    width: int
    coarse: float = float("inf")
    labels: np.ndarray | None = None
    distances: np.ndarray | None = None  # (h, w, 7) mean squared distance to each sprite
    error: float = float("inf")


def _to_rgb(image: Image.Image) -> Image.Image:
    if image.mode == "RGB":
        return image
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        # Flatten transparency on black, the colour of gym-sokoban's floor.
        rgba = image.convert("RGBA")
        base = Image.new("RGB", image.size, (0, 0, 0))
        base.paste(rgba, mask=rgba.split()[-1])
        return base
    return image.convert("RGB")


def _candidate_sizes(width: int, height: int) -> list[tuple[int, int]]:
    """(rows, columns) whose square tiles would give this image size after a longest-side resize."""
    sizes = set()
    long_side, short_side = max(width, height), min(width, height)
    for along_long in range(MIN_TILES, MAX_TILES + 1):
        if long_side / along_long < 1.0:
            break  # tiles below one pixel carry no information
        exact_short = short_side * along_long / long_side
        for along_short in {int(np.floor(exact_short)), int(np.ceil(exact_short))}:
            if not MIN_TILES <= along_short <= MAX_TILES:
                continue
            expected_short = along_short * long_side / along_long
            if abs(expected_short - short_side) <= 1.0:
                # Rows follow the image height, columns its width.
                sizes.add((along_short, along_long) if width >= height else (along_long, along_short))
    return sorted(sizes)


def _tiles(array: np.ndarray, rows: int, cols: int, tile: int) -> np.ndarray:
    """(rows, cols, tile*tile*3) view of an image of exactly rows*tile x cols*tile pixels."""
    return array.reshape(rows, tile, cols, tile, 3).transpose(0, 2, 1, 3, 4).reshape(rows, cols, -1)


@lru_cache(maxsize=4)
def _sprite_vectors(tile: int) -> np.ndarray:
    sprites = tile_sprites()
    if tile == TILE:
        return sprites.reshape(len(sprites), -1).astype(np.float32)
    strip = Image.fromarray(np.concatenate(list(sprites), axis=1))
    small = np.asarray(strip.resize((tile * len(sprites), tile), Image.Resampling.BOX), dtype=np.float32)
    return np.stack([small[:, i * tile:(i + 1) * tile].reshape(-1) for i in range(len(sprites))])


def _distances(image: Image.Image, rows: int, cols: int, tile: int) -> np.ndarray:
    resample = Image.Resampling.LANCZOS if tile == TILE else Image.Resampling.BOX
    array = np.asarray(image.resize((cols * tile, rows * tile), resample), dtype=np.float32)
    tiles = _tiles(array, rows, cols, tile).astype(np.float64)  # (r, c, n)
    sprites, sprite_norms = _sprite_terms(tile)  # (7, n), (7,)
    # Mean squared difference between every tile and every sprite, as |t|² - 2 t·s + |s|²: one matrix
    # product instead of an (r, c, 7, n) array of differences. In float64 the rounding of sums up to
    # n * 255² (about 5e7) stays far below 1e-6, so the expansion loses nothing measurable to cancellation.
    squared = np.einsum("rcn,rcn->rc", tiles, tiles)[:, :, None] - 2.0 * (tiles @ sprites.T) + sprite_norms
    return (np.maximum(squared, 0.0) / tiles.shape[-1]).astype(np.float32)


@lru_cache(maxsize=4)
def _sprite_terms(tile: int) -> tuple[np.ndarray, np.ndarray]:
    sprites = _sprite_vectors(tile).astype(np.float64)
    return sprites, np.einsum("kn,kn->k", sprites, sprites)


def _render_labels(labels: np.ndarray) -> Image.Image:
    sprites = tile_sprites()
    rows, cols = labels.shape
    pixels = sprites[labels].transpose(0, 2, 1, 3, 4).reshape(rows * TILE, cols * TILE, 3)
    return Image.fromarray(np.ascontiguousarray(pixels))


def _synthesis_error(labels: np.ndarray, target: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Per-pixel absolute error between the input and the labelled room rendered at its size."""
    rendered = _render_labels(labels)
    if rendered.size != size:
        rendered = rendered.resize(size, Image.Resampling.LANCZOS)
    return np.abs(np.asarray(rendered, dtype=np.float32) - target)


def _local_error(labels: np.ndarray, row: int, col: int, target: np.ndarray, size: tuple[int, int]) -> float:
    """Input-vs-rendering error around one tile, rendering and resampling only that neighbourhood.

    PIL's ``resize(box=...)`` resamples a sub-rectangle with the same pixel-centre mapping and
    filter as resizing the whole picture, so a crop of the room with a few tiles of margin (wider
    than the LANCZOS support) reproduces the full resize in the region compared.
    """
    rows, cols = labels.shape
    width, height = size
    y0 = int(np.floor(max(row - 1, 0) * height / rows))
    y1 = int(np.ceil(min(row + 2, rows) * height / rows))
    x0 = int(np.floor(max(col - 1, 0) * width / cols))
    x1 = int(np.ceil(min(col + 2, cols) * width / cols))
    r0, r1 = max(row - _CROP_MARGIN, 0), min(row + _CROP_MARGIN + 1, rows)
    c0, c1 = max(col - _CROP_MARGIN, 0), min(col + _CROP_MARGIN + 1, cols)
    crop = _render_labels(labels[r0:r1, c0:c1])
    sx, sy = TILE * cols / width, TILE * rows / height
    box = (x0 * sx - TILE * c0, y0 * sy - TILE * r0, x1 * sx - TILE * c0, y1 * sy - TILE * r0)
    patch = np.asarray(crop.resize((x1 - x0, y1 - y0), Image.Resampling.LANCZOS, box=box), dtype=np.float32)
    return float(np.abs(patch - target[y0:y1, x0:x1]).mean())


def _refine(labels: np.ndarray, distances: np.ndarray, target: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Settle near-ties between sprites by comparing re-rendered pictures with the input."""
    labels = labels.copy()
    order = np.argsort(distances, axis=-1)
    best = np.take_along_axis(distances, order[..., :1], axis=-1)[..., 0]
    second = np.take_along_axis(distances, order[..., 1:2], axis=-1)[..., 0]
    for row, col in np.argwhere(second <= AMBIGUITY_RATIO * best + 1.0):
        current = _local_error(labels, row, col, target, size)
        chosen = labels[row, col]
        for alternative in order[row, col, 1:3]:
            labels[row, col] = alternative
            error = _local_error(labels, row, col, target, size)
            if error < current:
                chosen, current = alternative, error
        labels[row, col] = chosen
    return labels


def _labels_to_grid(labels: np.ndarray) -> str:
    fixed = np.where(np.isin(labels, (TARGET, BOX_ON_TARGET, PLAYER_ON_TARGET)), TARGET,
                     np.where(labels == WALL, WALL, FLOOR))
    state = labels.copy()
    state[labels == PLAYER_ON_TARGET] = PLAYER
    # Only the player count is checked here; read_grid re-parses the text for the other rules.
    return format_grid(level_from_arrays(fixed, state))


def _score_finalist(rgb: Image.Image, candidate: _Candidate) -> None:
    native = (candidate.width * TILE, candidate.height * TILE)
    source = rgb
    if rgb.width > 4 * native[0]:
        # Box-reducing to 4x native size first saves most of the LANCZOS cost at no loss in accuracy
        # (measured on every fixture level at 128 to 1280 px).
        source = rgb.resize((4 * native[0], 4 * native[1]), Image.Resampling.BOX)
    candidate.distances = _distances(source, candidate.height, candidate.width, TILE)
    candidate.labels = np.argmin(candidate.distances, axis=-1)
    candidate.error = float(candidate.distances.min(axis=-1).mean())


def read_grid(image: Image.Image) -> str:
    """The XSB grid shown in a gym-sokoban frame (raw or resized with LANCZOS).

    Raises ``ValueError`` (message starting "not a Sokoban board") when the image is not one.
    """
    from evaluators.sokoban.levels import parse_grid

    width, height = image.size
    sizes = _candidate_sizes(width, height)
    if not sizes:
        raise ValueError(f"not a Sokoban board: a {width}x{height} image cannot hold a grid of square tiles")
    rgb = _to_rgb(image)
    candidates = [_Candidate(rows, cols) for rows, cols in sizes]
    # The coarse pass resamples once per candidate, so it starts from a small copy of the input.
    scale = min(1.0, COARSE_SIDE / max(width, height))
    small = rgb if scale == 1.0 else rgb.resize((max(1, round(width * scale)), max(1, round(height * scale))),
                                                Image.Resampling.BOX)
    for candidate in candidates:
        if small.width < candidate.width * COARSE_TILE or small.height < candidate.height * COARSE_TILE:
            continue  # too small to rank cheaply: left at the back of the queue
        coarse = _distances(small, candidate.height, candidate.width, COARSE_TILE)
        candidate.coarse = float(coarse.min(axis=-1).mean())
    ranked = sorted(candidates, key=lambda c: c.coarse)[:FINALISTS]
    for candidate in ranked:
        _score_finalist(rgb, candidate)
    chosen = min(ranked, key=lambda c: c.error)
    assert chosen.labels is not None and chosen.distances is not None
    if chosen.error > MAX_TILE_ERROR:
        # Checked before refining: on a photo every tile would be a near-tie worth re-rendering.
        raise ValueError(f"not a Sokoban board: no grid of gym-sokoban tiles fits the image (best: "
                         f"{chosen.height}x{chosen.width}, mean squared tile error {chosen.error:.0f}, "
                         f"limit {MAX_TILE_ERROR:.0f})")
    target = np.asarray(rgb, dtype=np.float32)
    labels = _refine(chosen.labels, chosen.distances, target, (width, height))
    board_error = float(_synthesis_error(labels, target, (width, height)).mean())
    if board_error > MAX_BOARD_ERROR:
        raise ValueError(f"not a Sokoban board: the best {chosen.height}x{chosen.width} tile reading differs "
                         f"from the image by {board_error:.1f} per channel (limit {MAX_BOARD_ERROR})")
    try:
        return format_grid(parse_grid(_labels_to_grid(labels)))
    except ValueError as exc:
        raise ValueError(f"not a Sokoban board: the {chosen.height}x{chosen.width} tile reading is not a "
                         f"valid room ({exc})") from None
