"""A stand-in OpenID Connect provider for the tests: a real, minimal one served over HTTP on 127.0.0.1 in a thread.

It publishes a discovery document and a JWKS (an RSA key made once per test process), and answers the
authorization code flow: /authorize redirects straight back with a code for the person the test chose (`person`:
sub, email, email_verified...; no login form), /token checks the client's id and secret, the code, the redirect URI and the PKCE verifier (S256) and returns
an RS256-signed ID token carrying the nonce, /userinfo answers for the access token. Plain HTTP on loopback: the
service's OpenID client takes the issuer's URLs as they are.

`misbehave` makes it answer wrongly, for the tests of the bad paths: "access_denied" (the person declined),
"wrong_nonce", "wrong_audience", "wrong_issuer", "bad_signature" (signed with another key), "expired"."""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import secrets
import threading
import time
from typing import Any
from urllib.parse import urlencode

from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from helpers.http import free_port

CLIENT_ID = "repository-test-client"
CLIENT_SECRET = "stand-in-secret"


@functools.cache
def _key(name: str) -> RSAKey:
    """An RSA signing key per name, made once per process (making one takes tens of milliseconds)."""
    return RSAKey.generate_key(2048, parameters={"kid": name, "use": "sig", "alg": "RS256"})


def _json(body: Any, status: int = 200) -> Response:
    return Response(json.dumps(body), status=status, mimetype="application/json",
                    headers={"Cache-Control": "no-store"})


class StandInProvider:
    """The provider; `person` holds the claims /authorize vouches for (sub, email, email_verified...)."""

    def __init__(self, client_id: str = CLIENT_ID, client_secret: str = CLIENT_SECRET) -> None:
        self.client_id = client_id
        self.client_secret = client_secret
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.person: dict[str, Any] = {"sub": "0000-0002-1825-0097"}
        self.auth_methods = ["client_secret_basic", "client_secret_post"]  # how /token takes the client's secret
        self.userinfo_extra: dict[str, Any] = {}  # what /userinfo says beyond the ID token's claims
        self.misbehave: str | None = None
        self.codes: dict[str, dict[str, Any]] = {}
        self.access_tokens: dict[str, dict[str, Any]] = {}
        self.token_requests = 0
        self._server = make_server("127.0.0.1", self.port, self._wsgi, threaded=True)
        # A short poll: stopping waits for the loop's next look at the shutdown flag.
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)

    def __enter__(self) -> StandInProvider:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    # The endpoints

    def _wsgi(self, environ: dict, start_response: Any) -> Any:
        request = Request(environ)
        handler = {
            "/.well-known/openid-configuration": self._discovery,
            "/jwks": self._jwks,
            "/authorize": self._authorize,
            "/token": self._token,
            "/userinfo": self._userinfo,
        }.get(request.path)
        response = handler(request) if handler else _json({"error": "not_found"}, 404)
        return response(environ, start_response)

    def _discovery(self, request: Request) -> Response:
        return _json({
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "userinfo_endpoint": f"{self.issuer}/userinfo",
            "jwks_uri": f"{self.issuer}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "scopes_supported": ["openid", "email", "profile"],
            "token_endpoint_auth_methods_supported": self.auth_methods,
            "code_challenge_methods_supported": ["S256"],
        })

    def _jwks(self, request: Request) -> Response:
        return _json(KeySet([_key("stand-in")]).as_dict(private=False))

    def _authorize(self, request: Request) -> Response:
        args = request.args
        redirect_uri = args.get("redirect_uri", "")
        if args.get("client_id") != self.client_id or not redirect_uri:
            return _json({"error": "invalid_request", "error_description": "unknown client or no redirect_uri"}, 400)
        state = args.get("state", "")
        if self.misbehave == "access_denied":
            return self._back(redirect_uri, error="access_denied", error_description="The user declined.",
                              state=state)
        if (args.get("response_type") != "code" or "openid" not in args.get("scope", "").split()
                or args.get("code_challenge_method") != "S256" or not args.get("code_challenge")):
            return self._back(redirect_uri, error="invalid_request", state=state)
        code = secrets.token_urlsafe(16)
        self.codes[code] = {"redirect_uri": redirect_uri, "nonce": args.get("nonce"),
                            "challenge": args["code_challenge"], "person": dict(self.person)}
        return self._back(redirect_uri, code=code, state=state)

    @staticmethod
    def _back(redirect_uri: str, **params: str) -> Response:
        joiner = "&" if "?" in redirect_uri else "?"
        return Response(status=302, headers={"Location": redirect_uri + joiner + urlencode(params)})

    def _token(self, request: Request) -> Response:
        self.token_requests += 1
        form = request.form
        auth = request.authorization
        method = "client_secret_basic" if auth else "client_secret_post"
        client_id, secret = (auth.username, auth.password) if auth else (form.get("client_id"),
                                                                        form.get("client_secret"))
        if method not in self.auth_methods or client_id != self.client_id or secret != self.client_secret:
            return _json({"error": "invalid_client"}, 401)
        grant = self.codes.pop(form.get("code", ""), None)  # single use
        if form.get("grant_type") != "authorization_code" or grant is None:
            return _json({"error": "invalid_grant"}, 400)
        if form.get("redirect_uri") != grant["redirect_uri"]:
            return _json({"error": "invalid_grant", "error_description": "redirect_uri differs"}, 400)
        verifier = form.get("code_verifier", "")
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if not verifier or challenge != grant["challenge"]:
            return _json({"error": "invalid_grant", "error_description": "PKCE verifier does not match"}, 400)
        access_token = secrets.token_urlsafe(16)
        self.access_tokens[access_token] = grant["person"]
        return _json({"access_token": access_token, "token_type": "Bearer", "expires_in": 3600,
                      "id_token": self._id_token(grant)})

    def _id_token(self, grant: dict[str, Any]) -> str:
        now = int(time.time())
        claims = {**grant["person"], "iss": self.issuer, "aud": self.client_id, "iat": now, "exp": now + 600,
                  "nonce": grant["nonce"]}
        key = _key("stand-in")
        if self.misbehave == "wrong_nonce":
            claims["nonce"] = "not-the-nonce-that-was-sent"
        elif self.misbehave == "wrong_audience":
            # With `azp` naming the client, which Authlib's own check of the ID token takes as enough.
            claims.update(aud="some-other-client", azp=self.client_id)
        elif self.misbehave == "wrong_issuer":
            claims["iss"] = "https://impostor.example.org"
        elif self.misbehave == "expired":
            claims.update(iat=now - 7200, exp=now - 3600)
        elif self.misbehave == "bad_signature":
            key = _key("another")
        return jwt.encode({"alg": "RS256", "kid": "stand-in"}, claims, key)

    def _userinfo(self, request: Request) -> Response:
        header = request.headers.get("Authorization", "")
        person = self.access_tokens.get(header.removeprefix("Bearer ").strip())
        if not header.startswith("Bearer ") or person is None:
            return _json({"error": "invalid_token"}, 401)
        return _json({**person, **self.userinfo_extra})
