"""expenses: expense records and reports."""

import csv
import datetime as dt
import io
import json
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Expense:
    date: dt.date
    category: str
    amount_cents: int
    note: str = ""


@dataclass
class Report:
    title: str
    expenses: list = field(default_factory=list)

    def add(self, expense):
        self.expenses.append(expense)
        return self

    def total_cents(self):
        return sum(e.amount_cents for e in self.expenses)

    def to_json(self):
        return json.dumps({
            "title": self.title,
            "expenses": [
                {"date": e.date.isoformat(), "category": e.category,
                 "amount_cents": e.amount_cents, "note": e.note}
                for e in self.expenses
            ],
            "total_cents": self.total_cents(),
        }, indent=2)

    def to_csv(self):
        out = io.StringIO(newline="")
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow(["date", "category", "amount", "note"])
        for e in self.expenses:
            writer.writerow([e.date.isoformat(), e.category, format_cents(e.amount_cents), e.note])
        return out.getvalue()


def format_cents(cents):
    """Integer cents as a decimal string with two places: 1250 -> 12.50, -300 -> -3.00."""
    sign = "-" if cents < 0 else ""
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}{whole}.{rest:02d}"
