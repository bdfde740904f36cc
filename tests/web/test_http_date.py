"""`timeutil.http_date`, written out for speed, gives what the standard library's RFC 9110 formatting gives, for
naive UTC times (the database's) and aware ones, in any locale."""

from __future__ import annotations

import locale
from datetime import UTC, datetime, timedelta, timezone
from email.utils import format_datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repository.timeutil import http_date

# Generating the examples takes what the machine gives: on a busy one Hypothesis's timing health checks and its
# per-example deadline would fail the test for the machine's sake, not the code's.
BUSY_MACHINE = settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)


@BUSY_MACHINE
@given(st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(9999, 12, 30)))
def test_a_naive_utc_time(value):
    assert http_date(value) == format_datetime(value.replace(tzinfo=UTC, microsecond=0), usegmt=True)


@BUSY_MACHINE
@given(st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(9999, 12, 30)), st.integers(-14 * 60, 14 * 60))
def test_an_aware_time_is_given_in_gmt(value, minutes):
    aware = value.replace(tzinfo=timezone(timedelta(minutes=minutes)))
    assert http_date(aware) == format_datetime(aware.astimezone(UTC).replace(microsecond=0), usegmt=True)


def test_the_names_do_not_follow_the_locale():
    saved = locale.setlocale(locale.LC_TIME)
    try:
        try:
            locale.setlocale(locale.LC_TIME, "de_DE.UTF-8")
        except locale.Error:
            pass  # not installed here: the names are constants either way
        assert http_date(datetime(2026, 3, 1, 7, 5, 9)) == "Sun, 01 Mar 2026 07:05:09 GMT"
    finally:
        locale.setlocale(locale.LC_TIME, saved)
