from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

app = Celery("magebench")
app.config_from_object("django.conf:settings", namespace="CELERY")
# The apps' tasks, and the workers' own start and stop hooks (submissions' app config connects them).
app.autodiscover_tasks()

