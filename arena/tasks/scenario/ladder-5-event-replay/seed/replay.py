"""Rebuild account balances from the event log."""

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
    for event in events:
        _apply(state, event)
        state["seq"] = event["seq"]
    return state
