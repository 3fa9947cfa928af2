# The stack's reverse proxy: Caddy from Debian's packages (bookworm: 2.6), with docker/proxy/Caddyfile.
# It ends TLS (certificates from Let's Encrypt/ZeroSSL for DOMAIN, from its own local CA for
# localhost), sends plain HTTP to HTTPS, sets X-Forwarded-* itself, caps request bodies and serves the
# collected static files. docker-compose.yml builds it; BASE is any Debian bookworm image.
#   docker build -f docker/proxy.Dockerfile --build-arg BASE=magebench-base:bookworm -t magebench-proxy docker
ARG BASE=debian:bookworm-slim
FROM ${BASE}
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends caddy ca-certificates >/dev/null \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -o caddy -g caddy /caddy/data /caddy/config
COPY proxy/Caddyfile /etc/caddy/Caddyfile
# Certificates, the ACME account and the local CA outlive the container: /caddy/data is a volume.
ENV XDG_DATA_HOME=/caddy/data XDG_CONFIG_HOME=/caddy/config
USER caddy
EXPOSE 80 443
CMD ["caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile"]
