"""WebUI's default viewport became the official 1920×937; submissions stored before ran at 1920×1080.

Their stored settings left the viewport out (it was the default then) or carried the old setting
webui_viewport_937. Each now records webui_viewport_1080, which every WebUI submission records from
here on, so a row keeps the viewport it ran at: never re-labelled by the new default. The names are
written out here, not imported, so that this migration keeps its meaning if the options change.
"""
from django.db import migrations

OLD_SETTING = "webui_viewport_937"
NEW_SETTING = "webui_viewport_1080"
_TRUE = {"1", "true", "yes", "on"}


def _was_set(value: object) -> bool:
    # Stored values are checked booleans; a spelt-out one is read as the settings read it.
    return value if isinstance(value, bool) else str(value).strip().lower() in _TRUE


def record_the_viewport(apps, schema_editor):
    Submission = apps.get_model("submissions", "Submission")
    for submission in Submission.objects.filter(environment_id="webui").only("id", "settings").iterator():
        settings = dict(submission.settings or {})
        if NEW_SETTING in settings:
            continue
        ran_at_937 = _was_set(settings.pop(OLD_SETTING, False))
        settings[NEW_SETTING] = not ran_at_937
        Submission.objects.filter(id=submission.id).update(settings=settings)


def restore_the_old_setting(apps, schema_editor):
    Submission = apps.get_model("submissions", "Submission")
    for submission in Submission.objects.filter(environment_id="webui").only("id", "settings").iterator():
        settings = dict(submission.settings or {})
        if NEW_SETTING not in settings:
            continue
        # 1080 was the old default, left out of the stored form unless a submitter set it.
        if not _was_set(settings.pop(NEW_SETTING)):
            settings[OLD_SETTING] = True
        Submission.objects.filter(id=submission.id).update(settings=settings)


class Migration(migrations.Migration):

    dependencies = [
        ("submissions", "0017_endpoint_check"),
    ]

    operations = [
        migrations.RunPython(record_the_viewport, restore_the_old_setting),
    ]
