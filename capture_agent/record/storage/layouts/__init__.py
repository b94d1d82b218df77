"""Table layouts, one class each; ``LAYOUTS`` maps the names written in run manifests to classes.

Adding a layout is adding a class (in the module of its family) and registering it here.
"""

from __future__ import annotations

from typing import Any

from capture_agent.record.storage.layouts.base import CapturePoint, Layout, MissingTable, Position, StepContext
from capture_agent.record.storage.layouts.groups import FrameGroups
from capture_agent.record.storage.layouts.heads import FirstRestGlobal, FirstRestLocal
from capture_agent.record.storage.layouts.inputs import FileLines, FileRows, Rows, Text, Values, check_files
from capture_agent.record.storage.layouts.local import ListLocal, OneLocal, Save, SetLocal, SetPartition, Single
from capture_agent.record.storage.layouts.prefix import FramePrefix
from capture_agent.record.storage.layouts.shuffled import FrameWrite, ListGlobal, OneGlobal, Pair, SetGlobal, Sets
from capture_agent.record.storage.layouts.union import Union

LAYOUTS: dict[str, type[Layout]] = {
    cls.name: cls
    for cls in (Text, Values, Rows, OneLocal, ListLocal, SetLocal, Single, SetPartition, Save, OneGlobal, ListGlobal,
                SetGlobal, Sets, Pair, Union, FileRows, FileLines, FrameWrite, FrameGroups, FramePrefix, FirstRestLocal,
                FirstRestGlobal)
}


def layout_from(name: str, details: dict[str, Any]) -> Layout:
    """The layout a manifest names, with its details."""
    try:
        cls = LAYOUTS[name]
    except KeyError:
        raise ValueError(f"unknown table layout {name!r} (known: {', '.join(sorted(LAYOUTS))})") from None
    return cls.from_details(details)


__all__ = [
    "LAYOUTS",
    "CapturePoint",
    "FileLines",
    "FileRows",
    "FirstRestGlobal",
    "FirstRestLocal",
    "FrameGroups",
    "FramePrefix",
    "FrameWrite",
    "Layout",
    "ListGlobal",
    "ListLocal",
    "MissingTable",
    "OneGlobal",
    "OneLocal",
    "Pair",
    "Position",
    "Rows",
    "Save",
    "SetGlobal",
    "SetLocal",
    "SetPartition",
    "Sets",
    "Single",
    "StepContext",
    "Text",
    "Union",
    "Values",
    "check_files",
    "layout_from",
]
