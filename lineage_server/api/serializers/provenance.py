"""Serializers of provenance graphs, their batches of triples, index builds and lineage answers."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from rest_framework import serializers

from capture_agent.provenance import DIRECTIONS
from lineage_server.provenance.models import IndexBuild, ProvenanceGraph, TripleBatch
from lineage_server.provenance.models.graph import DEFAULT_THRESHOLD

SPLITS_HELP = (
    "Top-level splits of the workflow's dataset graph, each a list of dataset names that is weakly connected in "
    "it (the paper's Figure 1); datasets left out form more splits. [] (default): cut automatically by depth."
)


class IndexBuildSerializer(serializers.ModelSerializer[IndexBuild]):
    """One run of the index job: status, what it read and made (meta: counts and timings in seconds)."""

    incremental = serializers.SerializerMethodField()
    duration_ms = serializers.IntegerField(read_only=True, allow_null=True)

    class Meta:
        model = IndexBuild
        fields = ["id", "status", "full", "incremental", "requested_by_label", "created_at", "started_at",
                  "finished_at", "duration_ms", "upto_batch", "previous", "threshold", "meta", "error"]
        read_only_fields = fields

    def get_incremental(self, build: IndexBuild) -> bool:
        return bool(build.meta.get("incremental", False))


class TripleBatchSerializer(serializers.ModelSerializer[TripleBatch]):
    """One upload of triples (or one run's exported lineage)."""

    class Meta:
        model = TripleBatch
        fields = ["id", "created_at", "created_by_label", "source", "rows", "bytes", "details"]
        read_only_fields = fields


class ProvenanceGraphSerializer(serializers.ModelSerializer[ProvenanceGraph]):
    """A provenance graph; ``index`` is the generation queries read, ``latest_build`` the newest build."""

    team: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    url = serializers.SerializerMethodField()
    links = serializers.SerializerMethodField()

    class Meta:
        model = ProvenanceGraph
        fields = ["id", "team", "name", "description", "set_threshold", "splits", "triple_count", "created_at",
                  "url", "links"]
        read_only_fields = ["id", "team", "triple_count", "created_at", "url", "links"]

    def get_url(self, graph: ProvenanceGraph) -> str:
        return reverse("api:provenance-graph-detail", kwargs={"pk": graph.pk})

    def get_links(self, graph: ProvenanceGraph) -> dict[str, str]:
        return {name: reverse(f"api:provenance-graph-{name}", kwargs={"pk": graph.pk})
                for name in ("triples", "builds", "lineage", "applications")} | {
            "page": reverse("web:provenance-graph", kwargs={"pk": graph.pk})}


class ProvenanceGraphDetailSerializer(ProvenanceGraphSerializer):
    index = serializers.SerializerMethodField()
    latest_build = serializers.SerializerMethodField()

    class Meta(ProvenanceGraphSerializer.Meta):
        fields = [*ProvenanceGraphSerializer.Meta.fields, "index", "latest_build"]
        read_only_fields = [*ProvenanceGraphSerializer.Meta.read_only_fields, "index", "latest_build"]

    def _build(self, key: str) -> dict[str, Any] | None:
        build = self.context.get(key)
        return None if build is None else IndexBuildSerializer(build).data

    def get_index(self, graph: ProvenanceGraph) -> dict[str, Any] | None:
        return self._build("index")

    def get_latest_build(self, graph: ProvenanceGraph) -> dict[str, Any] | None:
        return self._build("latest_build")


class ProvenanceGraphCreateSerializer(serializers.Serializer[Any]):
    """What POST /provenance/graphs/ asks."""

    team = serializers.CharField(help_text="Slug of the team that owns the graph (you need the analyst role).")
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    splits = serializers.JSONField(required=False, help_text=SPLITS_HELP)
    set_threshold = serializers.IntegerField(
        required=False, min_value=2, default=DEFAULT_THRESHOLD,
        help_text="Components of at least this many items are cut into connected sets (the paper's theta).")


class ProvenanceGraphUpdateSerializer(serializers.ModelSerializer[ProvenanceGraph]):
    splits = serializers.JSONField(required=False, help_text=SPLITS_HELP)
    set_threshold = serializers.IntegerField(required=False, min_value=2)

    class Meta:
        model = ProvenanceGraph
        fields = ["name", "description", "set_threshold", "splits"]


class BuildRequestSerializer(serializers.Serializer[Any]):
    full = serializers.BooleanField(required=False, default=False,
                                    help_text="Start from scratch instead of extending the newest index.")


class ApplicationExportSerializer(serializers.Serializer[Any]):
    application = serializers.CharField(help_text="App id of a captured application of the graph's team.")
    build = serializers.BooleanField(required=False, default=True, help_text="Queue an index build afterwards.")


class LineageQuerySerializer(serializers.Serializer[Any]):
    item = serializers.CharField(help_text="The item whose lineage is asked (as its triples name it).")
    direction = serializers.ChoiceField(choices=DIRECTIONS, required=False, default="ancestors")
    limit = serializers.IntegerField(required=False, min_value=1, max_value=100_000, default=5_000,
                                     help_text="Most items and edges returned (the counts are always whole).")


class EdgeSerializer(serializers.Serializer[Any]):
    src = serializers.CharField()
    dst = serializers.CharField()
    op = serializers.CharField()


class LineageAnswerSerializer(serializers.Serializer[Any]):
    """The ancestors or descendants of an item, the triples between them, and what the query read."""

    item = serializers.CharField()
    direction = serializers.ChoiceField(choices=DIRECTIONS)
    component = serializers.IntegerField(help_text="Id of the item's weakly connected component.")
    connected_set = serializers.IntegerField(help_text="Id of the item's connected set.")
    items = serializers.ListField(child=serializers.CharField())
    item_count = serializers.IntegerField()
    edges = EdgeSerializer(many=True)
    edge_count = serializers.IntegerField()
    truncated = serializers.BooleanField(help_text="True when items or edges were cut at limit.")
    sets_read = serializers.ListField(child=serializers.IntegerField(),
                                      help_text="The connected sets read: the item's set and its set lineage.")
    triples_read = serializers.IntegerField(help_text="Triples read from those sets (all the query looked at).")
    index = serializers.IntegerField(help_text="The index build whose generation answered.")
    timings = serializers.DictField(child=serializers.FloatField(), help_text="Milliseconds per step.")
