"""The column dictionary (``leaderboard.columns``) as the API schema describes it: a serializer per row
kind, one typed field per column with its meaning and unit as the field's help text, so that Swagger
UI and ReDoc document every column of a board's rows and of the per-attempt exports."""
from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema_serializer
from rest_framework import serializers

from leaderboard.columns import ATTEMPT_COLUMNS, Column, board_columns
from submissions.export_apis import EXPORT_RESPONSES


def column_help(column: Column) -> str:
    unit = f" Unit: {column.unit}." if column.unit else ""
    only = f" Only on the boards of {column.only_for}." if column.only_for else ""
    return f"{column.meaning}{unit}{only}"


def column_field(column: Column) -> serializers.Field:
    options: dict[str, Any] = {"help_text": column_help(column), "required": not column.only_for}
    if column.type == "list<string>":
        return serializers.ListField(child=serializers.CharField(), **options)
    field_class = {"string": serializers.CharField, "int64": serializers.IntegerField,
                   "float64": serializers.FloatField, "bool": serializers.BooleanField,
                   "timestamp": serializers.DateTimeField}[column.type]
    return field_class(allow_null=column.nullable, **options)


def _row_serializer(name: str, columns: tuple[Column, ...], doc: str) -> type[serializers.Serializer]:
    fields = {column.name: column_field(column) for column in columns}
    serializer = type(name, (serializers.Serializer,), {**fields, "__doc__": doc})
    return extend_schema_serializer(component_name=name.removesuffix("Serializer"))(serializer)


def board_row_serializer() -> type[serializers.Serializer]:
    return _row_serializer("BoardRowSerializer", board_columns(),
                           "One entry of a board: the columns of the board's CSV export and of a snapshot's "
                           "data/board.parquet (see /data/columns/).")


def attempt_row_serializer() -> type[serializers.Serializer]:
    return _row_serializer("AttemptRowSerializer", ATTEMPT_COLUMNS,
                           "One attempt: the columns of the per-attempt CSV and Parquet exports and of a "
                           "snapshot's data/attempts.parquet (see /data/columns/).")


BoardRow = board_row_serializer()
AttemptRow = attempt_row_serializer()

#: The export endpoints' answers, their CSV and Parquet described column by column.
ATTEMPT_EXPORT_RESPONSES = {
    **EXPORT_RESPONSES,
    (200, "text/csv"): OpenApiResponse(AttemptRow(many=True),
                                       description="csv: one line per attempt, a header of these columns"),
    (200, "application/vnd.apache.parquet"): OpenApiResponse(
        OpenApiTypes.BINARY, description="parquet: one row per attempt, typed columns, the same as the csv's "
                                         "(read Parquet rather than CSV: it keeps every column's type)"),
}
