"""``scripts/compose-check``: the production stack run for real on this machine and checked end to end
through its proxy, with an upgrade from the previous release, a second project's workers, and a
backup restored into destroyed volumes. ``python -m deploy.check``; its settings are in ``settings.py``."""
