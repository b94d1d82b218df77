from django.db import migrations, models


def mark_unfinalized_ends(apps, schema_editor):
    """Applications that ended but were never finalized (no totals) are owed a finalize."""
    Application = apps.get_model("catalog", "Application")
    Application.objects.filter(ended_at__isnull=False, totals={}).update(finalize_pending=True)


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0002_application_team"),
    ]

    operations = [
        migrations.AddField(
            model_name="application",
            name="finalize_pending",
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(mark_unfinalized_ends, migrations.RunPython.noop),
    ]
