"""The constant-data train step as a Session.make_callable: the per-call fetch and feed handling done once, at setup."""

from functools import partial

from solvers import tf1_graph

prepare = partial(tf1_graph.prepared, fed=False, step=lambda session, graph: session.make_callable(graph.train))
