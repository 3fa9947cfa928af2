from django.db import migrations, models


class Migration(migrations.Migration):
    """Team now lives in accounts (same table): point the foreign keys there and forget the old model."""

    dependencies = [
        ("accounts", "0002_team"),
        ("submissions", "0008_upload_record_fields"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="modelentry", name="team",
                    field=models.ForeignKey(on_delete=models.deletion.CASCADE, related_name="models",
                                            to="accounts.team"),
                ),
                migrations.AlterField(
                    model_name="submission", name="team",
                    field=models.ForeignKey(on_delete=models.deletion.CASCADE, related_name="submissions",
                                            to="accounts.team"),
                ),
                migrations.DeleteModel(name="Team"),
            ],
            database_operations=[],
        ),
    ]
