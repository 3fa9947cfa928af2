from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('catalogue', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='reportedresult',
            name='repeats',
            field=models.PositiveSmallIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='reportedresult',
            name='uncertainty',
            field=models.FloatField(blank=True, null=True),
        ),
    ]
