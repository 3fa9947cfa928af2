from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('leaderboard', '0008_entry_analysis_panels'),
        ('submissions', '0014_catalogue_foreign_keys'),
    ]

    # The catalogue's models keep their tables under the catalogue app: nothing is dropped.
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='scenario',
                    name='environment',
                ),
                migrations.RemoveField(
                    model_name='reportedresult',
                    name='environment',
                ),
                migrations.DeleteModel(
                    name='SuitePromptSet',
                ),
                migrations.DeleteModel(
                    name='Scenario',
                ),
                migrations.DeleteModel(
                    name='Environment',
                ),
                migrations.DeleteModel(
                    name='ReportedResult',
                ),
            ],
            database_operations=[],
        ),
    ]
