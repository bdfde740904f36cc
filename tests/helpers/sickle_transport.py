"""Run the real harvester, sickle, against the app in-process: a requests adapter over the Flask test client."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict
from sickle import Sickle


class FlaskAdapter(BaseAdapter):
    """Hands each prepared request to the test client and wraps its answer as a requests.Response."""

    def __init__(self, client: Any) -> None:
        super().__init__()
        self.client = client
        self.requests: list[str] = []

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # noqa: ARG002
        parts = urlsplit(request.url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        self.requests.append(path)
        # No content coding in process: the wire's decompression (urllib3's) is not on this path.
        headers = {k: v for k, v in request.headers.items() if k.lower() != "accept-encoding"}
        answer = self.client.open(path, method=request.method, data=request.body, headers=headers)
        response = requests.Response()
        response.status_code = answer.status_code
        response.headers = CaseInsensitiveDict(answer.headers)
        response._content = answer.data
        response.url = request.url
        response.request = request
        response.encoding = "utf-8"
        return response

    def close(self) -> None:
        pass


class InProcessSickle(Sickle):
    """Sickle issuing its requests through a session (module-level requests.get cannot be given an adapter)."""

    def __init__(self, client: Any, http_method: str = "GET", **kwargs: Any) -> None:
        super().__init__("https://localhost/oai2d", http_method=http_method, **kwargs)
        self.adapter = FlaskAdapter(client)
        self.session = requests.Session()
        self.session.mount("https://localhost/", self.adapter)

    def _request(self, kwargs: dict[str, str]) -> requests.Response:
        if self.http_method == "GET":
            return self.session.get(self.endpoint, params=kwargs, **self.request_args)
        return self.session.post(self.endpoint, data=kwargs, **self.request_args)
