"""The original TensorFlow 1 program: one Session.run per step, data fed through feed_dict every time."""

from functools import partial

from solvers import tf1_graph

prepare = partial(tf1_graph.prepared, fed=True,
                  step=lambda session, graph: partial(session.run, [graph.train, graph.loss], feed_dict=graph.feed))
