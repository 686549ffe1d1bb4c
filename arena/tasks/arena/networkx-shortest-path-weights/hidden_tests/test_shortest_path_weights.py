"""Hidden tests for networkx-shortest-path-weights (run with TARGET=<working copy>)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.environ.get("TARGET", os.path.join(HERE, "..", "seed"))))

import pytest  # noqa: E402

from graphpaths import NoPath, dijkstra_path, dijkstra_path_length  # noqa: E402


def graph():
    # a -> d directly costs 3; the detour a -> b -> c -> d has two edges
    # without a weight attribute and one of weight 0.5.
    return {
        "a": {"d": {"weight": 3}, "b": {}},
        "b": {"c": {}},
        "c": {"d": {"weight": 0.5}},
        "d": {},
    }


def test_missing_weight_defaults_to_one():
    G = graph()
    assert dijkstra_path_length(G, "a", "d") == 2.5
    assert dijkstra_path(G, "a", "d") == ["a", "b", "c", "d"]
    G["b"]["c"]["weight"] = 2
    assert dijkstra_path(G, "a", "d") == ["a", "d"]
    assert dijkstra_path_length(G, "a", "d") == 3


def test_weight_function():
    G = graph()
    G["a"]["d"]["toll"] = True

    def cost(u, v, attrs):
        return 10 if attrs.get("toll") else 1

    assert dijkstra_path(G, "a", "d", weight=cost) == ["a", "b", "c", "d"]
    assert dijkstra_path_length(G, "a", "d", weight=cost) == 3


def test_weight_function_none_hides_edge():
    G = graph()

    def closed_bc(u, v, attrs):
        if (u, v) == ("b", "c"):
            return None
        return attrs.get("weight", 1)

    assert dijkstra_path(G, "a", "d", weight=closed_bc) == ["a", "d"]
    assert dijkstra_path_length(G, "a", "d", weight=closed_bc) == 3
    with pytest.raises(NoPath):
        dijkstra_path(G, "b", "d", weight=closed_bc)


def test_negative_weight_rejected():
    G = {"s": {"t": {"weight": -1}}, "t": {}}
    with pytest.raises(ValueError):
        dijkstra_path(G, "s", "t")
    with pytest.raises(NoPath):
        dijkstra_path({"s": {}, "t": {}}, "s", "t")
