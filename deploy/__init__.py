"""Running the platform's stack, on the standard library alone.

``python -m deploy.secrets`` makes a deployment's secrets; ``python -m deploy.backup`` takes, lists,
prunes, schedules and restores backups of the database, the data volume and those secrets;
``python -m deploy.check`` (``scripts/compose-check``) runs the compose stack and checks it, through
``deploy/stack.py``, the driver the chaos bench shares. None needs Django or the site's settings: a
restore runs into an empty stack before any secret exists, and the check runs on the host.
"""
