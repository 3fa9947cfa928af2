"""Running the platform's stack: its secrets, backups and the checks of docker-compose.yml.

Standard library only: these run where the app's settings cannot load yet (a fresh stack before its
secrets exist, a restore into empty volumes) or on the host that drives Docker.
"""
