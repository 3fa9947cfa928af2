"""Dated, immutable snapshots of the public boards (leaderboard.snapshots)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('leaderboard', '0011_boards_after_webui_viewport'),
    ]

    operations = [
        migrations.CreateModel(
            name='BoardSnapshot',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('env', models.CharField(max_length=32)),
                ('flow', models.CharField(max_length=16)),
                ('subset', models.CharField(choices=[('mini', 'mini'), ('full', 'full')], max_length=8)),
                ('suite', models.SlugField(max_length=32)),
                ('version', models.CharField(max_length=32)),
                ('content_hash', models.CharField(max_length=64)),
                ('created_at', models.DateTimeField()),
                ('prompt_version', models.CharField(blank=True, max_length=64)),
                ('scenarios', models.PositiveIntegerField(default=0)),
                ('entries', models.PositiveIntegerField(default=0)),
                ('attempts', models.PositiveIntegerField(default=0)),
                ('files', models.JSONField(default=list)),
            ],
            options={
                'ordering': ['env', 'flow', 'subset', 'suite', '-created_at'],
                'indexes': [models.Index(fields=['env', 'flow', 'subset', 'suite', '-created_at'], name='board_snapshot_latest')],
                'constraints': [models.UniqueConstraint(fields=('env', 'flow', 'subset', 'suite', 'version'), name='board_snapshot_version_unique')],
            },
        ),
    ]
