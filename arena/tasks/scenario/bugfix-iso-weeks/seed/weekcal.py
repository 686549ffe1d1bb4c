"""ISO 8601 week dates for the timesheet tool."""

import datetime as dt


def iso_week(d):
    """Return (iso_year, week) for date d."""
    week = (d.timetuple().tm_yday - 1) // 7 + 1
    return d.year, week


def weeks_in_year(iso_year):
    return 52


def week_start(iso_year, week):
    """Monday of ISO week `week` of `iso_year`."""
    if not 1 <= week <= weeks_in_year(iso_year):
        raise ValueError(f"{iso_year} has no ISO week {week}")
    first = dt.date(iso_year, 1, 1)
    return first + dt.timedelta(weeks=week - 1)
