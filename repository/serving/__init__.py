"""How the service is served: the gunicorn worker (an asyncio front before the WSGI threads), its settings and the
log redaction. `scripts/serve.py` and `docker-compose.yml` use them; see docs/operators/security.md."""
