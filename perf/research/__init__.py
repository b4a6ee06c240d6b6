"""Research tools, apart from the product and built on its public functions: the studies whose figures choose how the
suite measures (docs/results/)."""
