# PostgreSQL 15 from Debian's packages, in the place of postgres:15 where no registry is reachable
# (scripts/compose-check). It takes what docker-compose.yml gives the official image: POSTGRES_USER,
# POSTGRES_PASSWORD and POSTGRES_DB, the data in /var/lib/postgresql/data, pg_isready for the health
# check, password log-ins from other containers.
#   docker build -f docker/postgres.Dockerfile --build-arg BASE=magebench-base:bookworm -t magebench-postgres:15 docker
ARG BASE=magebench-base:bookworm
FROM ${BASE}
# No cluster at install time: the entry point makes one in the volume on the first start.
RUN mkdir -p /etc/postgresql-common \
 && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.conf \
 && apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -o postgres -g postgres -m 700 /var/lib/postgresql/data \
 && install -d -o postgres -g postgres -m 2775 /var/run/postgresql
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
COPY postgres-entrypoint /usr/local/bin/postgres-entrypoint
USER postgres
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["postgres-entrypoint"]
CMD ["postgres"]
