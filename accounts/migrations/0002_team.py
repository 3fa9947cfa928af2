from django.db import migrations, models


def content_type_to_accounts(apps, schema_editor):
    # Permissions and admin history hang on the content type: keep them with the moved model.
    content_type = apps.get_model("contenttypes", "ContentType")
    if not content_type.objects.filter(app_label="accounts", model="team").exists():
        content_type.objects.filter(app_label="submissions", model="team").update(app_label="accounts")


def content_type_to_submissions(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    if not content_type.objects.filter(app_label="submissions", model="team").exists():
        content_type.objects.filter(app_label="accounts", model="team").update(app_label="submissions")


class Migration(migrations.Migration):
    """Team moves here from submissions. Its table keeps its name, so only Django's idea of where
    the model lives changes; the rows, keys and foreign keys stay as they are."""

    dependencies = [
        ("accounts", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("submissions", "0008_upload_record_fields"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Team",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False,
                                                   verbose_name="ID")),
                        ("name", models.CharField(max_length=120, unique=True)),
                        ("slug", models.SlugField(max_length=120, unique=True)),
                        ("quota_per_day", models.PositiveIntegerField(blank=True, null=True)),
                        ("quota_total", models.PositiveIntegerField(blank=True, null=True)),
                        ("quota_concurrent", models.PositiveIntegerField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                    ],
                    options={"db_table": "submissions_team", "ordering": ["name"]},
                ),
                migrations.AlterField(
                    model_name="membership", name="team",
                    field=models.ForeignKey(on_delete=models.deletion.CASCADE, related_name="memberships",
                                            to="accounts.team"),
                ),
                migrations.AlterField(
                    model_name="apitoken", name="team",
                    field=models.ForeignKey(on_delete=models.deletion.CASCADE, related_name="api_tokens",
                                            to="accounts.team"),
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_type_to_accounts, content_type_to_submissions),
    ]
