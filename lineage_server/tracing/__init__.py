"""Traces (and, later, what-ifs): the questions users ask of record-level lineage, run by the worker."""
