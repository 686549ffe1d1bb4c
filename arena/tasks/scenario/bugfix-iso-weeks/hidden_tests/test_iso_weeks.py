"""Hidden tests for bugfix-iso-weeks (run with TARGET=<working copy>)."""

import datetime as dt
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.environ.get("TARGET", os.path.join(HERE, "..", "seed"))))

import pytest  # noqa: E402

import weekcal  # noqa: E402


@pytest.mark.parametrize("day, expected", [
    (dt.date(2021, 1, 3), (2020, 53)),
    (dt.date(2021, 1, 4), (2021, 1)),
    (dt.date(2020, 12, 31), (2020, 53)),
    (dt.date(2024, 12, 30), (2025, 1)),
    (dt.date(2023, 1, 1), (2022, 52)),
])
def test_year_boundary(day, expected):
    assert weekcal.iso_week(day) == expected


def test_mid_year_weeks():
    assert weekcal.iso_week(dt.date(2024, 6, 12)) == (2024, 24)
    assert weekcal.iso_week(dt.date(2019, 3, 4)) == (2019, 10)


def test_weeks_in_year():
    assert [weekcal.weeks_in_year(y) for y in (2015, 2019, 2020, 2021, 2026)] == [53, 52, 53, 52, 53]


def test_week_start_is_monday_of_iso_week():
    assert weekcal.week_start(2020, 53) == dt.date(2020, 12, 28)
    assert weekcal.week_start(2025, 1) == dt.date(2024, 12, 30)
    with pytest.raises(ValueError):
        weekcal.week_start(2021, 53)


def test_agrees_with_isocalendar_over_a_decade():
    day = dt.date(2015, 12, 20)
    while day < dt.date(2026, 1, 15):
        iso = day.isocalendar()
        assert weekcal.iso_week(day) == (iso[0], iso[1]), day
        assert weekcal.week_start(iso[0], iso[1]) == day - dt.timedelta(days=day.weekday())
        day += dt.timedelta(days=3)
