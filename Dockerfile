# syntax=docker/dockerfile:1
# The service's image: a wheel of the project installed (not editable: no source checkout in the image), the
# PostgreSQL client for backups, run by an unprivileged user. The base image is pinned to an exact version.
ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

# --- build: the wheel, from the sources only ----------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY pyproject.toml README.md app.py ./
COPY repository ./repository
COPY serializers ./serializers
COPY index_templates ./index_templates
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

# --- run ----------------------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE}
# pg_dump/pg_restore (scripts/backup.py, restore.py) of the server's major version: compose runs postgres:16.x.
ARG PG_MAJOR=16
RUN apt-get update \
 && apt-get install -y --no-install-recommends curl ca-certificates postgresql-common \
 && /usr/share/postgresql-common/pgdg/apt.postgresql.org.sh -y \
 && apt-get install -y --no-install-recommends "postgresql-client-${PG_MAJOR}" \
 && rm -rf /var/lib/apt/lists/*
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
# The unprivileged user, and /data (files, instance) owned by it: a new named volume mounted there inherits it.
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /home/repository repository \
 && mkdir -p /data/files /data/instance \
 && chown -R repository:repository /data
WORKDIR /srv/repository
# The README's automation interface: scripts/*.py are shims that run the installed package's commands.
COPY scripts ./scripts
USER repository
EXPOSE 5000
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=10 \
  CMD curl -skf https://localhost:5000/readyz > /dev/null || exit 1
CMD ["python", "scripts/serve.py", "--bind", "0.0.0.0:5000"]
