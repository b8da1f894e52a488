"""Pure text operations on Spark SQL: quoting names and literals, splitting scripts."""

from __future__ import annotations

import re

# A string literal, a quoted identifier, a comment, or a statement separator.
_TOKEN = re.compile(
    r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`(?:[^`]|``)*`|--[^\n]*|/\*.*?\*/|;""",
    re.DOTALL,
)
_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)
# What can change an expression's extent: literals and quoted names (skipped whole), a lone
# quote (unterminated), comment starts, separators and parentheses.
_EXPRESSION_TOKEN = re.compile(
    r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`(?:[^`]|``)*`|['"`]|--|/\*|;|[()]""",
    re.DOTALL,
)


def quote(name: str) -> str:
    """Spark SQL identifier quoting: backticks, with embedded backticks doubled."""
    return "`" + name.replace("`", "``") + "`"


def sql_string(value: str | None) -> str:
    """A Spark SQL string literal (or NULL): backslashes and quotes escaped."""
    if value is None:
        return "CAST(NULL AS STRING)"
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def procedure_call(
    catalog: str, namespace: str, table: str, procedure: str, *arguments: str
) -> str:
    """`CALL` of one of Iceberg's Spark procedures on a table (`arguments`: named, as SQL)."""
    target = f"table => {sql_string(f'{quote(namespace)}.{quote(table)}')}"
    return f"CALL {quote(catalog)}.system.{procedure}({', '.join([target, *arguments])})"


def failing_when(condition: str, message_sql: str, value: str) -> str:
    """`value`, except that a row where `condition` holds fails the whole statement with
    `message_sql` (a string expression): a check inside the one writing statement, so a
    failure writes nothing."""
    return f"CASE WHEN {condition} THEN raise_error({message_sql}) ELSE {value} END"


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


def expression_problem(text: str) -> str | None:
    """Why `text` might not stay one expression once put in parentheses inside a larger
    statement (None when it will): a parenthesis it closes without opening, or leaves
    open, a `;`, a comment (it could hide the closing parenthesis), an unterminated quote."""
    if not text.strip():
        return "is empty"
    depth = 0
    for match in _EXPRESSION_TOKEN.finditer(text):
        token = match.group()
        if token == "(":
            depth += 1
        elif token == ")":
            depth -= 1
            if depth < 0:
                return "closes a parenthesis it did not open"
        elif token == ";":
            return "contains `;`"
        elif token in ("--", "/*"):
            return "contains a comment"
        elif token in ("'", '"', "`"):
            return f"has an unterminated {token} quote"
    if depth:
        return "leaves a parenthesis open"
    return None
