"""The original TensorFlow 1 program with the data held in the graph as constants: what feed_dict copies cost."""

from functools import partial

from solvers import tf1_graph

prepare = partial(tf1_graph.prepared, fed=False,
                  step=lambda session, graph: partial(session.run, [graph.train, graph.loss]))
