# Redis from Debian's packages, in the place of redis:7 where no registry is reachable
# (scripts/compose-check). Like the official image it keeps its files in /data and, started
# without a configuration file, answers other containers (protected mode off).
#   docker build -f docker/redis.Dockerfile --build-arg BASE=magebench-base:bookworm -t magebench-redis:7 docker
ARG BASE=magebench-base:bookworm
FROM ${BASE}
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -o redis -g redis /data
COPY redis-entrypoint /usr/local/bin/redis-entrypoint
WORKDIR /data
USER redis
EXPOSE 6379
ENTRYPOINT ["redis-entrypoint"]
CMD ["redis-server"]
