from __future__ import annotations

import os
import time

from django.core.management.base import BaseCommand, CommandError

from evaluators.base import SUBSETS, environment_flows
from submissions.models import Submission
from submissions.progress_selectors import submission_progress
from submissions.services import ModelSpec, SubmissionError, submission_create_endpoint


class Command(BaseCommand):
    help = "Register a model endpoint submission and queue it (optionally wait and print progress)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--team", required=True)
        parser.add_argument("--model", required=True, help="model name shown on the board")
        parser.add_argument("--env", required=True)
        parser.add_argument("--flow", required=True, choices=environment_flows())
        parser.add_argument("--subset", default="mini", choices=SUBSETS)
        parser.add_argument("--suite")
        parser.add_argument("--url", required=True, help="…/v1 or …/v1/chat/completions")
        parser.add_argument("--endpoint-model", default="",
                            help="model id sent to the endpoint (default: the first one it lists at /models)")
        parser.add_argument("--concurrency", type=int, metavar="N",
                            help="at most N attempts call the endpoint at once (default: the platform's limit)")
        parser.add_argument("--api-key-env", help="name of an environment variable holding the API key")
        # Metadata flags left out keep what the model has (the site's form or an earlier call set it).
        parser.add_argument("--organisation")
        parser.add_argument("--parameters", type=int)
        parser.add_argument("--open-weights", action="store_true", default=None)
        parser.add_argument("--link")
        parser.add_argument("--licence")
        parser.add_argument("--baseline", action="store_true", default=None, help="mark as a platform baseline row")
        parser.add_argument("--repeats", type=int)
        parser.add_argument("--temperature", type=float)
        parser.add_argument("--max-tokens", type=int)
        parser.add_argument("--setting", action="append", default=[], metavar="NAME=VALUE",
                            help="any other submission setting, e.g. observation_images=false for a model that "
                                 "reads no images, or max_loop=100")
        parser.add_argument("--wait", action="store_true", help="follow progress until the submission ends")
        parser.add_argument("--allow-private-endpoint", action="store_true",
                            help="the endpoint is on a network you trust: let it be on a private or loopback "
                                 "address that the address policy refuses for teams (never a metadata service)")

    def handle(self, *args, **o) -> None:
        api_key = ""
        if o["api_key_env"]:
            # Keys never travel on the command line, where other users can read them in the process list.
            api_key = os.environ.get(o["api_key_env"], "")
            if not api_key:
                raise CommandError(f"environment variable {o['api_key_env']} is empty")
        settings: dict[str, object] = {}
        for item in o["setting"]:
            name, equals, value = item.partition("=")
            if not equals or not name.strip():
                raise CommandError(f"--setting takes NAME=VALUE, not {item!r}")
            settings[name.strip()] = value.strip()
        settings.update({k: v for k, v in {"repeats": o["repeats"], "temperature": o["temperature"],
                                           "max_tokens": o["max_tokens"]}.items() if v is not None})
        metadata = {field: o[option] for field, option in (
            ("organisation", "organisation"), ("parameter_count", "parameters"), ("open_weights", "open_weights"),
            ("link", "link"), ("licence", "licence")) if o[option] is not None}
        try:
            # The team and the model are registered with the submission, or not at all.
            submission = submission_create_endpoint(
                model=ModelSpec(team=o["team"], name=o["model"], metadata=metadata, is_baseline=o["baseline"]),
                env=o["env"], flow=o["flow"], subset=o["subset"], suite=o["suite"], endpoint_url=o["url"],
                endpoint_model=o["endpoint_model"], api_key=api_key, settings=settings,
                is_baseline=bool(o["baseline"]), endpoint_trusted=o["allow_private_endpoint"],
                endpoint_concurrency=o["concurrency"])
        except SubmissionError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"submission {submission.id}: {submission.attempts.count()} attempts queued")
        if o["wait"]:
            self._follow(submission)

    def _follow(self, submission: Submission) -> None:
        while True:
            submission.refresh_from_db()
            p = submission_progress(submission)
            self.stdout.write(f"\r{submission.status:<10} {p.done}/{p.total} done, {p.retrying} retrying, "
                              f"{p.infra_failed} failed", ending="")
            self.stdout.flush()
            if not submission.is_active:
                self.stdout.write("")
                if submission.status == Submission.Status.PAUSED:
                    # Nothing more happens until someone resumes it: a script waiting on it must not wait on.
                    raise CommandError(f"submission {submission.id} paused: {submission.status_reason}")
                if submission.status_reason:
                    self.stdout.write(submission.status_reason)
                return
            time.sleep(1.0)
