import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('catalogue', '0001_initial'),
        ('submissions', '0013_alter_submission_flow'),
    ]

    # The same columns and tables: the foreign keys now name the catalogue's models.
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='attempt',
                    name='scenario',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='attempts', to='catalogue.scenario'),
                ),
                migrations.AlterField(
                    model_name='submission',
                    name='environment',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='submissions', to='catalogue.environment'),
                ),
            ],
            database_operations=[],
        ),
    ]
