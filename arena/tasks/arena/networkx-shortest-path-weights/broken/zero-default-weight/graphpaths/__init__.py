"""graphpaths: a small slice of a graph library's weighted shortest paths."""

from .weighted import NoPath, dijkstra_path, dijkstra_path_length

__all__ = ["NoPath", "dijkstra_path", "dijkstra_path_length"]
