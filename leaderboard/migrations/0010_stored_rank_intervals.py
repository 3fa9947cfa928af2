from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('leaderboard', '0009_catalogue_moved_out'),
    ]

    operations = [
        migrations.CreateModel(
            name='StoredRankIntervals',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('entries_digest', models.CharField(max_length=64, unique=True)),
                ('board', models.CharField(db_index=True, max_length=200)),
                ('intervals', models.JSONField(default=list)),
                ('computed_at', models.DateTimeField(auto_now=True)),
            ],
        ),
    ]
