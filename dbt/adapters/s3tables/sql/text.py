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


# The tokens of an expression whose bare column names get qualified: literals and quoted
# names (whole), words, numbers (so `1e5` is not a word), `->`, and any other character.
_QUALIFY_TOKEN = re.compile(
    r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`(?:[^`]|``)*`|\d[\w.]*|[A-Za-z_]\w*|->|\S""",
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


def table_identifier(catalog: str, namespace: str, name: str) -> str:
    """A table's full Spark SQL name, `catalog`.`namespace...`.`name`, each part quoted."""
    return ".".join(quote(part) for part in (catalog, *namespace.split("."), name))


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


def qualify_columns(expression: str, columns: list[str], alias: str) -> str:
    """`expression` with each bare reference to one of `columns` prefixed by `alias.`, so
    a condition written against one table (`id != 2`) means the same inside a statement
    joining two tables with those columns. Left as they are: names already qualified
    (`x.id`) or followed by `(` (functions), type names after `AS`, lambda parameters
    (`x -> x > 1`, in their lambda's parentheses), and everything inside a subquery (its
    names belong to its own tables)."""
    wanted = {c.lower() for c in columns}
    tokens = list(_QUALIFY_TOKEN.finditer(expression))
    parts: list[str] = []
    position = 0
    # One entry per open parenthesis: whether it opens a subquery, and the lambda
    # parameters declared inside it.
    groups: list[tuple[bool, set[str]]] = [(False, set())]

    def neighbour(index: int) -> str:
        return tokens[index].group().upper() if 0 <= index < len(tokens) else ""

    for index, match in enumerate(tokens):
        token = match.group()
        if token == "(":
            groups.append((neighbour(index + 1) in ("SELECT", "WITH"), set()))
            continue
        if token == ")":
            if len(groups) > 1:
                groups.pop()
            continue
        is_name = token.startswith("`") or token[0].isalpha() or token[0] == "_"
        name = token[1:-1].replace("``", "`") if token.startswith("`") else token
        if not is_name or name.lower() not in wanted:
            continue
        if neighbour(index + 1) == "->":
            groups[-1][1].add(name.lower())
            continue
        if (
            not any(subquery for subquery, _ in groups)
            and not any(name.lower() in parameters for _, parameters in groups)
            and neighbour(index - 1) not in (".", "AS")
            and neighbour(index + 1) != "("
        ):
            parts.append(expression[position : match.start()])
            parts.append(f"{alias}.{quote(name)}")
            position = match.end()
    parts.append(expression[position:])
    return "".join(parts)
