import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('leaderboard', '0008_entry_analysis_panels'),
    ]

    # The tables exist (created by leaderboard's migrations under these names): only Django's record of
    # which app owns the models changes.
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Environment',
                    fields=[
                        ('slug', models.SlugField(max_length=32, primary_key=True, serialize=False)),
                        ('title', models.CharField(max_length=64)),
                        ('score_label', models.CharField(max_length=64)),
                        ('position', models.PositiveSmallIntegerField(default=0)),
                    ],
                    options={
                        'db_table': 'leaderboard_environment',
                        'ordering': ['position', 'slug'],
                    },
                ),
                migrations.CreateModel(
                    name='ReportedResult',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('flow', models.CharField(max_length=16)),
                        ('subset', models.CharField(choices=[('mini', 'mini'), ('full', 'full')], max_length=8)),
                        ('model_name', models.CharField(max_length=120)),
                        ('organisation', models.CharField(blank=True, max_length=120)),
                        ('parameter_count', models.BigIntegerField(blank=True, null=True)),
                        ('open_weights', models.BooleanField(default=False)),
                        ('score', models.FloatField()),
                        ('ia_pct', models.FloatField(blank=True, null=True)),
                        ('ra_pct', models.FloatField(blank=True, null=True)),
                        ('source', models.URLField(help_text='Where the number is published', max_length=500)),
                        ('note', models.CharField(blank=True, max_length=300)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('environment', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='reported_results', to='catalogue.environment')),
                    ],
                    options={
                        'db_table': 'leaderboard_reportedresult',
                        'ordering': ['environment', 'flow', 'subset', '-score'],
                    },
                ),
                migrations.CreateModel(
                    name='Scenario',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('suite', models.SlugField(max_length=32)),
                        ('key', models.CharField(max_length=200)),
                        ('in_mini', models.BooleanField(db_index=True, default=False)),
                        ('in_full', models.BooleanField(db_index=True, default=True)),
                        ('tags', models.JSONField(default=dict)),
                        ('data', models.JSONField(default=dict)),
                        ('resource_path', models.CharField(blank=True, max_length=500)),
                        ('content_hash', models.CharField(max_length=64)),
                        ('imported_at', models.DateTimeField(auto_now=True)),
                        ('environment', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='scenarios', to='catalogue.environment')),
                    ],
                    options={
                        'db_table': 'leaderboard_scenario',
                        'ordering': ['environment', 'suite', 'key'],
                        'constraints': [models.UniqueConstraint(fields=('environment', 'suite', 'key'), name='scenario_unique_key')],
                    },
                ),
                migrations.CreateModel(
                    name='SuitePromptSet',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('suite', models.SlugField(max_length=32)),
                        ('flow', models.CharField(max_length=16)),
                        ('version', models.CharField(max_length=64)),
                        ('source', models.CharField(max_length=16)),
                        ('texts', models.JSONField(default=dict)),
                        ('source_files', models.JSONField(default=dict)),
                        ('checkout_digest', models.CharField(max_length=64)),
                        ('imported_at', models.DateTimeField(auto_now_add=True)),
                        ('environment', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='prompt_sets', to='catalogue.environment')),
                    ],
                    options={
                        'db_table': 'leaderboard_suitepromptset',
                        'ordering': ['environment', 'suite', 'flow', 'imported_at', 'id'],
                        'constraints': [models.UniqueConstraint(fields=('environment', 'suite', 'flow', 'version'), name='prompt_set_unique_version')],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
