"""The WebUI submissions that ran at the paper-era 1920×1080 viewport became a labelled variant
(submissions 0016): the rankings, aggregates and pages stored for the earlier generation ranked them,
so every board's generation moves on, in the database and in the cache."""
from django.db import migrations
from django.db.models import F

#: The scope of every board (``leaderboard.cache.EVERYTHING``).
EVERYTHING = ""


def move_every_board_on(apps, schema_editor):
    BoardsGeneration = apps.get_model("leaderboard", "BoardsGeneration")
    if not BoardsGeneration.objects.filter(scope=EVERYTHING).update(value=F("value") + 1):
        BoardsGeneration.objects.get_or_create(scope=EVERYTHING, defaults={"value": 1})
    # A shared cache (Redis) keys its pages by its own counter; it is reached as the site reaches it.
    from leaderboard.cache import bump_cache

    bump_cache((EVERYTHING,))


class Migration(migrations.Migration):

    dependencies = [
        ("leaderboard", "0010_stored_rank_intervals"),
        ("submissions", "0018_webui_viewport_recorded"),
    ]

    operations = [
        migrations.RunPython(move_every_board_on, migrations.RunPython.noop),
    ]
