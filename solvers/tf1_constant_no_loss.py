"""One Session.run per step with constant data and only the train op fetched: the bare cost of a Session.run."""

from functools import partial

from solvers import tf1_graph

prepare = partial(tf1_graph.prepared, fed=False, step=lambda session, graph: partial(session.run, graph.train))
