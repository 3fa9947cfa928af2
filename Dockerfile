# The platform image: the same install script the tests use (scripts/setup), so what CI tests is
# what runs. Run the web process, or a worker with: celery -A config worker
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 MAGEBENCH_ENV=production MAGEBENCH_DATA_DIR=/data
WORKDIR /app
COPY requirements/ requirements/
COPY scripts/setup scripts/setup
COPY client/ client/
RUN scripts/setup && rm -rf /var/lib/apt/lists/*
COPY . .
ENV PATH=/app/.venv/bin:$PATH
RUN DJANGO_SECRET_KEY=build-only FIELD_ENCRYPTION_KEY=YnVpbGQtb25seS1idWlsZC1vbmx5LWJ1aWxkLW9ubHk= \
    DJANGO_ALLOWED_HOSTS=localhost python manage.py collectstatic --noinput
EXPOSE 8000
# gunicorn caps the request line and the header fields, but has no cap on the body: the reverse
# proxy in front caps it (nginx: client_max_body_size 51m, i.e. MAGEBENCH_UPLOAD_MAX_BYTES plus the
# form's framing), and the app refuses a larger Content-Length before reading a byte of it.
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", \
     "--limit-request-line", "4094", "--limit-request-fields", "50", "--limit-request-field_size", "8190"]
