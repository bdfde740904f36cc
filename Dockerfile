FROM python:3.11-slim
WORKDIR /srv/repository
RUN apt-get update && apt-get install -y --no-install-recommends curl && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml README.md app.py gunicorn.conf.py ./
COPY repository ./repository
COPY serializers ./serializers
COPY index_templates ./index_templates
COPY scripts ./scripts
RUN pip install --no-cache-dir -e .
EXPOSE 5000
CMD ["python", "scripts/serve.py", "--bind", "0.0.0.0:5000"]
