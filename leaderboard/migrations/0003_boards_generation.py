from django.db import migrations, models


def create_row(apps, schema_editor):
    apps.get_model("leaderboard", "BoardsGeneration").objects.get_or_create(id=1)


class Migration(migrations.Migration):

    dependencies = [
        ("leaderboard", "0002_reported_results"),
    ]

    operations = [
        migrations.CreateModel(
            name="BoardsGeneration",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("value", models.BigIntegerField(default=0)),
            ],
            options={"verbose_name": "boards generation"},
        ),
        migrations.RunPython(create_row, migrations.RunPython.noop),
    ]
