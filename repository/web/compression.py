"""Compressed responses (flask-compress): JSON, XML and HTML of at least COMPRESS_MIN_BYTES, in zstd, brotli or
gzip as the client's Accept-Encoding allows. File downloads never: they are streamed from disk, keep their exact
bytes, Content-Length, ETag (the stored checksum) and Range answers, and are often compressed already."""

from __future__ import annotations

from flask import Flask, Response
from flask_compress import Compress

from repository.config import Settings

BASE_MIMETYPES = ("application/json", "application/xml", "text/xml", "text/html", "application/xhtml+xml")


def compressible(mimetype: str) -> bool:
    """JSON, XML and HTML, whatever their vendor type (`application/vnd.citationstyles.csl+json`...)."""
    return mimetype in BASE_MIMETYPES or mimetype.endswith(("+json", "+xml"))


def install(app: Flask, settings: Settings, mimetypes: list[str]) -> None:
    """Compress the responses of `app` whose type is among `mimetypes` (those `compressible` keeps); call before
    the other response hooks, so this one runs last, on the response as it will be sent."""
    app.config.update(
        COMPRESS_REGISTER=False,  # the hook below decides which responses the library sees
        COMPRESS_MIMETYPES=sorted({*BASE_MIMETYPES, *filter(compressible, mimetypes)}),
        COMPRESS_MIN_SIZE=settings.COMPRESS_MIN_BYTES,
        COMPRESS_ALGORITHM=["zstd", "br", "gzip"],
        COMPRESS_STREAMS=False,
    )
    compress = Compress(app)

    @app.after_request
    def compress_response(response: Response) -> Response:
        # A download (send_file, or a byte range) is streamed and answers Range: never touched, not even its Vary.
        if (response.direct_passthrough or response.is_streamed or "Accept-Ranges" in response.headers
                or response.mimetype not in compress.compress_mimetypes_set):
            return response
        return compress.after_request(response)
