"""Pure text operations on Spark SQL: quoting names and literals, splitting scripts."""

from __future__ import annotations

import re

# A string literal, a quoted identifier, a comment, or a statement separator.
_TOKEN = re.compile(
    r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`(?:[^`]|``)*`|--[^\n]*|/\*.*?\*/|;""",
    re.DOTALL,
)
_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)


def quote(name: str) -> str:
    """Spark SQL identifier quoting: backticks, with embedded backticks doubled."""
    return "`" + name.replace("`", "``") + "`"


def sql_string(value: str | None) -> str:
    """A Spark SQL string literal (or NULL): backslashes and quotes escaped."""
    if value is None:
        return "CAST(NULL AS STRING)"
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def split_statements(script: str) -> list[str]:
    """The statements of a script, split at semicolons outside literals, quoted names and
    comments. Spark runs one statement per call; dbt sends a model's `sql_header` and its
    statement as one text. Parts holding only comments or blanks are dropped (a comment
    before the first statement stays with it)."""
    statements: list[str] = []
    start = 0
    for match in _TOKEN.finditer(script):
        if match.group() == ";":
            statements.append(script[start : match.start()])
            start = match.end()
    statements.append(script[start:])
    return [s.strip() for s in statements if _COMMENT.sub("", s).strip()]
