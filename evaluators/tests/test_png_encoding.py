"""The frames' PNG encoding: lossless in every mode, and a valid PNG for any reader."""
from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from evaluators.images import png_bytes


def _noise(size: tuple[int, int]) -> Image.Image:
    """An RGB image of random pixels, which no filter or deflate level can flatter."""
    rng = np.random.default_rng(7)
    return Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8), "RGB")


@pytest.mark.parametrize("mode", ["RGB", "RGBA", "L", "P", "1", "CMYK", "I;16"])
@pytest.mark.parametrize("size", [(1, 1), (3, 2), (1, 5), (257, 31)])
def test_every_mode_and_shape_decodes_to_the_same_pixels(mode, size):
    image = _noise(size).convert(mode)
    decoded = Image.open(io.BytesIO(png_bytes(image)))
    decoded.load()
    expected = image.convert("RGB") if mode == "CMYK" else image
    assert decoded.size == size
    assert decoded.mode == expected.mode
    assert np.array_equal(np.asarray(decoded), np.asarray(expected))


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, at = [], 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at:at + 4])
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length:at + 12 + length])
        assert crc == zlib.crc32(kind + body), kind
        chunks.append((kind, body))
        at += 12 + length
    return chunks


def test_an_rgb_frame_is_one_checksummed_header_data_and_end_with_unfiltered_rows():
    image = _noise((4, 3))
    chunks = _chunks(png_bytes(image))
    assert [kind for kind, _ in chunks] == [b"IHDR", b"IDAT", b"IEND"]
    assert struct.unpack(">IIBBBBB", chunks[0][1]) == (4, 3, 8, 2, 0, 0, 0)
    rows = zlib.decompress(chunks[1][1])
    assert len(rows) == 3 * (1 + 4 * 3)
    assert [rows[r * 13] for r in range(3)] == [0, 0, 0]
    assert rows[1:13] == np.asarray(image)[0].tobytes()


def test_a_frame_is_encoded_once_while_it_lives():
    image = _noise((8, 8))
    assert png_bytes(image) is png_bytes(image)
