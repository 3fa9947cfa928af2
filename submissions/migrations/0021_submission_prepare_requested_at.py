# A submission is marked while a worker has its attempts to create or send (services.submission_prepare).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('submissions', '0020_submission_endpoint_listed_models'),
    ]

    operations = [
        migrations.AddField(
            model_name='submission',
            name='prepare_requested_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
