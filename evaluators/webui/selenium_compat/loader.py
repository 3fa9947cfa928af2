"""Loading an official ``actions.py`` so that it runs unchanged against the facade.

The file is executed with fresh globals, as the official environment does, but its builtins carry
an ``__import__`` that serves stub modules under Selenium's real names and a ``time`` module whose
``sleep`` cooperates with Playwright. Nothing is added to ``sys.modules``, and the same restricted
import also applies to ``import`` statements inside the functions when they later run.

Only the imports official files use are accepted (the three Selenium modules and ``time``); any
other import, anywhere in the file, is an :class:`ActionsFileError` naming it, raised at load time.
"""
from __future__ import annotations

import ast
import builtins
import contextlib
import contextvars
import time as real_time
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import action_chains, by, keys
from .errors import ActionsFileError

ALLOWED_IMPORTS = frozenset({
    "time",
    "selenium.webdriver.common.by",
    "selenium.webdriver.common.action_chains",
    "selenium.webdriver.common.keys",
})

_sleeper: contextvars.ContextVar[Callable[[float], None]] = contextvars.ContextVar(
    "selenium_compat_sleep", default=real_time.sleep)


@contextlib.contextmanager
def cooperative_sleep(sleep: Callable[[float], None]) -> Iterator[None]:
    """Route ``time.sleep`` calls made by loaded actions to ``sleep`` while the block runs.

    The renderer passes the driver's ``wait``, so the official sleeps keep their length on the
    page's clock (``evaluators.webui.clock``: virtual by default, the wall clock on request) while
    Playwright keeps handling dialogs and page events.
    """
    token = _sleeper.set(sleep)
    try:
        yield
    finally:
        _sleeper.reset(token)


def _sleep(seconds: float) -> None:
    _sleeper.get()(seconds)


def _module(name: str, attributes: Mapping[str, Any], doc: str) -> types.ModuleType:
    module = types.ModuleType(name, doc)
    module.__dict__.update(attributes)
    return module


def _build_stubs() -> dict[str, types.ModuleType]:
    time_module = _module("time", {k: v for k, v in vars(real_time).items() if not k.startswith("__")},
                          "time, with sleep() cooperating with the page being driven")
    time_module.sleep = _sleep  # type: ignore[attr-defined]
    by_module = _module("selenium.webdriver.common.by", {"By": by.By}, "Locator strategies.")
    chains_module = _module("selenium.webdriver.common.action_chains",
                            {"ActionChains": action_chains.ActionChains}, "ActionChains over Playwright.")
    keys_module = _module("selenium.webdriver.common.keys", {"Keys": keys.Keys}, "WebDriver key code points.")
    common = _module("selenium.webdriver.common",
                     {"by": by_module, "action_chains": chains_module, "keys": keys_module}, "")
    webdriver = _module("selenium.webdriver", {"common": common}, "")
    selenium = _module("selenium", {"webdriver": webdriver}, "Selenium names served by the Playwright facade.")
    for package in (common, webdriver, selenium):
        package.__path__ = []
    return {module.__name__: module for module in
            (time_module, by_module, chains_module, keys_module, common, webdriver, selenium)}


STUB_MODULES = _build_stubs()


def _restricted_import(name: str, globals: Mapping[str, Any] | None = None, locals: Any = None,
                       fromlist: Sequence[str] | None = (), level: int = 0) -> types.ModuleType:
    if level:
        raise ImportError(f"relative import of {name!r} is not allowed in actions.py")
    module = STUB_MODULES.get(name)
    if module is None:
        raise ImportError(f"actions.py may only import {', '.join(sorted(ALLOWED_IMPORTS))}; not {name!r}")
    if fromlist or name == "time":
        return module
    return STUB_MODULES[name.split(".")[0]]  # "import a.b.c" binds the top package


def _check_imports(tree: ast.AST, path: Path) -> None:
    allowed = ", ".join(sorted(ALLOWED_IMPORTS))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name not in ALLOWED_IMPORTS:
                    raise ActionsFileError(f"{path}: line {node.lineno} imports {alias.name!r}, which "
                                           f"actions files may not import (allowed: {allowed})")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                raise ActionsFileError(f"{path}: line {node.lineno} has a relative import "
                                       f"({'.' * node.level}{module}), which actions files may not use")
            if module in ALLOWED_IMPORTS:
                continue
            for alias in node.names:
                if f"{module}.{alias.name}" not in ALLOWED_IMPORTS:
                    raise ActionsFileError(
                        f"{path}: line {node.lineno} imports {alias.name!r} from {module!r}, which actions "
                        f"files may not import (allowed: {allowed})")


def load_actions(path: Path | str) -> list[Callable[..., Any]]:
    """The module-level ``actions`` list of an actions.py; [] when the file does not exist.

    Raises :class:`ActionsFileError` for a file that does not compile, imports anything beyond
    the Selenium modules and ``time``, fails while its module-level code runs, or has no
    ``actions`` list of callables.
    """
    path = Path(path)
    if not path.is_file():
        return []
    source = path.read_bytes()
    try:
        tree = ast.parse(source, filename=str(path))
    except (SyntaxError, ValueError) as exc:
        raise ActionsFileError(f"{path}: does not compile: {exc}") from exc
    _check_imports(tree, path)
    safe_builtins = dict(vars(builtins))
    safe_builtins["__import__"] = _restricted_import
    namespace: dict[str, Any] = {"__name__": "actions", "__file__": str(path), "__builtins__": safe_builtins}
    try:
        exec(compile(tree, str(path), "exec", dont_inherit=True), namespace)
    except Exception as exc:
        raise ActionsFileError(f"{path}: failed while loading: {type(exc).__name__}: {exc}") from exc
    actions = namespace.get("actions")
    if not isinstance(actions, (list, tuple)):
        raise ActionsFileError(f"{path}: defines no module-level `actions` list")
    for entry in actions:
        if not callable(entry):
            raise ActionsFileError(f"{path}: `actions` holds {entry!r}, which is not a function")
    return list(actions)
