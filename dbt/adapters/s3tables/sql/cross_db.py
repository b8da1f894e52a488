"""dbt's cross-database macros where Spark 3.5 needs more than dbt-spark gives (pure
SQL builders)."""

from __future__ import annotations

import re

from dbt_common.exceptions import CompilationError

_ORDER_BY = re.compile(r"^\s*order\s+by\s+(.+)$", re.IGNORECASE | re.DOTALL)
_DIRECTION = re.compile(r"^(.*?)\s+(asc|desc)$", re.IGNORECASE | re.DOTALL)
_DISTINCT = re.compile(r"^\s*distinct\s+(.+)$", re.IGNORECASE | re.DOTALL)


def _split_top_level(text: str) -> list[str]:
    """Comma-separated expressions, commas inside parentheses or quotes kept."""
    parts, depth, quote, start = [], 0, "", 0
    for index, character in enumerate(text):
        if quote:
            quote = "" if character == quote else quote
        elif character in "'\"`":
            quote = character
        elif character == "(":
            depth += 1
        elif character == ")":
            depth -= 1
        elif character == "," and depth == 0:
            parts.append(text[start:index].strip())
            start = index + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def listagg_sql(
    measure: str, delimiter_text: str, order_by_clause: str | None, limit_num: int | None
) -> str:
    """`listagg` with its order: Spark 3.5 has no `WITHIN GROUP`, so the values are
    collected with their sort keys, sorted, and joined (NULL values are skipped, as
    collect_list skips them)."""
    distinct = _DISTINCT.match(measure)
    value = distinct.group(1) if distinct else measure
    if not order_by_clause:
        collected = f"collect_list({measure})"
    else:
        match = _ORDER_BY.match(order_by_clause)
        if not match:
            raise CompilationError(
                f"listagg: order_by_clause `{order_by_clause}` must read `order by <expr>, ...`"
            )
        keys, directions = [], set()
        for item in _split_top_level(match.group(1)):
            spelled = _DIRECTION.match(item)
            keys.append(spelled.group(1) if spelled else item)
            directions.add(spelled.group(2).lower() if spelled else "asc")
        if len(directions) > 1:
            raise CompilationError(
                f"listagg: order_by_clause `{order_by_clause}` mixes asc and desc, which "
                "Spark 3.5 cannot sort in one pass; order every key the same way"
            )
        fields = ", ".join(f"{key} as k{index}" for index, key in enumerate(keys))
        ascending = "true" if directions == {"asc"} else "false"
        sorted_values = (
            f"transform(sort_array(collect_list(struct({fields}, {value} as v)), {ascending}), "
            "x -> x.v)"
        )
        collected = f"array_distinct({sorted_values})" if distinct else sorted_values
    if limit_num:
        collected = f"slice({collected}, 1, {int(limit_num)})"
    return f"array_join({collected}, {delimiter_text})"
