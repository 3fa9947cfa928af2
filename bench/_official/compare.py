"""Request bodies compared field by field: texts character for character, images by their pixels."""
from __future__ import annotations

import base64
import binascii
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from PIL import Image

from bench._official.cases import Case
from bench._official.runs import OfficialRun, PlatformRun

TOP_LEVEL = ("model", "temperature", "top_p", "frequency_penalty", "max_tokens")


@dataclass
class ImageTally:
    compared: int = 0
    same_pixels: int = 0
    same_bytes: int = 0
    size_only: int = 0


def _context(text: str, at: int, width: int = 40) -> str:
    start = max(0, at - width)
    return ("…" if start else "") + repr(text[start:at + width])[1:-1] + ("…" if at + width < len(text) else "")


def text_difference(official: str, platform: str) -> str | None:
    if official == platform:
        return None
    limit = min(len(official), len(platform))
    at = next((i for i in range(limit) if official[i] != platform[i]), limit)
    return (f"first differs at character {at} (lengths {len(official)} vs {len(platform)}): "
            f"official «{_context(official, at)}» / platform «{_context(platform, at)}»")


_DATA_URL = re.compile(r"^data:(?P<type>[^;,]*)(?P<b64>;base64)?,(?P<data>.*)$", re.DOTALL)


def _decode(url: Any) -> tuple[str, bytes] | str:
    if not isinstance(url, str):
        return f"not a string URL: {type(url).__name__}"
    match = _DATA_URL.match(url)
    if not match or not match.group("b64"):
        return f"not a base64 data URL: {url[:40]!r}"
    try:
        return match.group("type"), base64.b64decode(match.group("data"), validate=True)
    except (binascii.Error, ValueError) as exc:
        return f"bad base64: {exc}"


def image_difference(official: Any, platform: Any, tally: ImageTally, size_only: bool) -> str | None:
    tally.compared += 1
    one, two = _decode(official), _decode(platform)
    if isinstance(one, str) or isinstance(two, str):
        problems = [each if isinstance(each, str) else "ok" for each in (one, two)]
        return f"image URL: official {problems[0]}, platform {problems[1]}"
    (type_one, bytes_one), (type_two, bytes_two) = one, two
    if type_one != type_two:
        return f"image media type label: official {type_one!r}, platform {type_two!r}"
    if bytes_one == bytes_two:
        tally.same_bytes += 1
        tally.same_pixels += 1
        return None
    try:
        img_one: Image.Image = Image.open(io.BytesIO(bytes_one))
        img_two: Image.Image = Image.open(io.BytesIO(bytes_two))
        img_one.load()
        img_two.load()
    except Exception as exc:  # noqa: BLE001
        return f"image cannot be decoded: {exc}"
    if img_one.size != img_two.size:
        sizes = (f"image size: official {img_one.size[0]}×{img_one.size[1]}, "
                 f"platform {img_two.size[0]}×{img_two.size[1]}")
        if size_only:
            return sizes
        return sizes + "; " + _crop_relation(img_one, img_two)
    if size_only:
        tally.size_only += 1
        return None
    if img_one.mode != img_two.mode:
        img_one, img_two = img_one.convert("RGBA"), img_two.convert("RGBA")
    if img_one.tobytes() != img_two.tobytes():
        rgba_one, rgba_two = img_one.convert("RGBA"), img_two.convert("RGBA")
        width = img_one.size[0]
        flat_one, flat_two = rgba_one.tobytes(), rgba_two.tobytes()
        differing = [i for i in range(0, len(flat_one), 4) if flat_one[i:i + 4] != flat_two[i:i + 4]]
        first = differing[0]
        x, y = (first // 4) % width, (first // 4) // width
        return (f"image pixels ({img_one.size[0]}×{img_one.size[1]}, {img_one.mode}/{img_two.mode}): "
                f"{len(differing)} pixels differ, first at ({x}, {y}): "
                f"official RGBA {tuple(flat_one[first:first + 4])}, platform {tuple(flat_two[first:first + 4])}")
    tally.same_pixels += 1
    return None


def _crop_relation(official: Image.Image, platform: Image.Image) -> str:
    """Whether the smaller image is the larger one's top-left corner, pixel for pixel."""
    small, large, which = ((official, platform, "official") if official.size[0] * official.size[1]
                           <= platform.size[0] * platform.size[1] else (platform, official, "platform"))
    if small.size[0] > large.size[0] or small.size[1] > large.size[1]:
        return "neither is a crop of the other"
    corner = large.convert("RGBA").crop((0, 0, small.size[0], small.size[1]))
    if corner.tobytes() == small.convert("RGBA").tobytes():
        return f"the {which} image is the other's top-left {small.size[0]}×{small.size[1]}, pixel for pixel"
    return f"the {which} image is not the other's top-left corner"


def _parts(content: Any) -> list[dict[str, Any]] | str:
    if isinstance(content, list):
        return [part if isinstance(part, dict) else {"type": repr(part)} for part in content]
    return content if isinstance(content, str) else repr(content)


def request_differences(official: Mapping[str, Any], platform: Mapping[str, Any], tally: ImageTally,
                        size_only: bool) -> list[str]:
    """Every difference between two request bodies, first ones first."""
    found = _top_level_differences(official, platform)
    messages_one, messages_two = official.get("messages") or [], platform.get("messages") or []
    roles_one = [m.get("role") for m in messages_one]
    roles_two = [m.get("role") for m in messages_two]
    if roles_one != roles_two:
        found.append(f"message roles: official {roles_one}, platform {roles_two}")
    for index, (one, two) in enumerate(zip(messages_one, messages_two)):
        found += _message_differences(f"message {index} ({one.get('role')})", one, two, tally, size_only)
    return found


def _top_level_differences(official: Mapping[str, Any], platform: Mapping[str, Any]) -> list[str]:
    found: list[str] = []
    keys_one, keys_two = set(official) - {"messages"}, set(platform) - {"messages"}
    if keys_one != keys_two:
        found.append(f"top-level fields: only official {sorted(keys_one - keys_two)}, "
                     f"only platform {sorted(keys_two - keys_one)}")
    for key in list(TOP_LEVEL) + sorted((keys_one & keys_two) - set(TOP_LEVEL)):
        if key in official and key in platform and official[key] != platform[key]:
            found.append(f"{key}: official {official[key]!r}, platform {platform[key]!r}")
    return found


def _message_differences(where: str, one: Mapping[str, Any], two: Mapping[str, Any], tally: ImageTally,
                         size_only: bool) -> list[str]:
    found: list[str] = []
    if set(one) != set(two):
        found.append(f"{where} fields: official {sorted(one)}, platform {sorted(two)}")
    content_one, content_two = _parts(one.get("content")), _parts(two.get("content"))
    if isinstance(content_one, str) and isinstance(content_two, str):
        diff = text_difference(content_one, content_two)
        if diff:
            found.append(f"{where} text: {diff}")
        return found
    if isinstance(content_one, str) or isinstance(content_two, str):
        kinds = ["a string" if isinstance(c, str) else f"a list of {len(c)} parts" for c in (content_one, content_two)]
        found.append(f"{where} content: official {kinds[0]}, platform {kinds[1]}")
        return found
    types_one = [p.get("type") for p in content_one]
    types_two = [p.get("type") for p in content_two]
    if types_one != types_two:
        found.append(f"{where} parts: official {types_one}, platform {types_two}")
    for number, (part_one, part_two) in enumerate(zip(content_one, content_two)):
        # Parts of different types were reported with the types above.
        if part_one.get("type") == part_two.get("type"):
            found += _part_differences(f"{where} part {number}", part_one, part_two, tally, size_only)
    return found


def _part_differences(at: str, part_one: Mapping[str, Any], part_two: Mapping[str, Any], tally: ImageTally,
                      size_only: bool) -> list[str]:
    found: list[str] = []
    if set(part_one) != set(part_two):
        found.append(f"{at} fields: official {sorted(part_one)}, platform {sorted(part_two)}")
    if part_one.get("type") == "text":
        diff = text_difference(str(part_one.get("text")), str(part_two.get("text")))
        if diff:
            found.append(f"{at} text: {diff}")
    elif part_one.get("type") == "image_url":
        image_one, image_two = part_one.get("image_url") or {}, part_two.get("image_url") or {}
        if set(image_one) != set(image_two):
            found.append(f"{at} image_url fields: official {sorted(image_one)}, platform {sorted(image_two)}")
        diff = image_difference(image_one.get("url"), image_two.get("url"), tally, size_only)
        if diff:
            found.append(f"{at} {diff}")
    elif part_one != part_two:
        found.append(f"{at}: official {str(part_one)[:80]}, platform {str(part_two)[:80]}")
    return found


@dataclass
class Outcome:
    label: str
    case: Case
    scenario: str
    picked: str
    official: OfficialRun
    platform: PlatformRun
    differences: list[tuple[int, list[str]]]
    tally: ImageTally

    @property
    def compared(self) -> int:
        return min(len(self.official.bodies), len(self.platform.bodies))

    @property
    def equal(self) -> int:
        return self.compared - len(self.differences)

    @property
    def count_differs(self) -> bool:
        return len(self.official.bodies) != len(self.platform.bodies)

    @property
    def first(self) -> str:
        if self.differences:
            index, found = self.differences[0]
            return f"request {index + 1}: {found[0]}"
        if self.count_differs:
            return f"request count: official {len(self.official.bodies)}, platform {len(self.platform.bodies)}"
        if not self.compared:
            return "no request was made"
        return "-"


def compare(label: str, case: Case, scenario: str, picked: str, official: OfficialRun,
            platform: PlatformRun) -> Outcome:
    tally = ImageTally()
    differences = []
    for index, (one, two) in enumerate(zip(official.bodies, platform.bodies)):
        found = request_differences(one, two, tally, case.size_only)
        if found:
            differences.append((index, found))
    return Outcome(label, case, scenario, picked, official, platform, differences, tally)
