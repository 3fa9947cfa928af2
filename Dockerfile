# The platform image: the same install script the tests use (scripts/setup), so what CI tests is
# what runs. Run the web process, or a worker with: celery -A config worker
#
# Built with BuildKit (DOCKER_BUILDKIT=1). BASE is the official Python image; where no registry is
# reachable, docker/build-base makes a Debian bookworm one (--build-arg BASE=magebench-base:bookworm).
# Behind a TLS-inspecting proxy, pass its CA bundle as a build secret; it is read by pip during the
# install and kept in no layer:  --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt
ARG BASE=python:3.11-slim-bookworm

# The environments' install declarations (evaluators/<env>/install/, read by evaluators/install.py)
# and nothing else of their folders: a change to an environment's code makes the same files here,
# so the install below stays cached; a change to a declaration installs again.
FROM ${BASE} AS install-declarations
COPY evaluators/ /src/evaluators/
RUN mkdir -p /out/evaluators && cd /src \
    && cp evaluators/__init__.py evaluators/install.py /out/evaluators/ \
    && find evaluators -mindepth 3 -maxdepth 3 -path 'evaluators/*/install/*' -type f -exec cp --parents {} /out/ \;

FROM ${BASE}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 MAGEBENCH_ENV=production MAGEBENCH_DATA_DIR=/data
WORKDIR /app
COPY requirements/ requirements/
COPY --from=install-declarations /out/ ./
COPY scripts/setup scripts/setup
# scripts/setup installs the client editable: its metadata and package folder are enough here, and a
# change to the client's code (COPY . . below brings it) does not run the install again.
COPY client/pyproject.toml client/pyproject.toml
COPY client/magebench_client/__init__.py client/magebench_client/__init__.py
# pip's cache is a BuildKit cache mount: a wheel built from source (minutes, for an engine) outlives a
# change to the requirements, and is in no layer. The build runs without the host's pip configuration.
RUN --mount=type=secret,id=ca,required=false \
    --mount=type=cache,target=/root/.cache/pip \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca REQUESTS_CA_BUNDLE=/run/secrets/ca; fi; \
    PIP_DISABLE_PIP_VERSION_CHECK=1 scripts/setup && rm -rf /var/lib/apt/lists/*
COPY . .
ENV PATH=/app/.venv/bin:$PATH
# Production settings refuse to load without their secrets and the proxy count: build-only values.
# The client's wheel the site serves is built here, with its sha256, into /app/build/client-wheel: in
# the image, outside the data volume; the site serves it only while its bytes match that digest.
RUN export DJANGO_SECRET_KEY=build-only FIELD_ENCRYPTION_KEY=YnVpbGQtb25seS1idWlsZC1vbmx5LWJ1aWxkLW9ubHk= \
    DJANGO_ALLOWED_HOSTS=localhost MAGEBENCH_NUM_PROXIES=1 \
    && python manage.py collectstatic --noinput --verbosity 0 && python manage.py build_client_wheel
EXPOSE 8000
# gunicorn caps the request line and the header fields, but has no cap on the body: the reverse
# proxy in front caps it (the stack's Caddy: MAGEBENCH_PROXY_BODY_MAX, MAGEBENCH_UPLOAD_MAX_BYTES plus
# the form's framing), and the app refuses a larger Content-Length before reading a byte of it.
# config/gunicorn.py empties the metrics' multiprocess folder at start and drops an exited worker's.
CMD ["gunicorn", "-c", "config/gunicorn.py", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", \
     "--limit-request-line", "4094", "--limit-request-fields", "50", "--limit-request-field_size", "8190"]
