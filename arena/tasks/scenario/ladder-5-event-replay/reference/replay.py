"""Rebuild account balances from the event log, idempotently and in sequence order."""

import copy


def _apply(state, event):
    balances = state["balances"]
    kind, account, amount = event["type"], event["account"], event["amount"]
    if kind == "deposited":
        balances[account] = balances.get(account, 0) + amount
    elif kind in ("withdrawn", "transferred"):
        if balances.get(account, 0) < amount:
            state["bounced"].append(event["id"])
            return
        balances[account] = balances.get(account, 0) - amount
        if kind == "transferred":
            balances[event["to"]] = balances.get(event["to"], 0) + amount
    else:
        raise ValueError(f"unknown event type {kind!r}")


def replay(events, snapshot=None):
    if snapshot is None:
        state = {"seq": 0, "balances": {}, "bounced": []}
    else:
        state = copy.deepcopy(snapshot)
    by_seq = {}
    for event in events:
        if event["seq"] <= state["seq"]:
            continue
        known = by_seq.get(event["seq"])
        if known is not None:
            if known["id"] != event["id"]:
                raise ValueError(f"events {known['id']!r} and {event['id']!r} share seq {event['seq']}")
            continue
        by_seq[event["seq"]] = event
    for seq in sorted(by_seq):
        _apply(state, by_seq[seq])
        state["seq"] = seq
    return state
