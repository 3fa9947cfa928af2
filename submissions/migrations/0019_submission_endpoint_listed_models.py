from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("submissions", "0018_webui_viewport_recorded"),
    ]

    operations = [
        migrations.AddField(
            model_name="submission",
            name="endpoint_listed_models",
            field=models.JSONField(blank=True, default=list),
        ),
    ]
