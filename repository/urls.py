"""Every URL the service hands out, built in one place: the links of the JSON answers, the addresses in mails,
redirects' `Location` and the serializers' identifiers. A route that moves changes here and nowhere else.

`base` is the service's root without a trailing slash (the BASE_URL setting, or a serializer's
`RenderContext.base_url`); the web pages, and their templates (the `urls` global: `urls.record_html('', r.id)`),
pass `""` for a path within the site. The functions only join strings:
they import nothing of the service, so every layer (the serializers included) may use them
(docs/architecture/index.md#package-order).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote, urlencode

DOI_RESOLVER = "https://doi.org/"

# The collections, as the API's index lists them (paths within the site).
RECORDS = "/api/records/"
DEPOSITIONS = "/api/deposit/depositions"
FILES = "/api/files"
LICENSES = "/api/licenses/"
COMMUNITIES = "/api/communities/"
FUNDERS = "/api/funders/"
GRANTS = "/api/grants/"
OAI = "/oai2d"
EXPORTS = "/api/exports/"


def doi(value: str) -> str:
    """A DOI at the resolver."""
    return f"{DOI_RESOLVER}{value}"


# Records


def record_api(base: str, recid: int | str) -> str:
    """A record's metadata resource (the API's `links.self`)."""
    return f"{base}{RECORDS}{recid}"


def record_html(base: str, recid: int | str) -> str:
    """A record's landing page."""
    return f"{base}/records/{recid}"


def record_files_api(base: str, recid: int | str) -> str:
    return f"{record_api(base, recid)}/files"


def record_versions_api(base: str, recid: int | str) -> str:
    return f"{record_api(base, recid)}/versions"


def record_latest_api(base: str, recid: int | str) -> str:
    """Redirects to the newest version's metadata resource when followed."""
    return f"{record_api(base, recid)}/versions/latest"


def record_latest_html(base: str, recid: int | str) -> str:
    """Redirects to the newest version's landing page when followed."""
    return f"{record_html(base, recid)}/latest"


def record_archive(base: str, recid: int | str, query: str = "") -> str:
    """Every file of a record as one zip; `query` is appended as given (with its `?`)."""
    return f"{record_api(base, recid)}/files-archive{query}"


def record_thumbnail(base: str, recid: int | str, size: int | str) -> str:
    return f"{record_api(base, recid)}/thumb{size}"


def record_preview_html(base: str, recid: int | str, key: str) -> str:
    """The page previewing one file of a record (its key quoted)."""
    return f"{record_html(base, recid)}/preview/{quote(key)}"


def record_export_html(base: str, recid: int | str, name: str) -> str:
    """The page showing a record's export in format `name` as text."""
    return f"{record_html(base, recid)}/export/{quote(name)}"


def record_search_html(base: str, query: Mapping[str, str] | None = None) -> str:
    """The record search page, with `query`'s parameters (`{"keywords": "soil"}`) when given."""
    return f"{base}/search?{urlencode(query)}" if query else f"{base}/search"


def badge(base: str, doi_value: str) -> str:
    """The SVG badge of a DOI the service registered."""
    return f"{base}/badge/doi/{doi_value}.svg"


# Access requests to a record's files


def access_request_html(base: str, recid: int | str) -> str:
    """The form asking for access to a record's files."""
    return f"{record_html(base, recid)}/access/request"


def access_confirm_html(base: str, recid: int | str, token: str) -> str:
    """The link a guest follows to confirm their access request."""
    return f"{record_html(base, recid)}/access/confirm/{token}"


def account_confirm_html(base: str, token: str) -> str:
    """The link of a sign-up's confirmation mail."""
    return f"{base}/account/confirm/{quote(token)}"


def email_change_confirm_html(base: str, token: str) -> str:
    """The link of the mail that confirms a new e-mail address."""
    return f"{base}/account/confirm-email/{quote(token)}"


def password_reset_html(base: str, token: str) -> str:
    """The link of a password reset mail (or of a new administrator's first password)."""
    return f"{base}/account/reset/{quote(token)}"


def access_requests_html(base: str) -> str:
    """The signed-in user's access requests: those to decide on, granted, and asked for."""
    return f"{base}/account/requests/"


def access_request_api(base: str, recid: int | str, request_id: int | str) -> str:
    return f"{record_api(base, recid)}/access/requests/{request_id}"


# Depositions and their files


def deposits_api(base: str) -> str:
    """The depositions of the token's user (GET lists them, POST starts one)."""
    return f"{base}{DEPOSITIONS}"


def deposit_api(base: str, dep_id: int | str) -> str:
    return f"{base}{DEPOSITIONS}/{dep_id}"


def deposit_html(base: str, dep_id: int | str) -> str:
    """A deposit's edit page."""
    return f"{base}/deposit/{dep_id}"


def deposit_new_html(base: str) -> str:
    """The form starting a new upload (GET), which a POST creates."""
    return f"{base}/deposit/new"


def deposit_action_html(base: str, dep_id: int | str, action: str) -> str:
    """A form action of a deposit's page: `edit`, `newversion`, `discard` or `delete`."""
    return f"{deposit_html(base, dep_id)}/{action}"


def deposit_files_html(base: str, dep_id: int | str) -> str:
    """A deposit's file area (its HTML alone), where the page's upload form posts."""
    return f"{deposit_html(base, dep_id)}/files"


def deposit_files_order_html(base: str, dep_id: int | str) -> str:
    """Where the file area's form moves a file up or down."""
    return f"{deposit_files_html(base, dep_id)}/order"


def deposit_file_action_html(base: str, dep_id: int | str, key: str, action: str) -> str:
    """`delete`, `rename` or `replace` of one file of the file area, its key quoted as one path segment (`/` too)."""
    return f"{deposit_files_html(base, dep_id)}/{quote(key, safe='')}/{action}"


def deposit_file_api(base: str, dep_id: int | str, file_id: str) -> str:
    """A file of the old files interface of a deposition."""
    return f"{deposit_api(base, dep_id)}/files/{file_id}"


def deposit_files_api(base: str, dep_id: int | str) -> str:
    return f"{deposit_api(base, dep_id)}/files"


def deposit_action_api(base: str, dep_id: int | str, action: str) -> str:
    """`publish`, `edit`, `discard` or `newversion`."""
    return f"{deposit_api(base, dep_id)}/actions/{action}"


def bucket(base: str, bucket_id: str) -> str:
    return f"{base}{FILES}/{bucket_id}"


def bucket_object(base: str, bucket_id: str, key: str) -> str:
    """A file of a bucket, its key quoted."""
    return f"{bucket(base, bucket_id)}/{quote(key)}"


# Communities


def community_api(base: str, identifier: str) -> str:
    return f"{base}{COMMUNITIES}{identifier}"


def community_html(base: str, identifier: str) -> str:
    """A community's page (with its trailing slash, as the page is served)."""
    return f"{base}/communities/{identifier}/"


def community_id_url(base: str, identifier: str) -> str:
    """A community's address as the metadata formats name it: the page's path without its trailing slash."""
    return f"{base}/communities/{identifier}"


def community_new_html(base: str) -> str:
    """The form creating a community."""
    return f"{base}/communities/new"


def community_logo_html(base: str, identifier: str) -> str:
    """A community's logo (PNG); its owner POSTs a new one to the same address."""
    return f"{community_id_url(base, identifier)}/logo"


def community_edit_html(base: str, identifier: str) -> str:
    return f"{community_id_url(base, identifier)}/edit"


def community_curate_html(base: str, identifier: str) -> str:
    return f"{community_html(base, identifier)}curate"


def community_decision_html(base: str, identifier: str, request_id: int | str, decision: str) -> str:
    """Where a curator `accept`s or `reject`s an inclusion request."""
    return f"{community_curate_html(base, identifier)}/{request_id}/{decision}"


def community_requests_api(base: str, identifier: str) -> str:
    """The list of a community's inclusion requests."""
    return f"{community_api(base, identifier)}/requests/"


def community_request_api(base: str, identifier: str, request_id: int | str) -> str:
    return f"{community_requests_api(base, identifier)}{request_id}"


# Vocabularies


def license_api(base: str, license_id: str) -> str:
    return f"{base}{LICENSES}{quote(license_id, safe='')}"


def funder_api(base: str, funder_doi: str) -> str:
    return f"{base}{FUNDERS}{funder_doi}"


def grant_api(base: str, grant_id: str) -> str:
    """A grant by its id `<funder DOI>::<code>`, the code already quoted for a path."""
    return f"{base}{GRANTS}{grant_id}"


# GitHub releases


def release_repository_api(base: str, repo_id: int | str) -> str:
    return f"{base}/api/releases/repositories/{repo_id}"


def release_list_api(base: str, repo_id: int | str) -> str:
    """A repository's releases."""
    return f"{release_repository_api(base, repo_id)}/releases"


def release_api(base: str, repo_id: int | str, release_id: int | str) -> str:
    return f"{release_list_api(base, repo_id)}/{release_id}"


def release_hook(base: str, repo_id: int | str) -> str:
    """Where the platform posts a repository's release events."""
    return f"{base}/api/releases/hooks/{repo_id}"


# The site


def api_root(base: str) -> str:
    """The API's index of its resources."""
    return f"{base}/api/"


def openapi(base: str) -> str:
    """The API's OpenAPI document."""
    return f"{api_root(base)}openapi.json"


def home(base: str) -> str:
    return f"{base}/"


def communities_html(base: str) -> str:
    """The list of communities."""
    return f"{base}/communities/"


def deposits_html(base: str) -> str:
    """The signed-in user's uploads."""
    return f"{base}/deposit"


# Accounts


def _next(path: str, following: str) -> str:
    """`path` with `?next=` the page to go on to (`following`, quoted; its `/` kept), if any."""
    return f"{path}?next={quote(following)}" if following else path


def sign_in_html(base: str, following: str = "") -> str:
    """The sign-in form, going on to the page `following` (a path within the site) when given."""
    return _next(f"{base}/login/", following)


def sign_in_oidc_html(base: str, following: str = "") -> str:
    """Sign-in with the OpenID Connect provider, going on to `following` when given."""
    return _next(f"{base}/login/oidc/", following)


def sign_out_html(base: str) -> str:
    return f"{base}/logout/"


def sign_up_html(base: str) -> str:
    return f"{base}/signup/"


def oidc_callback(base: str) -> str:
    """Where the OpenID Connect provider sends the browser back (the redirect URI registered there)."""
    return f"{base}/login/oidc/callback"


def settings_html(base: str) -> str:
    """The signed-in user's account settings."""
    return f"{base}/account/settings/"


def applications_html(base: str) -> str:
    """The signed-in user's personal access tokens."""
    return f"{settings_html(base)}applications/"


def sitemap(base: str, part: str = "") -> str:
    """The sitemap index, or one of its files (`part`: `communities-0`, `3`...)."""
    return f"{base}/sitemap-{part}.xml" if part else f"{base}/sitemap.xml"


# Administration (docs/operators/administration.md)


def admin_html(base: str) -> str:
    """The administration area's start: finding users."""
    return f"{base}/admin/"


def admin_user_html(base: str, user_id: int | str, action: str = "") -> str:
    """A user's page in the administration area, or one of its actions (`role`, `block`, `unblock`, ...)."""
    path = f"{base}/admin/users/{user_id}"
    return f"{path}/{action}" if action else path


def admin_record_html(base: str, recid: int | str, action: str = "") -> str:
    """A record's moderation page, or one of its actions (`takedown`, `restore`, `owner`, `hide`, `unhide`)."""
    path = f"{base}/admin/records/{recid}"
    return f"{path}/{action}" if action else path


def admin_requests_html(base: str, request_id: int | str = "", decision: str = "") -> str:
    """The owners' open deletion requests, or the decision (`accept`, `decline`) on one."""
    return f"{base}/admin/requests/{request_id}/{decision}" if decision else f"{base}/admin/requests/"


def admin_audit_html(base: str) -> str:
    return f"{base}/admin/audit/"


def admin_moderation_html(base: str, recid: int | str = "", decision: str = "") -> str:
    """The moderation queue, or a decision (`approve`, `takedown`, `block`) on a record in it."""
    return f"{base}/admin/moderation/{recid}/{decision}" if decision else f"{base}/admin/moderation/"


def admin_domains_html(base: str, domain: str = "") -> str:
    """The banned link domains (a POST adds one), or the removal of one."""
    return f"{base}/admin/moderation/domains/{domain}/delete" if domain else f"{base}/admin/moderation/domains"


def admin_moderation_api(base: str) -> str:
    return f"{base}/api/admin/moderation"


def admin_domains_api(base: str, domain: str = "") -> str:
    """The banned link domains in the administration API, or one of them."""
    return f"{base}/api/admin/moderation/domains/{domain}" if domain else f"{base}/api/admin/moderation/domains"


def admin_users_api(base: str) -> str:
    return f"{base}/api/admin/users"


def admin_user_api(base: str, user_id: int | str, action: str = "") -> str:
    """A user in the administration API, or one of its actions (`role`, `block`, `unblock`)."""
    path = f"{base}/api/admin/users/{user_id}"
    return f"{path}/{action}" if action else path


def admin_record_api(base: str, recid: int | str, action: str) -> str:
    """An action on a record in the administration API (`takedown`, `restore`, `owner`, `hide`, `unhide`, `approve`,
    `block-owner`)."""
    return f"{base}/api/admin/records/{recid}/{action}"


def admin_audit_api(base: str) -> str:
    return f"{base}/api/admin/audit"


# Other services


def exports_api(base: str) -> str:
    """The list of the latest full public exports (docs/api/exports.md)."""
    return f"{base}{EXPORTS}"


def export_file(base: str, export_id: str, name: str) -> str:
    """One file of a full public export: its data files or its `manifest.json`."""
    return f"{base}{EXPORTS}{export_id}/{quote(name)}"


def oai(base: str) -> str:
    """The OAI-PMH endpoint (the `baseURL` of its answers)."""
    return f"{base}{OAI}"


def oai_request(base: str, verb: str, **arguments: str) -> str:
    """An OAI-PMH request: `oai_request(base, "ListRecords", metadataPrefix="oai_dc", set="user-bog")`."""
    return f"{oai(base)}?{urlencode({'verb': verb, **arguments})}"


def datadesc_validation_job(base: str, job_id: str) -> str:
    return f"{base}/api/datadesc/validate/{job_id}"


# Jobs, branding and content pages (docs/operators/administration.md#jobs, docs/operators/branding-and-pages.md)
def admin_jobs_html(base: str, entry_id: int | str = "", action: str = "") -> str:
    """The jobs page, or an action (`retry`, `drop`) on one of its outbox entries."""
    return f"{base}/admin/jobs/outbox/{entry_id}/{action}" if action else f"{base}/admin/jobs/"


def admin_jobs_api(base: str, entry_id: int | str = "", action: str = "") -> str:
    """The jobs overview in the administration API, or an action (`retry`, `drop`) on an outbox entry."""
    return f"{base}/api/admin/jobs/outbox/{entry_id}/{action}" if action else f"{base}/api/admin/jobs"


def admin_site_html(base: str, part: str = "") -> str:
    """The site's branding page, or one of its forms (`branding`, `logo`, `favicon`, `logo/remove`, ...)."""
    return f"{base}/admin/site/{part}" if part else f"{base}/admin/site/"


def admin_content_html(base: str, slug: str = "", action: str = "") -> str:
    """The content pages' list, one page's editor, or an action on it (`delete`)."""
    if not slug:
        return f"{base}/admin/pages/"
    return f"{base}/admin/pages/{slug}/{action}" if action else f"{base}/admin/pages/{slug}"


def admin_banners_html(base: str, banner_id: int | str = "", action: str = "") -> str:
    """The banners' page, or an action (`remove`) on one banner."""
    return f"{base}/admin/banners/{banner_id}/{action}" if action else f"{base}/admin/banners/"


def admin_site_api(base: str, part: str = "") -> str:
    """The branding in the administration API (`branding`), a content page (`pages/<slug>`) or the banners."""
    return f"{base}/api/admin/site/{part}" if part else f"{base}/api/admin/site"


def content_page_html(base: str, slug: str) -> str:
    """A content page (About, Terms of use, ...)."""
    return f"{base}/pages/{slug}"


def site_stylesheet(base: str, colour: str) -> str:
    """The stylesheet of the primary colour (the colour in the address: a change is a new address)."""
    return f"{base}/site/brand.css?c={colour.lstrip('#')}"


def site_image(base: str, name: str, digest: str) -> str:
    """The logo or the favicon, addressed by its digest (kept by browsers for a year)."""
    return f"{base}/site/{name}/{digest}"


# Suggestions for the deposit form's pickers


VOCABULARIES = "/api/vocabularies/"


def vocabulary_api(base: str, name: str) -> str:
    """The suggestions of one vocabulary (`licenses`, `languages`, `affiliations`, `creators`)."""
    return f"{base}{VOCABULARIES}{name}"
