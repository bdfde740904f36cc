"""The web pages people use, server-rendered: one `pages` blueprint (repository.pages.base) holding each area's.

- accounts: sign-up, e-mail confirmation, sign-in (password or OpenID Connect), sign-out, password reset, settings;
- oidc: sign-in with an OpenID Connect provider (ORCID, an institution's), when one is configured;
- applications: the user's personal access tokens;
- access: access requests for restricted records (asking, deciding, the owner's list).
"""

from repository.pages import access, accounts, applications, base, oidc

for area in (accounts.bp, oidc.bp, applications.bp, access.bp):
    base.bp.register_blueprint(area)

bp = base.bp

__all__ = ["bp"]
