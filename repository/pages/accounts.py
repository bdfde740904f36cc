"""Account pages: sign-up, address confirmation, sign-in and sign-out, password reset, and the settings page
(password and address changes). The work is done in repository.accounts.signup; these views read forms, throttle
attempts and choose the page.

No answer tells whether an address is registered: sign-up, reset and resend say "check your mail" for any address,
and a wrong password reads exactly like an unknown address. Attempts are counted (RATELIMIT_SIGNIN, in the storage
of the app's rate limiter) per client address and per e-mail address from that client, never per e-mail address
alone for sign-in and reset (see `throttle`); checks of the current password on the settings page per account."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, current_app, flash, redirect, request, url_for
from flask_wtf import FlaskForm
from limits import parse_many
from werkzeug.wrappers import Response
from wtforms import BooleanField, Form, HiddenField, PasswordField, StringField
from wtforms.validators import EqualTo, InputRequired, Length

from repository import urls
from repository.accounts import signup, users
from repository.accounts.links import LinkExpired, LinkInvalid
from repository.errors import Forbidden, ValidationError
from repository.pages.base import confirm_page, render_page, require_user
from repository.site import terms
from repository.web.ratelimit import limiter_of
from repository.web.request import services
from repository.web.session import current_user, safe_next, sign_in, sign_out

bp = Blueprint("accounts", __name__)
SETTINGS = urls.settings_html("")
FORM_BYTES = 64 * 1024  # the largest body an account form takes: 413 beyond, before anything reads it
CHECK_MAIL = ("If the address can be used, a message is on its way to it: open the link it holds. It may take a "
              "minute; look in the spam folder too.")


# --- forms ----------------------------------------------------------------------------------------------------
class _Form(FlaskForm):  # type: ignore[misc]  # Flask-WTF ships no types
    class Meta:
        csrf = False  # every page write is checked already (repository.web.request); forms carry form_csrf()


def _email_field(label: str = "E-mail address") -> StringField:
    return StringField(label, [InputRequired(), Length(max=signup.MAX_EMAIL)],
                       render_kw={"type": "email", "autocomplete": "email", "maxlength": signup.MAX_EMAIL,
                                  "spellcheck": "false", "autocapitalize": "none"})


def _password_field(label: str, autocomplete: str) -> PasswordField:
    return PasswordField(label, [InputRequired(), Length(max=signup.MAX_PASSWORD)],
                         render_kw={"autocomplete": autocomplete, "maxlength": signup.MAX_PASSWORD})


class SignUpForm(_Form):
    email = _email_field()
    password = _password_field("Password", "new-password")
    password_again = PasswordField("Password again", [EqualTo("password", "The two passwords differ.")],
                                   render_kw={"autocomplete": "new-password", "maxlength": signup.MAX_PASSWORD})
    # Shown with SIGNUP_REQUIRES_TERMS once the Terms of use are written (docs/operators/branding-and-pages.md).
    accept_terms = BooleanField("I accept the Terms of use")
    terms_version = HiddenField()


class SignInForm(_Form):
    email = _email_field()
    password = _password_field("Password", "current-password")
    next = HiddenField(validators=[Length(max=2000)])


class EmailForm(_Form):
    email = _email_field()


class NewPasswordForm(_Form):
    password = _password_field("New password", "new-password")
    password_again = PasswordField("New password again", [EqualTo("password", "The two passwords differ.")],
                                   render_kw={"autocomplete": "new-password", "maxlength": signup.MAX_PASSWORD})


class ChangePasswordForm(_Form):
    current_password = _password_field("Current password", "current-password")
    new_password = _password_field("New password", "new-password")
    new_password_again = PasswordField("New password again", [EqualTo("new_password", "The two passwords differ.")],
                                       render_kw={"autocomplete": "new-password", "maxlength": signup.MAX_PASSWORD})


class ChangeEmailForm(_Form):
    new_email = _email_field("New e-mail address")
    password = _password_field("Current password", "current-password")


def _field_errors(form: Form, exc: ValidationError, names: dict[str, str] | None = None) -> None:
    """Put the domain's field errors on the form's fields (`names` maps a domain field to a form field)."""
    for error in exc.errors:
        name = (names or {}).get(error["field"], error["field"])
        target = getattr(form, name, None)
        if target is not None:
            target.errors = [*target.errors, error["message"]]
        else:
            flash(error["message"], "error")


# --- what the views share -------------------------------------------------------------------------------------
@bp.url_value_preprocessor
def _bound_body(_endpoint: str | None, _values: dict[str, Any] | None) -> None:
    # Runs before every before_request hook (the CSRF check reads the form): a body past FORM_BYTES is a 413 page.
    request.max_content_length = FORM_BYTES


def throttle(kind: str, email: str | None = None, mailed: bool = False) -> None:
    """Count an attempt of `kind` (signin, reset, signup) from the client's address, and for `email` from that
    address; with `mailed`, for `email` from anywhere too (the request mails it: no mailbox is flooded). A 429 page
    once one has had too many. Nothing is counted per account alone for sign-in and reset: a stranger's attempts
    never lock the owner out of signing in or resetting from another address."""
    client = request.remote_addr or "-"
    keys = [f"signin/client/{client}"]  # one budget per address, whatever the form
    if email:
        address = signup.normal_email(email)[:signup.MAX_EMAIL]
        keys.append(f"{kind}/pair/{address}/{client}")
        if mailed:
            keys.append(f"mailed/{address}")
    _count(keys, "There were too many attempts from here or for this address.")


def _throttle_password_check(user: dict) -> None:
    """Count a check of the signed-in user's current password (the settings forms), per account: a stolen session
    cannot guess the password faster than sign-in allows."""
    _count([f"password/user/{user['id']}"], "There were too many attempts with this account's password.")


def _count(keys: list[str], message: str) -> None:
    limiter = limiter_of(current_app)
    limits = parse_many(services().settings.RATELIMIT_SIGNIN)
    waits = [wait for key in keys if (wait := limiter.count(key, limits)) is not None]
    if waits:
        wait = max(waits)
        page = render_page("error.html", 429, status=429, errors=[],
                           message=f"{message} Try again in {_duration(wait)}.")
        page.headers["Retry-After"] = str(wait)
        abort(page)


def _duration(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} seconds"
    if seconds < 7200:
        return f"{round(seconds / 60)} minutes"
    return f"{round(seconds / 3600)} hours"


def _link_failed(exc: LinkInvalid, again: str, again_label: str) -> Response:
    """The page for a link that cannot be used (expired, already used, forged), with the way to a new one."""
    title = "This link has expired" if isinstance(exc, LinkExpired) else "This link cannot be used"
    return render_page("accounts/link_failed.html", 400, title=title, message=str(exc), again=again,
                       again_label=again_label)


def finish_sign_in(user: dict, next_url: str | None) -> Response:
    """Sign `user` in on this browser (a new session cookie), note the sign-in, and go to `next_url` when it is a
    path of this site, else to the user's uploads. The caller has checked who the person is; a deactivated account
    is refused (403 page)."""
    if not user["active"]:
        raise Forbidden("This account has been deactivated. Write to the service's operator.")
    with services().db.write() as conn:
        users.record_sign_in(conn, user["id"])
    sign_in(user)
    return redirect(safe_next(next_url, urls.deposits_html("")), 303)


def _secret() -> bytes:
    return services().secret


# --- sign-up and confirmation ---------------------------------------------------------------------------------
@bp.route("/signup/", methods=["GET", "POST"])
def sign_up() -> Response:
    """The sign-up form (200); POST creates an unconfirmed account and mails its confirmation link, or mails the
    owner of an address already registered: 303 to the same "check your mail" page either way; 400 with the form's
    errors; 404 when sign-up is closed (SIGNUP_ENABLED); 429 after too many attempts."""
    settings = services().settings
    if not settings.SIGNUP_ENABLED:
        abort(404)
    form = SignUpForm()
    with services().db.read() as conn:
        version = terms.current_version(conn) if settings.SIGNUP_REQUIRES_TERMS else None
    valid = form.validate_on_submit()
    if form.is_submitted() and not _terms_accepted(form, version):  # its error beside the others, all at once
        valid = False
    if valid:
        throttle("signup", form.email.data, mailed=True)
        try:
            with services().db.write() as conn:
                user_id = signup.register(conn, form.email.data or "", form.password.data or "", settings, _secret())
                if user_id is not None and version is not None:
                    terms.accept(conn, user_id, version)
        except ValidationError as exc:
            _field_errors(form, exc)
        else:
            return _check_mail()
    status = 400 if form.errors else 200
    form.terms_version.data = str(version or "")
    return render_page("accounts/signup.html", status, form=form, min_length=settings.PASSWORD_MIN_LENGTH,
                       terms_version=version)


def _terms_accepted(form: SignUpForm, version: int | None) -> bool:
    """Whether the sign-up accepts the current Terms of use, when they must be accepted (an error on the form
    otherwise, also when they changed since the form was shown)."""
    if version is None:
        return True
    if not form.accept_terms.data:
        form.accept_terms.errors = ["Accept the Terms of use to sign up."]
        return False
    if form.terms_version.data != str(version):
        form.accept_terms.errors = ["The Terms of use changed since this page was shown: read them again."]
        return False
    return True


def _check_mail() -> Response:
    flash(CHECK_MAIL, "success")
    return redirect(url_for(".check_mail"), 303)


@bp.route("/account/check-mail/")
def check_mail() -> Response:
    """The page after a sign-up, reset or resend: what to do next, the same whatever the address (200)."""
    return render_page("accounts/check_mail.html")


@bp.route("/account/confirm/<token>", methods=["GET", "POST"])
def confirm(token: str) -> Response:
    """The page of a sign-up link, with the button to confirm (200); its POST confirms the address the link was
    mailed to: 303 to the sign-in page; 400 page for a link that is expired, already used or not genuine."""
    if request.method == "GET":
        return confirm_page("Confirm your address", "Press the button to confirm that this address is yours and "
                            "finish signing up.", "Confirm my address")
    try:
        with services().db.write() as conn:
            user = signup.confirm(conn, token[:2000], services().settings, _secret())
    except LinkInvalid as exc:
        return _link_failed(exc, url_for(".resend"), "Send a new confirmation link")
    flash(f"Your address {user['email']} is confirmed. You can sign in now.", "success")
    return redirect(url_for(".log_in"), 303)


@bp.route("/account/confirm/resend/", methods=["GET", "POST"])
def resend() -> Response:
    """Ask for a new confirmation link (200); POST mails one if the address awaits confirmation, and answers the
    same "check your mail" (303) for any address; 429 after too many attempts."""
    form = EmailForm()
    if form.validate_on_submit():
        throttle("signup", form.email.data, mailed=True)
        with services().db.write() as conn:
            signup.resend_confirmation(conn, form.email.data or "", services().settings, _secret())
        return _check_mail()
    return render_page("accounts/resend.html", 400 if form.errors else 200, form=form)


# --- sign-in and sign-out -------------------------------------------------------------------------------------
@bp.route("/login/", methods=["GET", "POST"])
def log_in() -> Response:
    """The sign-in form (200); POST signs in and goes to `next=` when it is a path of this site, else to the
    user's uploads (303); 401 with the form for a wrong address or password (the same answer for both), 403 for
    an address not confirmed yet or a deactivated account, 429 after too many attempts."""
    form = SignInForm()
    if request.method == "GET":
        form.next.data = safe_next(request.args.get("next"), "")
    next_url = form.next.data or request.args.get("next")
    status, unconfirmed = 200, False
    if form.validate_on_submit():
        throttle("signin", form.email.data)
        password = form.password.data or ""
        try:
            # A read: a flood of attempts must not hold the write lock through each hash check.
            with services().db.read() as conn:
                user = signup.authenticate_password(conn, form.email.data or "", password)
        except signup.SignInRefused as exc:
            unconfirmed = isinstance(exc, signup.NotConfirmed)
            status = 403 if isinstance(exc, signup.NotConfirmed | signup.Deactivated) else 401
            form.form_errors.append(str(exc))
        else:
            if signup.hash_outdated(user):
                with services().db.write() as conn:
                    signup.upgrade_hash(conn, user, password)
            return finish_sign_in(user, next_url)
    elif form.errors:
        status = 400
    form.password.data = ""  # never echoed
    return render_page("accounts/login.html", status, form=form, unconfirmed=unconfirmed)


@bp.route("/logout/", methods=["GET", "POST"])
def log_out() -> Response:
    """A page with the sign-out button (200); POST ends this browser's session and goes to the start page (303)."""
    if request.method == "POST":
        sign_out()
        flash("You are signed out.", "success")
        return redirect("/", 303)
    return render_page("accounts/logout.html", user=current_user())


# --- password reset -------------------------------------------------------------------------------------------
@bp.route("/account/reset/", methods=["GET", "POST"])
def reset_ask() -> Response:
    """Ask for a password reset link (200); POST mails one if the address has an active account, and answers the
    same "check your mail" (303) for any address; 429 after too many attempts."""
    form = EmailForm()
    if form.validate_on_submit():
        throttle("reset", form.email.data)
        # Whether the address has an account is found out in the mail thread, not here: the answer takes the same
        # time for any address (looking up, signing a link and queueing a message would make a registered one slower).
        email, settings, secret = form.email.data or "", services().settings, _secret()
        services().mailer.defer(lambda conn: signup.request_reset(conn, email, settings, secret))
        return _check_mail()
    return render_page("accounts/reset_ask.html", 400 if form.errors else 200, form=form)


@bp.route("/account/reset/<token>", methods=["GET", "POST"])
def reset(token: str) -> Response:
    """The form to choose a new password through a mailed link (200); POST sets it, ends every other session,
    confirms the address and signs this browser in (303 to the settings page); 400 page for a link that is
    expired, used or not genuine; 400 with the form's errors."""
    settings, token = services().settings, token[:2000]
    form = NewPasswordForm()
    try:
        with services().db.write() as conn:
            user = signup.check_reset(conn, token, settings, _secret())
            done = form.validate_on_submit()
            if done:
                user = signup.reset_password(conn, token, form.password.data or "", settings, _secret())
    except LinkInvalid as exc:
        return _link_failed(exc, url_for(".reset_ask"), "Ask for a new link")
    except ValidationError as exc:
        _field_errors(form, exc)
    else:
        if done:
            flash("Your new password is set, and you are signed in.", "success")
            return finish_sign_in(user, None)
    return render_page("accounts/reset.html", 400 if form.errors else 200, form=form, email=user["email"],
                       min_length=settings.PASSWORD_MIN_LENGTH)


# --- settings -------------------------------------------------------------------------------------------------
@bp.route("/account/settings/")
def account_settings() -> Response:
    """The signed-in user's address, with the forms to change the password and the address (200); a sign-in
    redirect without a session, 401 for a token."""
    user = require_user()
    return _settings_page(user, ChangePasswordForm(formdata=None), ChangeEmailForm(formdata=None))


def _settings_page(user: dict, password_form: ChangePasswordForm, email_form: ChangeEmailForm) -> Response:
    status = 400 if password_form.errors or email_form.errors else 200
    return render_page("accounts/settings.html", status, user=user, password_form=password_form,
                       email_form=email_form, min_length=services().settings.PASSWORD_MIN_LENGTH)


@bp.route("/account/settings/password", methods=["POST"])
def change_password() -> Response:
    """Change the password (the current one is asked for): every other session ends, this one stays (303 to the
    settings page); 400 with the form's errors."""
    user = require_user()
    form = ChangePasswordForm()
    if form.validate_on_submit():
        _throttle_password_check(user)
        try:
            with services().db.write() as conn:
                fresh = signup.change_password(conn, user["id"], form.current_password.data or "",
                                               form.new_password.data or "", services().settings)
        except ValidationError as exc:
            _field_errors(form, exc)
        else:
            sign_in(fresh)  # the change ended every session: this browser starts a new one
            flash("Your password is changed. Other browsers signed in to this account are signed out.", "success")
            return redirect(SETTINGS, 303)
    return _settings_page(user, form, ChangeEmailForm(formdata=None))


@bp.route("/account/settings/email", methods=["POST"])
def change_email() -> Response:
    """Ask to change the address (the current password is asked for): a link goes to the new address and a notice
    to the old one; 303 to the settings page; 400 with the form's errors."""
    user = require_user()
    form = ChangeEmailForm()
    if form.validate_on_submit():
        _throttle_password_check(user)
        try:
            with services().db.write() as conn:
                signup.change_email(conn, user["id"], form.password.data or "", form.new_email.data or "",
                                    services().settings, _secret())
        except ValidationError as exc:
            _field_errors(form, exc, {"email": "new_email", "current_password": "password"})
        else:
            flash("A message with a confirmation link is on its way to the new address: your address changes "
                  "once it is opened.", "success")
            return redirect(SETTINGS, 303)
    return _settings_page(user, ChangePasswordForm(formdata=None), form)


@bp.route("/account/confirm-email/<token>", methods=["GET", "POST"])
def confirm_email(token: str) -> Response:
    """The page of an address-change link, with the button to confirm (200); its POST switches the account to the
    new address (303 to the settings page, or the sign-in page without a session); 400 page for a link that is
    expired, used, not genuine, or whose address has an account of its own now."""
    if request.method == "GET":
        return confirm_page("Confirm your new address", "Press the button to make this address the one your "
                            "account uses from now on.", "Confirm the new address")
    try:
        with services().db.write() as conn:
            user = signup.confirm_email_change(conn, token[:2000], services().settings, _secret())
    except LinkInvalid as exc:
        return _link_failed(exc, SETTINGS, "Back to your settings")
    flash(f"Your address is now {user['email']}.", "success")
    return redirect(SETTINGS if current_user() else url_for(".log_in"), 303)
