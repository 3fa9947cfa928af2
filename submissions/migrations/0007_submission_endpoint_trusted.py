from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("submissions", "0006_attempt_queued_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="submission",
            name="endpoint_trusted",
            field=models.BooleanField(default=False),
        ),
    ]
