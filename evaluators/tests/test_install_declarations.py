"""Each environment's install/ folder is read without importing it (evaluators/install.py), and the
platform's own install files (scripts/setup, the Dockerfile, the compose files, requirements/,
pyproject.toml) name no environment and nothing only an environment needs."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from evaluators.install import InstallDeclarationError, read_installs

ROOT = Path(__file__).resolve().parents[2]

#: The files that install and run the platform, which an environment's needs must stay out of.
SHARED = ["scripts/setup", "scripts/test", "Dockerfile", "docker-compose.yml", "docker-compose.workers.yml",
          "pyproject.toml", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "requirements").glob("*.txt"))]


def _declare(root: Path, environment: str, files: dict[str, str]) -> None:
    folder = root / environment / "install"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)


def _cli(root: Path, what: str) -> subprocess.CompletedProcess[str]:
    # -S: no site-packages, so the reader runs as it does before the virtualenv exists.
    return subprocess.run([sys.executable, "-S", "-m", "evaluators.install", what, "--root", str(root)],
                          cwd=ROOT, capture_output=True, text=True)


def test_the_reader_lists_every_folders_declarations_with_the_standard_library_alone(tmp_path: Path) -> None:
    _declare(tmp_path, "chess", {"system-packages.txt": "# the engine\nstockfish\nzlib1g\n",
                                 "requirements.txt": "python-chess>=1.9\n",
                                 "imports.txt": "chess  # checked after the install\n"})
    _declare(tmp_path, "go", {"system-packages.txt": "pachi\nzlib1g\n", "build-requirements.txt": "gtp-engine==1.0\n"})
    (tmp_path / "no-needs").mkdir()
    assert _cli(tmp_path, "apt").stdout.split() == ["pachi", "stockfish", "zlib1g"]  # each once, sorted
    assert _cli(tmp_path, "requirements").stdout.split() == [str(tmp_path / "chess/install/requirements.txt")]
    assert _cli(tmp_path, "build").stdout.split() == [str(tmp_path / "go/install/build-requirements.txt")]
    assert _cli(tmp_path, "imports").stdout.split() == ["chess"]
    assert len(_cli(tmp_path, "files").stdout.split()) == 5


@pytest.mark.parametrize(("files", "refusal"), [
    ({"system_packages.txt": "pachi\n"}, "unknown file(s) system_packages.txt"),
    ({"system-packages.txt": "GNU Go\n"}, "not a Debian package name: GNU Go"),
    ({"imports.txt": "gfootball-engine\n"}, "not a module name: gfootball-engine"),
])
def test_a_misspelt_file_or_a_malformed_line_is_refused_and_the_command_fails(
        tmp_path: Path, files: dict[str, str], refusal: str) -> None:
    _declare(tmp_path, "env", files)
    with pytest.raises(InstallDeclarationError, match=re.escape(refusal)):
        read_installs(tmp_path)
    finished = _cli(tmp_path, "apt")
    assert finished.returncode == 1 and refusal in finished.stderr and finished.stdout == ""


def _platform_own(name: str) -> set[str]:
    """What the platform installs for itself: its requirements' names and setup's own apt list."""
    if name == "apt":
        line = re.search(r"^APT_PACKAGES=\((.*?)\)", (ROOT / "scripts/setup").read_text(), re.M | re.S)
        assert line, "scripts/setup lists the platform's own packages in APT_PACKAGES=(...)"
        return set(line.group(1).split())
    return {_requirement_name(line) for path in (ROOT / "requirements").glob("*.txt")
            for line in path.read_text().splitlines() if _requirement_name(line)}


def _requirement_name(line: str) -> str:
    line = line.split("#", 1)[0].strip()
    return "" if not line or line.startswith("-") else re.split(r"[\s=<>!~;\[]", line, maxsplit=1)[0].lower()


def _environment_words() -> set[str]:
    """Each environment folder's name, and what only it installs: apt packages, requirements, modules."""
    words = {path.parent.name for path in (ROOT / "evaluators").glob("*/plugin.py")}
    for install in read_installs():
        words |= set(install.system_packages) - _platform_own("apt")
        words |= {module.split(".")[0] for module in install.imports}
        for path in (install.requirements, install.build_requirements):
            names = {_requirement_name(line) for line in path.read_text().splitlines()} if path else set()
            words |= names - _platform_own("requirements") - {""}
    return words


def test_the_platforms_install_files_name_no_environment_and_nothing_only_an_environment_installs() -> None:
    words = _environment_words()
    assert {"football", "gfootball", "gfootball_engine", "gym-sokoban", "libsdl2-dev"} <= words  # the check sees them
    alternatives = "|".join(map(re.escape, sorted(words, key=len, reverse=True)))
    pattern = re.compile(rf"(?<![\w-])({alternatives})(?![\w-])", re.IGNORECASE)
    found = []
    for name in SHARED:
        for number, line in enumerate((ROOT / name).read_text().splitlines(), 1):
            code = re.sub(r"(^|\s)#.*", "", line)  # comments may explain; they install nothing
            found += [f"{name}:{number}: {match}" for match in pattern.findall(code)]
    assert found == []


def test_every_environment_folder_of_the_tree_has_a_readable_declaration() -> None:
    installs = {install.environment: install for install in read_installs()}
    assert "gfootball_engine" in installs["football"].imports
    assert installs["football"].build_requirements is not None
    assert "chromium" in installs["webui"].system_packages  # shared with the site's tests: declared by both
