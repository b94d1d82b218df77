"""Capturing record-level lineage in a PySpark job: the plan of captured RDDs, its compiler and
generated stage code, inputs, actions and outputs, and ``LineageContext`` that ties them together."""
