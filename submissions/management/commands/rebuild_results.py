from __future__ import annotations

from django.core.management.base import BaseCommand

from submissions.models import Submission
from submissions.services import submission_result_rebuild


class Command(BaseCommand):
    help = ("Recompute the stored board numbers of finished submissions from their attempts (after editing "
            "attempts by hand, or to fill results for submissions that finished before results were stored).")

    def add_arguments(self, parser) -> None:
        parser.add_argument("submission_ids", nargs="*", type=int,
                            help="only these submissions (default: all finished)")

    def handle(self, *args, submission_ids: list[int], **options) -> None:
        # The statuses whose submissions have board numbers (a cancelled one has none).
        queryset = Submission.objects.filter(status__in=[Submission.Status.COMPLETED,
                                                         Submission.Status.INCOMPLETE])
        if submission_ids:
            queryset = queryset.filter(id__in=submission_ids)
        count = 0
        for submission_id in queryset.values_list("id", flat=True).iterator():
            submission_result_rebuild(submission_id=submission_id)
            count += 1
        self.stdout.write(f"{count} submission result(s) rebuilt")
