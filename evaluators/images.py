"""Image handling shared by every environment (reference §2.1)."""
from __future__ import annotations

from PIL import Image


def resize_longest_side(image: Image.Image, resolution: int) -> Image.Image:
    """Resize so the longest side equals ``resolution`` (LANCZOS, upscaling small images too)."""
    if resolution <= 0:
        raise ValueError(f"resolution must be positive, got {resolution}")
    width, height = image.size
    # The official resize computes the scale and truncates the product exactly so: a side that
    # rounds to one pixel more (or a float product just under the resolution) stays as it does there.
    scale = resolution / float(max(width, height))
    size = (max(1, int(width * scale)), max(1, int(height * scale)))
    if size == image.size:
        return image.copy()
    return image.resize(size, Image.Resampling.LANCZOS)
