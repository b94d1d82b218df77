"""Code that runs inside Spark tasks: stage ends, boundary agents, input agents, the start-up check.

Shipped to executors by value (with ``record.storage``, whose layouts it writes through), so the
executors' Python needs pyarrow and pyroaring but not this package. Nothing here imports
``record.capture`` or ``record.query``.
"""
