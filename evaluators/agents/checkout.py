"""An operator's checkout of the official MageBench harness, read as data.

The official prompts are Python source: properties returning strings (``env/*_env.py``), branches of
``special_prompt_for_task`` and the turns the flows add (``Flow/*.py``). The platform never imports,
runs or compiles those files: :class:`OfficialCheckout` parses them with :mod:`ast` and evaluates only
text expressions (:mod:`evaluators.agents.official_text`), so a checkout cannot execute anything here.
Every file read is hashed, and the digest of those hashes is what a suite records of the checkout it
read. The flow readers (:mod:`evaluators.agents.official_flows`, and an environment's own for a flow only
it plays) also check that each flow still builds its requests the way the platform composes them.

The environment plug-ins' ``official.py`` modules put the pieces together into prompt sets.
"""
from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path

from evaluators.agents.official_flows import (
    GlobalFlowTexts,
    OnlineFlowTexts,
    check_client_merges,
    read_global_flow,
    read_online_flow,
)
from evaluators.agents.official_source import (
    CheckoutError,
    SourceFile,
    local_names,
    returned_value,
    single_call,
    single_text_part,
    statement_bodies,
    task_branch,
    walk_statements,
)
from evaluators.checkout_files import TooDeep, link_out_of, parse_python
from evaluators.declarations import PROMPTS_OFFICIAL, PromptSet

GLOBAL_FLOW = "Flow/GlobalPlanning.py"
ONLINE_FLOW = "Flow/Online_HL_FBandSB.py"
CLIENT = "API/HF.py"
#: The folders that make a directory an official checkout.
REQUIRED_FOLDERS = ("Flow", "env")


class OfficialCheckout:
    """A checkout of the official harness at ``root`` (the folder holding ``Flow/`` and ``env/``)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise CheckoutError(f"{self.root}: no such folder, so no official checkout is there")
        missing = [name for name in REQUIRED_FOLDERS if not (self.root / name).is_dir()]
        if missing:
            raise CheckoutError(f"{self.root} is not an official MageBench checkout: it has no "
                                + " and no ".join(f"{name}/ folder" for name in missing))
        self._files: dict[str, SourceFile] = {}

    @classmethod
    def beside(cls, resources: Path) -> OfficialCheckout | None:
        """The checkout whose ``resources/`` folder is ``resources``; None when its parent is none."""
        parent = Path(resources).resolve().parent
        if all((parent / name).is_dir() for name in REQUIRED_FOLDERS):
            return cls(parent)
        return None

    def __repr__(self) -> str:
        return f"OfficialCheckout({str(self.root)!r})"

    # files

    def source(self, path: str) -> SourceFile:
        """The parsed file ``path`` (relative, with /), read once; never imported or run."""
        cached = self._files.get(path)
        if cached is not None:
            return cached
        full = self.root / path
        escape = link_out_of(self.root, full)
        if escape is not None:
            link, target = escape
            raise CheckoutError(f"{link}: a symbolic link that leads out of the official checkout at {self.root} "
                                f"(to {target}); only the checkout's own files are read")
        if not full.is_file():
            raise CheckoutError(f"{path}: missing from the official checkout at {self.root}")
        data = full.read_bytes()
        try:
            text = data.decode("utf-8")
            tree = parse_python(text, path)
        except TooDeep as exc:
            raise CheckoutError(f"{path}: cannot be read as data: {exc}") from None
        except (UnicodeDecodeError, SyntaxError, ValueError) as exc:
            raise CheckoutError(f"{path}: cannot be read as Python source: {exc}") from None
        parsed = SourceFile(path, tree, hashlib.sha256(data).hexdigest())
        self._files[path] = parsed
        return parsed

    def files(self) -> dict[str, str]:
        """Relative path → sha256 of every file read so far."""
        return {path: self._files[path].sha256 for path in sorted(self._files)}

    def digest(self) -> str:
        """One sha256 over the files read so far (paths and their hashes, in path order)."""
        lines = "".join(f"{path}\0{sha}\n" for path, sha in self.files().items())
        return hashlib.sha256(lines.encode()).hexdigest()

    # texts of the environments

    def returned_text(self, path: str, cls: str, name: str) -> str:
        """The text a method or property of ``cls`` returns (``SokobanEnv.system_prompt``)."""
        source = self.source(path)
        function = source.method(cls, name)
        value = returned_value(source, function.body, function)
        return source.reader(local_names(function.body)).text(value)

    def task_text(self, path: str, cls: str, name: str, task: str) -> str:
        """The one text part that ``cls.name`` returns in its ``self.task == task`` branch."""
        source = self.source(path)
        function = source.method(cls, name)
        branch = task_branch(source, function, task)
        part = single_text_part(source, returned_value(source, branch, function),
                                f"{cls}.{name} for {task}")
        return source.reader({**local_names(function.body), **local_names(branch)}).text(part)

    def frame_lead(self, path: str, cls: str, methods: Sequence[str]) -> str:
        """The text an environment's observations carry right before their image (``o.add_text(...)``
        followed by ``o.add_image(...)``), the same in each of ``methods``; "" when none has one."""
        source = self.source(path)
        found: dict[str, str] = {}
        for name in methods:
            function = source.method(cls, name)
            reader = source.reader(local_names(function.body))
            bodies = [function.body] + [body for stmt in walk_statements(function.body)
                                        for body in statement_bodies(stmt)]
            texts = set()
            for body in bodies:
                for first, second in zip(body, body[1:]):
                    text, image = _observation_call(first, "add_text"), _observation_call(second, "add_image")
                    if text is not None and image is not None and text[0] == image[0]:
                        texts.add(reader.text(text[1]))
            if len(texts) > 1:
                raise source.error(function, f"{cls}.{name} puts different texts before its frames")
            found[name] = texts.pop() if texts else ""
        if len(set(found.values())) > 1:
            raise source.error(source.class_def(cls), f"{cls} puts different texts before its frames in "
                                                      + " and ".join(found))
        return next(iter(found.values()), "")

    # the flows

    def flow_call(self, path: str, cls: str, generator: str) -> tuple[SourceFile, ast.FunctionDef, ast.Call]:
        """A flow file's ``cls.run`` and its one call of ``generator``, once the client is checked."""
        self.check_client()
        source = self.source(path)
        run = source.method(cls, "run")
        return source, run, single_call(source, run, generator)

    def global_prompt_set(self, system: str, task: str, *, observation_lead: str = "") -> PromptSet:
        """The Global flow's prompt set for ``task``: the rules ``system``, the flow's format for the task
        and its text for a left-out image; the Online flow's regenerate text stands in for the one the
        Global flow lacks (sent only by the labelled parse-retry option)."""
        return build_prompt_set(
            system=system,
            format_instruction=self.task_text(GLOBAL_FLOW, "GlobalPlan", "special_prompt_for_task", task),
            regenerate=self.online_flow.regenerate, unavailable_image=self.global_flow.unavailable_image,
            observation_lead=observation_lead)

    @cached_property
    def global_flow(self) -> GlobalFlowTexts:
        """Checks Flow/GlobalPlanning.py's request and reads its own text."""
        return read_global_flow(*self.flow_call(GLOBAL_FLOW, "GlobalPlan", "self.generator"))

    @cached_property
    def online_flow(self) -> OnlineFlowTexts:
        """Checks Flow/Online_HL_FBandSB.py's requests and reads its own texts."""
        return read_online_flow(*self.flow_call(ONLINE_FLOW, "OnlinePlan", "self.generator"))

    def check_client(self) -> None:
        """Checks that API/HF.py merges consecutive same-role messages before sending."""
        check_client_merges(self.source(CLIENT))


def _observation_call(stmt: ast.stmt, method: str) -> tuple[str, ast.expr] | None:
    """(receiver, argument) of a statement ``receiver.method(argument)``."""
    if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == method
            and len(stmt.value.args) == 1):
        return ast.unparse(stmt.value.func.value), stmt.value.args[0]
    return None


# --- prompt sets ------------------------------------------------------------------------------


def prompt_version(texts: Mapping[str, str], extra: Mapping[str, str]) -> str:
    """``official-`` and 12 hex digits of the sha256 over the texts, as canonical JSON."""
    canonical = json.dumps({"texts": dict(texts), "extra": dict(extra)}, sort_keys=True, ensure_ascii=False,
                           separators=(",", ":"))
    return "official-" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:12]


def build_prompt_set(*, system: str, format_instruction: str = "", first_turn: str = "", next_turn: str = "",
                     regenerate: str = "", unavailable_image: str = "", observation_lead: str = "",
                     extra: Mapping[str, str] | None = None) -> PromptSet:
    """An official prompt set of these texts, versioned by them."""
    texts = {
        "system": system, "format_instruction": format_instruction, "first_turn": first_turn,
        "next_turn": next_turn, "regenerate": regenerate, "unavailable_image": unavailable_image,
        "observation_lead": observation_lead,
    }
    extras = dict(extra or {})
    return PromptSet(version=prompt_version(texts, extras), source=PROMPTS_OFFICIAL, extra=extras, **texts)
