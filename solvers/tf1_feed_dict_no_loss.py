"""The original TensorFlow 1 program fetching only the train op: what fetching the loss every step costs."""

from functools import partial

from solvers import tf1_graph

prepare = partial(tf1_graph.prepared, fed=True,
                  step=lambda session, graph: partial(session.run, graph.train, feed_dict=graph.feed))
