"""Tracing record-level lineage: the engine, record values, LineageRDD, and opening a finished run.

Used both in the job's own process (through ``LineageContext``) and, far from it, by the server's
trace worker (``LineageRun``). Nothing here imports ``record.capture``.
"""
