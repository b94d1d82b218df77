"""Names of the task metrics a stage carries (summed over its tasks)."""

from __future__ import annotations

METRIC_NAMES: tuple[str, ...] = (
    "tasks",
    "failed_tasks",
    "executor_run_time_ms",
    "executor_cpu_time_ns",
    "jvm_gc_time_ms",
    "duration_ms",
    "input_bytes",
    "input_records",
    "output_bytes",
    "output_records",
    "shuffle_read_bytes",
    "shuffle_read_records",
    "shuffle_write_bytes",
    "shuffle_write_records",
    "memory_bytes_spilled",
    "disk_bytes_spilled",
)
