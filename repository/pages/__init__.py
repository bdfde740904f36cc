"""The web pages people use, server-rendered: one `pages` blueprint (repository.pages.base) holding each area's.

- accounts: sign-up, e-mail confirmation, sign-in (password or OpenID Connect), sign-out, password reset, settings;
- oidc: sign-in with an OpenID Connect provider (ORCID, an institution's), when one is configured;
- applications: the user's personal access tokens;
- access: access requests for restricted records (asking, deciding, the owner's list);
- my_uploads: the signed-in user's depositions (`/deposit`); deposit_files: the deposit form's file area;
- deposit: the deposit form (`/deposit/new`, `/deposit/<id>`, a deposition's `links.html`) and its actions;
  deposit_review: the review step before publishing (`/deposit/<id>/publish`);
- corrections: a published version's deletion (or deletion request) and files unlock, from the deposit page;
- records: a record's page (`/records/<id>`, its `links.html`) and its files' previews;
- record_previews: a file's preview in a frame of the record's page (tables, PDF, text, Markdown, JSON, archives);
- record_exports: a record's export in one format shown as text, with its download link;
- discover: the front page (`/`) and record search (`/search`) with facets;
- communities: the communities list, a community's page (its `links.html`), create/edit, curation;
- sitemap: `/sitemap.xml` (an index of sitemap files) and `/robots.txt`, for crawlers;
- reference_urls: the reference service's page addresses people paste, redirected to this service's;
- admin: the administration area (`/admin/`): users, roles, blocks, takedowns, deletion requests, the audit log;
  admin_moderation: the moderation queue, the banned link domains, hiding a record while it is reviewed;
  admin_jobs: its jobs page (outbox, mail outbox, checks, sizes); admin_site: branding, content pages, banners;
- site: the content pages (`/pages/<slug>`), the primary colour's stylesheet, the logo and favicon, and what every
  page's layout reads of them;
- errors: the site's error pages for browsers wherever an error comes from (installed on the app).
"""

from repository.pages import (
    access,
    accounts,
    admin,
    admin_jobs,
    admin_moderation,
    admin_site,
    applications,
    base,
    communities,
    corrections,
    deposit,
    deposit_files,
    deposit_review,
    discover,
    my_uploads,
    oidc,
    record_exports,
    record_previews,
    records,
    reference_urls,
    site,
    sitemap,
)

for area in (accounts.bp, oidc.bp, applications.bp, access.bp, my_uploads.bp, deposit_files.bp, records.bp,
             deposit.bp, deposit_review.bp, corrections.bp, sitemap.bp, discover.bp, communities.bp,
             reference_urls.bp, record_exports.bp, record_previews.bp, admin.bp,
             admin_moderation.bp, admin_jobs.bp, admin_site.bp, site.bp):
    base.bp.register_blueprint(area)

bp = base.bp

__all__ = ["bp"]
