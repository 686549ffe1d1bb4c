#!/usr/bin/env python3
"""Minimal Python baseline for `git ledger report`: json.load the declaration and the ledger,
classify every row by its native outcome and evidence, count per section, sum the spend.

Usage: report_baseline.py <campaign.json> <ledger.json>   (prints the counts as JSON)

It checks nothing a real report checks (row validity, canonical form, one record per row,
declared limits): it is the least work any reader of the ledger must do, so the ratio is a
floor on what the real report costs over it.
"""
import json
import sys


def classify(row):
    outcome = row["native_outcome"]
    if outcome == "DEFERRED":
        return "not_attempted"
    if outcome == "PASS":
        checks = row.get("oracle_checks") or []
        if checks and all(c.get("ok") for c in checks) and row.get("runtime_identity"):
            return "verified_delivery"
        return "pass_without_complete_evidence"
    return {
        "FALSE_COMPLETE": "false_completion",
        "HONEST_BLOCKER": "stopped_unestablished",
        "STOPPED": "stopped_unestablished",
        "ERROR": "error",
        "FAIL": "ended_without_completing",
        "SKIPPED": "skipped",
    }.get(outcome, "ungraded")


def main():
    with open(sys.argv[1], "rb") as f:
        declaration = json.load(f)
    with open(sys.argv[2], "rb") as f:
        ledger = json.load(f)
    assert ledger["declaration"]["id"] == declaration["id"]
    sections = {}
    for row in ledger["rows"]:
        s = sections.setdefault(row["evidence"], {"counts": {}, "usd": 0.0})
        k = classify(row)
        s["counts"][k] = s["counts"].get(k, 0) + 1
        s["usd"] += row.get("estimated_usd") or 0.0
    json.dump(sections, sys.stdout, sort_keys=True)
    print()


main()
