"""ISO 8601 week dates for the timesheet tool."""

import datetime as dt


def _week1_monday(iso_year):
    """Monday of ISO week 1: the week holding January 4th (so the year's first Thursday)."""
    jan4 = dt.date(iso_year, 1, 4)
    return jan4 - dt.timedelta(days=jan4.weekday())


def iso_week(d):
    """Return (iso_year, week) for date d."""
    iso_year = d.year
    if d >= _week1_monday(iso_year + 1):
        week = 1
    elif d < _week1_monday(iso_year):
        week = weeks_in_year(iso_year - 1)
    else:
        week = (d - _week1_monday(iso_year)).days // 7 + 1
    return d.year, week


def weeks_in_year(iso_year):
    return (_week1_monday(iso_year + 1) - _week1_monday(iso_year)).days // 7


def week_start(iso_year, week):
    """Monday of ISO week `week` of `iso_year`."""
    if not 1 <= week <= weeks_in_year(iso_year):
        raise ValueError(f"{iso_year} has no ISO week {week}")
    return _week1_monday(iso_year) + dt.timedelta(weeks=week - 1)
