"""expenses: expense records and reports."""

import datetime as dt
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
