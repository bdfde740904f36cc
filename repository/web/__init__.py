"""What every request shares: request helpers and the error object, rate limits, CORS, the OpenAPI description."""
