from django.db import migrations, models

#: What an upload used to keep among its settings, now fields of its own.
UPLOAD_KEYS = ("rescoring", "upload_sha256", "missing_scenarios")


def move_out_of_settings(apps, schema_editor):
    Submission = apps.get_model("submissions", "Submission")
    for submission in Submission.objects.filter(source="upload").only("id", "settings").iterator():
        settings = dict(submission.settings or {})
        record = {key: settings.pop(key) for key in UPLOAD_KEYS if key in settings}
        if record:
            Submission.objects.filter(id=submission.id).update(
                settings=settings, rescoring=record.get("rescoring") or "",
                upload_sha256=record.get("upload_sha256") or "", missing_scenarios=record.get("missing_scenarios") or [])


def move_back_into_settings(apps, schema_editor):
    Submission = apps.get_model("submissions", "Submission")
    for submission in Submission.objects.filter(source="upload").iterator():
        settings = dict(submission.settings or {})
        settings.update(rescoring=submission.rescoring, upload_sha256=submission.upload_sha256,
                        missing_scenarios=submission.missing_scenarios)
        Submission.objects.filter(id=submission.id).update(settings=settings)


class Migration(migrations.Migration):

    dependencies = [
        ("submissions", "0007_submission_endpoint_trusted"),
    ]

    operations = [
        migrations.AddField(
            model_name="submission",
            name="missing_scenarios",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name="submission",
            name="rescoring",
            field=models.CharField(blank=True, max_length=16),
        ),
        migrations.AddField(
            model_name="submission",
            name="upload_sha256",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.RunPython(move_out_of_settings, move_back_into_settings),
    ]
