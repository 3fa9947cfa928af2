from django.core.management.color import no_style
from django.db import migrations, models


def reset_ids(apps, schema_editor):
    # 0003 created the first row with an explicit id, which PostgreSQL's sequence never counted:
    # the scopes' rows added from now on would collide with it.
    model = apps.get_model("leaderboard", "BoardsGeneration")
    with schema_editor.connection.cursor() as cursor:
        for statement in schema_editor.connection.ops.sequence_reset_sql(no_style(), [model]):
            cursor.execute(statement)


class Migration(migrations.Migration):

    dependencies = [
        ("leaderboard", "0003_boards_generation"),
    ]

    operations = [
        migrations.AddField(
            model_name="boardsgeneration",
            name="scope",
            field=models.CharField(default="", max_length=120, unique=True),
        ),
        migrations.RunPython(reset_ids, migrations.RunPython.noop),
    ]
