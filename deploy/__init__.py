"""Operations tools that run beside the site, on the standard library alone.

``python -m deploy.backup`` takes, lists, prunes, schedules and restores backups of the database, the
data volume and the generated secrets. It needs neither Django nor the site's settings: a restore
runs into an empty stack, before any secret exists.
"""
