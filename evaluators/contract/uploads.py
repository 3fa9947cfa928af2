"""How an environment's uploaded runs are read, played back and compared with their own scores."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from evaluators.declarations import FLOW_GLOBAL


class UploadDeclarations:
    #: The files a run may carry instead of replies (code the model wrote), as (upload key, file
    #: name in the official output folder); empty where runs are replies or actions only. A run
    #: folder with none of them and no reply is the model's blank reply.
    code_files: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: How an uploaded run's code is replayed as the model's reply: (upload key, code fence language)
    #: in the reply's order, each present part one fenced block of the one reply the parser reads.
    upload_code_fences: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: The platform's score in units of the official ``result`` (1: the same scale).
    result_scale: ClassVar[float] = 1.0
    #: The values an official ``result`` can take, where that is bounded.
    result_range: ClassVar[tuple[float, float] | None] = None
    #: How far a re-scored upload may sit from its self-reported score, in score units, before the
    #: two are flagged as disagreeing.
    self_report_tolerance: ClassVar[float] = 0.01
    #: Episodes are stochastic: an uploaded run is played again on the engine (a new sample, not a
    #: check of the uploaded score), and baselines run the flow's full repeats.
    stochastic: ClassVar[bool] = False
    #: How the platform re-scores this environment's uploaded runs, as a clause of the upload page's
    #: sentence ("the code that scores live runs: …"); empty leaves the environment out of it.
    upload_note: ClassVar[str] = ""

    def action_replies(self, flow: str, actions: Sequence[str]) -> list[str]:
        """The replies an uploaded list of action names is played back as: text this environment's
        parser reads exactly those actions from. The default is the official formats (Global: one
        ``### Actions`` reply; Online: one ``# action`` reply per action)."""
        if flow == FLOW_GLOBAL:
            return ["### Actions\n" + ", ".join(actions)]
        return [f"# action {action}" for action in actions]

    def upload_code_schema(self) -> dict[str, Any]:
        """The JSON Schema a JSONL upload line's ``code`` object meets for this environment (the
        published schema leaves ``code`` open; the uploads check it against this). The default asks
        for the first of :attr:`code_files` (the file the code opens with) and allows the others, each
        a string; an environment whose files need more (a description, a pattern) declares its own."""
        keys = [key for key, _ in self.code_files]
        return {"type": "object", "required": keys[:1], "additionalProperties": False,
                "properties": {key: {"type": "string", "description": f"The text of {name}."}
                               for key, name in self.code_files}}

    def code_replies(self, flow: str, code: Mapping[str, str]) -> list[str]:
        """The replies an uploaded run's code (by the keys of :attr:`code_files`) is played back as.
        The default is one reply of fenced blocks, one per part present, in the order and with the
        languages of :attr:`upload_code_fences`."""
        blocks = [f"```{fence}\n{code[key]}\n```" for key, fence in self.upload_code_fences if key in code]
        return ["\n\n".join(blocks)]
