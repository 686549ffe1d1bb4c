"""Dijkstra's algorithm over a dict-of-dicts graph: G[u][v] is the edge's attribute dict."""

import heapq
from itertools import count


class NoPath(Exception):
    """The target cannot be reached from the source."""


def _weight_function(weight):
    """Return weight(u, v, attrs) -> number or None (None hides the edge)."""
    if callable(weight):
        return weight
    return lambda u, v, attrs: attrs.get(weight, 1)


def _dijkstra(G, source, target, weight):
    if source not in G:
        raise KeyError(f"source {source!r} not in graph")
    weigh = _weight_function(weight)
    dist = {}
    prev = {source: None}
    seen = {source: 0}
    tie = count()
    heap = [(0, next(tie), source)]
    while heap:
        d, _, u = heapq.heappop(heap)
        if u in dist:
            continue
        dist[u] = d
        if u == target:
            break
        for v, attrs in G.get(u, {}).items():
            w = weigh(u, v, attrs)
            if w is None:
                w = 0
            if w < 0:
                raise ValueError(f"negative weight on edge {u!r} -> {v!r}")
            nd = d + w
            if v not in dist and (v not in seen or nd < seen[v]):
                seen[v] = nd
                prev[v] = u
                heapq.heappush(heap, (nd, next(tie), v))
    if target not in dist:
        raise NoPath(f"no path from {source!r} to {target!r}")
    path = [target]
    while prev[path[-1]] is not None:
        path.append(prev[path[-1]])
    return dist[target], path[::-1]


def dijkstra_path(G, source, target, weight="weight"):
    return _dijkstra(G, source, target, weight)[1]


def dijkstra_path_length(G, source, target, weight="weight"):
    return _dijkstra(G, source, target, weight)[0]
