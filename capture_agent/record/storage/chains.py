"""Lineage across applications: runs chained by the files one wrote and another read.

A text input of one run that reads the part files of another run's ``saveAsTextFile`` has those
records as its lines (a line's position, (part file, byte offset), is the save's output id), as a
later job of the same run does (``layouts.inputs.Text``); a captured DataFrame source
(``file_rows``) reading the Parquet part files another run's captured DataFrame wrote (a
``frame_write`` point listing them) has that write's records as its rows
(``layouts.inputs.FileRows``). ``link_runs`` opens the other runs of
the store root beside a run folder, finds such pairs both ways (what this run read, what read
what it saved), transitively, and adds the linked runs' points to the run's ``LineageStore``
under ids qualified by their run, ``<run id>/<capture id>`` (the server's capture point ids), with
the reading input's parents naming the save. Traces then walk across applications as within one.

Only runs ``allow`` admits are read (the server: runs of applications of the trace's team), and at
most ``MAX_RUNS``. Every linked point's tables stay in its own folder: nothing is copied.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

from capture_agent.record.storage.layouts.inputs import FileRows, Text, reads_save, reads_write
from capture_agent.record.storage.layouts.local import Save
from capture_agent.record.storage.layouts.shuffled import FrameWrite
from capture_agent.record.storage.manifest import MANIFEST, CapturePoint, LineageStore

MAX_RUNS = 50  # runs a trace may cross (the run itself included)


@dataclass
class Chains:
    """The runs linked to a run: run id -> application id, and the (save, input) links found."""

    apps: dict[str, str] = field(default_factory=dict)
    links: list[tuple[str, str]] = field(default_factory=list)  # (save point id, reading input point id)


def qualified(run_id: str, capture_id: str) -> str:
    return f"{run_id}/{capture_id}"


def link_runs(run: LineageStore, allow: Callable[[str], bool] | None = None, limit: int = MAX_RUNS) -> Chains:
    """Adds to ``run`` the points of the runs chained to it (module docstring); returns them."""
    chains = Chains({run.run_id: run.app_id})
    others = {r.run_id: r for r in _sibling_runs(run, allow)}
    stores = {run.run_id: run, **others}
    edges = _save_edges(stores)  # (saving run, save id, reading run, input id)
    todo = [run.run_id]
    while todo:
        current = todo.pop()
        for saver, _save, reader, _reading in edges:
            if current not in (saver, reader):
                continue
            for other in (saver, reader):
                if other not in chains.apps and len(chains.apps) < limit:
                    chains.apps[other] = stores[other].app_id
                    todo.append(other)
    for other in chains.apps:
        if other != run.run_id:
            for point in stores[other].points.values():
                run.points[qualified(other, point.capture_id)] = _requalified(point, other)
    for saver, save, reader, reading in edges:
        if saver in chains.apps and reader in chains.apps:
            save_id = _id_in(run, saver, save)
            input_point = run.points[_id_in(run, reader, reading)]
            if save_id not in input_point.parents:
                input_point.parents.append(save_id)
            chains.links.append((save_id, input_point.capture_id))
    return chains


def _id_in(run: LineageStore, run_id: str, capture_id: str) -> str:
    return capture_id if run_id == run.run_id else qualified(run_id, capture_id)


def _requalified(point: CapturePoint, run_id: str) -> CapturePoint:
    """A linked run's point under its qualified id (its parents too; its tables where they are)."""
    out = copy.copy(point)
    out.capture_id = qualified(run_id, point.capture_id)
    out.parents = [qualified(run_id, p) for p in point.parents]
    return out


def _sibling_runs(run: LineageStore, allow: Callable[[str], bool] | None) -> list[LineageStore]:
    """The other run folders beside ``run`` (the store root), those ``allow`` admits."""
    fs = run.fs
    root = run.run_dir.rstrip("/").rsplit("/", 1)[0]
    from pyarrow.fs import FileSelector, FileType

    found = []
    for info in fs.fs.get_file_info(FileSelector(root, allow_not_found=True)):
        name = info.base_name
        mine = info.path.rstrip("/") == run.run_dir.rstrip("/")
        if info.type != FileType.Directory or mine or (allow is not None and not allow(name)):
            continue
        if not fs.exists(fs.join(info.path, MANIFEST)):
            continue
        try:
            found.append(LineageStore.open(fs.uri(info.path), fs))
        except (OSError, ValueError, KeyError):
            continue  # a run being written, or another agent's format: not chained
    return found


def _save_edges(stores: dict[str, LineageStore]) -> list[tuple[str, str, str, str]]:
    """(writing run, its save or write point, reading run, its input point) for every text input
    of one run reading the part files of another run's saveAsTextFile, and every DataFrame source
    reading the Parquet part files of another run's captured write."""
    saves = [(run_id, p) for run_id, store in stores.items() for p in store.points.values()
             if isinstance(p.layout, Save | FrameWrite)]
    edges = []
    for run_id, store in stores.items():
        for point in store.points.values():
            layout = point.layout
            for saver, save in saves:
                if saver == run_id:
                    continue
                if (isinstance(layout, Text) and isinstance(save.layout, Save) and reads_save(layout.files, save)) or \
                        (isinstance(layout, FileRows) and reads_write(layout.files, save)):
                    edges.append((saver, save.capture_id, run_id, point.capture_id))
    return edges
