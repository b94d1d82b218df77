from __future__ import annotations

import csv
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lineage_server.catalog.models import Application, Dataset
from lineage_server.catalog.selectors.columns import MAX_DEPTH, column_graph, dataset_columns, impact_rows


class Command(BaseCommand):
    help = ("Print, as CSV, everything downstream of one column of a dataset (its impact) across every team's "
            "applications, nearest first: the twin of GET /api/v1/datasets/{id}/column-impact/?format=csv.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="The dataset's path as the catalog spells it, e.g. file:/data/clean.")
        parser.add_argument("column", help="The column's name.")
        parser.add_argument("--depth", type=int, default=MAX_DEPTH, help=f"Jobs downstream (1-{MAX_DEPTH}).")

    def handle(self, *args: Any, **options: Any) -> None:
        if not 1 <= options["depth"] <= MAX_DEPTH:
            raise CommandError(f"--depth must be 1-{MAX_DEPTH}, not {options['depth']}.")
        dataset = Dataset.objects.filter(path=options["path"]).first()
        if dataset is None:
            raise CommandError(f"No dataset {options['path']!r}.")
        apps = Application.objects.all()
        known = dataset_columns(apps, dataset)
        if options["column"] not in known:
            raise CommandError(f"No column {options['column']!r} in {dataset.path}'s column lineage "
                               f"(known: {', '.join(known[:20]) or 'none'}).")
        graph = column_graph(apps, {dataset.pk: {options["column"]}}, f"column:{dataset.pk}:{options['column']}",
                             upstream=0, downstream=options["depth"])
        writer = csv.DictWriter(self.stdout, fieldnames=["depth", "dataset", "column", "via", "applications"],
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows(impact_rows(graph))
