"""What each environment needs installed, read from plain files in its folder, without importing it.

``scripts/setup`` (and through it the Dockerfile) runs before the virtualenv exists, so an
environment's system packages and Python requirements cannot be declared on its plug-in class.
Each plug-in folder may hold an ``install/`` folder instead, with any of these files:

``system-packages.txt``
    Debian packages, one a line, installed with apt-get (the platform's own list and every
    environment's are installed together; a package named twice is installed once).
``requirements.txt``
    A pip requirements file, resolved in one pip run with the platform's ``requirements/test.txt``.
``build-requirements.txt``
    A pip requirements file installed afterwards without build isolation, with the virtualenv's
    ``bin/`` first on PATH: for a package built from source whose build script runs the ``python3``
    on PATH and imports what ``requirements.txt`` installed.
``imports.txt``
    Modules, one a line, that must import once everything is installed (a build that produced no
    working extension fails the setup, not the first attempt).

In every file a ``#`` starts a comment and blank lines are skipped. Any other file in ``install/``
is refused (a misspelt name would otherwise install nothing, silently). Standard library only::

    python3 -m evaluators.install apt            # the Debian packages, each once
    python3 -m evaluators.install requirements   # the requirements.txt files, one path a line
    python3 -m evaluators.install build          # the build-requirements.txt files
    python3 -m evaluators.install imports        # the modules to import
    python3 -m evaluators.install files          # every declaration file (setup's stamp hashes them)

``--root DIR`` reads the plug-in folders under DIR instead of this package's folder.
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
FOLDER = "install"
SYSTEM_PACKAGES = "system-packages.txt"
REQUIREMENTS = "requirements.txt"
BUILD_REQUIREMENTS = "build-requirements.txt"
IMPORTS = "imports.txt"
FILES = (SYSTEM_PACKAGES, REQUIREMENTS, BUILD_REQUIREMENTS, IMPORTS)

# Debian's rule for package names (Debian Policy 5.6.1), and a dotted Python module name.
_DEBIAN_PACKAGE = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")
_MODULE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


class InstallDeclarationError(ValueError):
    """An ``install/`` folder holding a file of another name or a line that is not what its file lists."""


@dataclass(frozen=True)
class Install:
    """One environment folder's install declaration."""

    environment: str
    folder: Path
    system_packages: tuple[str, ...] = ()
    requirements: Path | None = None
    build_requirements: Path | None = None
    imports: tuple[str, ...] = ()

    @property
    def files(self) -> tuple[Path, ...]:
        return tuple(self.folder / name for name in FILES if (self.folder / name).is_file())


def _lines(path: Path) -> list[str]:
    if not path.is_file():
        return []
    return [line for line in (raw.split("#", 1)[0].strip() for raw in path.read_text().splitlines()) if line]


def _checked(path: Path, pattern: re.Pattern[str], what: str) -> tuple[str, ...]:
    lines = _lines(path)
    wrong = [line for line in lines if not pattern.match(line)]
    if wrong:
        raise InstallDeclarationError(f"{path}: not {what}: {', '.join(wrong)}")
    return tuple(lines)


def read_install(folder: Path) -> Install:
    """The declaration in ``folder`` (an environment's ``install/``)."""
    unknown = sorted(path.name for path in folder.iterdir() if path.name not in FILES)
    if unknown:
        raise InstallDeclarationError(f"{folder}: unknown file(s) {', '.join(unknown)}; "
                                      f"an install folder holds only {', '.join(FILES)}")
    present = {name: folder / name for name in (REQUIREMENTS, BUILD_REQUIREMENTS) if (folder / name).is_file()}
    return Install(environment=folder.parent.name, folder=folder,
                   system_packages=_checked(folder / SYSTEM_PACKAGES, _DEBIAN_PACKAGE, "a Debian package name"),
                   requirements=present.get(REQUIREMENTS), build_requirements=present.get(BUILD_REQUIREMENTS),
                   imports=_checked(folder / IMPORTS, _MODULE, "a module name"))


def read_installs(root: Path = ROOT) -> list[Install]:
    """Every environment folder's declaration under ``root``, by folder name; a folder without
    ``install/`` needs nothing beyond the platform's own packages."""
    return [read_install(folder) for folder in sorted(root.glob(f"*/{FOLDER}")) if folder.is_dir()]


def system_packages(installs: list[Install]) -> list[str]:
    return sorted({package for install in installs for package in install.system_packages})


def answer(what: str, installs: list[Install]) -> list[str]:
    """The lines ``python3 -m evaluators.install WHAT`` prints."""
    if what == "apt":
        return system_packages(installs)
    if what == "requirements":
        return [str(install.requirements) for install in installs if install.requirements]
    if what == "build":
        return [str(install.build_requirements) for install in installs if install.build_requirements]
    if what == "imports":
        return [module for install in installs for module in install.imports]
    return [str(path) for install in installs for path in install.files]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m evaluators.install",
                                     description="What the environments' install/ folders declare.")
    parser.add_argument("what", choices=("apt", "requirements", "build", "imports", "files"))
    parser.add_argument("--root", type=Path, default=ROOT, help="the folder holding the environment folders")
    args = parser.parse_args(argv)
    try:
        lines = answer(args.what, read_installs(args.root))
    except InstallDeclarationError as exc:
        print(f"evaluators.install: {exc}", file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
