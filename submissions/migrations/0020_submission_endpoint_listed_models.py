from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("submissions", "0019_upload_file_checks"),
    ]

    operations = [
        migrations.AddField(
            model_name="submission",
            name="endpoint_listed_models",
            field=models.JSONField(blank=True, default=list),
        ),
    ]
