"""The docs check: README.md and docs/*.md link only to what exists, and mention every key
the code accepts.

    python scripts/check_docs.py [REPOSITORY]

It prints one line per problem and exits 1 when there is any:

- a relative markdown link points at a file that does not exist, or at an `#anchor` that is
  not a heading of the page it points at (slugs made as GitHub makes them);
- a key the code accepts is not mentioned as `key` (in backticks) anywhere in README.md or
  docs/: every model config key the adapter reads (`ADAPTER_CONFIG_KEYS`), every profile key
  the profile class declares itself (dbt-spark's inherited keys aside), and every catalog
  key (`CatalogKeys`, which the profile inherits and catalogs.yml's `adapter_properties`
  take).

- a profile key in the table of docs/profile.md is not a key of the profile class;
- a `run-operation` the docs name is not a macro of the adapter;
- a `make` target or a `dbt-s3tables-*` command the docs name does not exist (Makefile,
  `[project.scripts]`);
- an Iceberg jar named with a version (`iceberg-...:1.2.3`) disagrees with the pinned one;
- a package named with a version (`pyspark 3.5`, `dbt-core 1.11`, `PyIceberg 0.12`,
  `Python 3.10`) falls outside the pyproject's requirement of it (a figure such as
  `pyspark 318 MB` or `PyIceberg 0.55 s` is no version);
- a page holds words of a development log (an issue's number, "the issue's", "this
  session").

And the reverse: every operation macro (`OPERATION_MACRO_FILES`) is named after
`dbt run-operation` somewhere, and every command of `[project.scripts]` is mentioned.

The keys and the pins come from the installed package (or the tree on PYTHONPATH),
imported in one place each: `accepted_keys`, `pinned_iceberg_version`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from urllib.parse import unquote

import tomllib


def accepted_keys() -> dict[str, set[str]]:
    """Every key the code accepts, by kind. The only place that names the adapter's modules:
    update these imports when a module moves."""
    from dbt.adapters.s3tables.catalogs.keys import CatalogKeys
    from dbt.adapters.s3tables.credentials import S3TablesCredentials
    from dbt.adapters.s3tables.keys.config_keys import ADAPTER_CONFIG_KEYS

    # Fields the profile class declares: in its own body (redeclared ones included), and
    # the catalog keys it inherits from CatalogKeys; not dbt-spark's (SparkCredentials).
    own = vars(S3TablesCredentials).get("__annotations__", {})
    catalog = {f.name for f in fields(CatalogKeys)}
    profile = {f.name for f in fields(S3TablesCredentials) if f.name in own} | catalog
    return {
        "model config key": set(ADAPTER_CONFIG_KEYS),
        "profile key": profile,
        "catalog key": catalog,
    }


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# A code span may run over lines, but not over a blank line (the end of a paragraph).
_PARAGRAPH_CODE_SPAN = re.compile(r"(`+)((?:(?!\n[ \t]*\n).)+?)\1", re.DOTALL)
_ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)"
)
_REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
_HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.IGNORECASE)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:|^//")
_LINK_TEXT = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_HTML_TAG = re.compile(r"<[^>]+>")
_EMPHASIS = re.compile(r"(?<![\w])_(.+?)_(?![\w])")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, numbered from 1."""
    lines: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        opening = _FENCE.match(line)
        if fence is None and opening:
            fence = opening.group(1)
        elif fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
        else:
            lines.append((number, line))
    return lines


def heading_text(markdown: str) -> str:
    """A heading's text as GitHub renders it: code spans kept as written, links as their
    text, HTML tags and emphasis markers dropped."""
    parts: list[str] = []
    position = 0
    for span in _CODE_SPAN.finditer(markdown):
        parts.append(_plain(markdown[position : span.start()]))
        parts.append(span.group(2).strip())
        position = span.end()
    parts.append(_plain(markdown[position:]))
    return "".join(parts).strip()


def _plain(markdown: str) -> str:
    text = _LINK_TEXT.sub(r"\1", markdown)
    text = _HTML_TAG.sub("", text)
    text = _EMPHASIS.sub(r"\1", text)
    return text.replace("*", "")


def slug(text: str) -> str:
    """GitHub's anchor for a heading's text: lower case, every character but letters,
    digits, `_`, `-` and spaces removed, spaces as `-`."""
    kept = "".join(c for c in text.lower() if c.isalnum() or c in "_- ")
    return kept.replace(" ", "-")


def heading_anchors(text: str) -> set[str]:
    """Every `#anchor` a markdown page has: its headings' slugs (a repeated one gets `-1`,
    `-2`, ... as on GitHub) and explicit HTML anchors."""
    occurrences: dict[str, int] = {}
    anchors: set[str] = set()
    previous = ""
    for _, line in prose_lines(text):
        atx = _ATX_HEADING.match(line)
        if atx:
            title = atx.group(2) or ""
        elif _SETEXT_UNDERLINE.match(line) and _is_setext_title(previous):
            title = previous.strip()
        else:
            title = None
        if title is not None:
            base = slug(heading_text(title))
            anchor = base
            while anchor in occurrences:
                occurrences[base] += 1
                anchor = f"{base}-{occurrences[base]}"
            occurrences[anchor] = 0
            anchors.add(anchor)
        anchors.update(_HTML_ANCHOR.findall(line))
        previous = "" if atx else line
    return anchors


def _is_setext_title(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith(("|", "-", "*", "+", ">", "#"))


def links(text: str) -> list[tuple[int, str]]:
    """Every link destination of a page (inline links, images and reference definitions)
    outside code, with the number of the line it starts on. A link's text may run over
    several lines, as may a code span within a paragraph."""
    prose = dict(prose_lines(text))
    lines = [prose.get(number, "") for number in range(1, len(text.splitlines()) + 1)]
    # Code spans blanked out, keeping every line break (and so the line numbers).
    blanked = _PARAGRAPH_CODE_SPAN.sub(_blank, "\n".join(lines))
    found = [
        (blanked.count("\n", 0, match.start()) + 1, match.group(1))
        for match in _INLINE_LINK.finditer(blanked)
    ]
    for number, line in enumerate(blanked.split("\n"), start=1):
        definition = _REFERENCE_DEFINITION.match(line)
        if definition:
            found.append((number, definition.group(1)))
    # In the page's order (a stable sort keeps a line's links in order).
    found.sort(key=lambda link: link[0])
    return [(number, d.removeprefix("<").removesuffix(">")) for number, d in found]


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def link_problems(pages: Sequence[Path], root: Path) -> list[str]:
    """One line per relative link of `pages` to a missing file, or to an anchor that is not
    a heading of its page; `root` is the repository (a link starting with `/`)."""
    problems: list[str] = []
    anchors_of: dict[Path, set[str]] = {}
    for page in pages:
        for number, destination in links(page.read_text(encoding="utf-8")):
            if _SCHEME.match(destination):
                continue
            path_part, _, anchor = destination.partition("#")
            path_part = unquote(path_part)
            if not path_part:
                target = page
            elif path_part.startswith("/"):
                target = root / path_part.lstrip("/")
            else:
                target = page.parent / path_part
            where = f"{_shown(page, root)}:{number}: link `{destination}`"
            if not target.exists():
                problems.append(f"{where}: {_shown(target, root)} does not exist")
                continue
            if not anchor or target.suffix.lower() != ".md" or not target.is_file():
                continue
            resolved = target.resolve()
            if resolved not in anchors_of:
                anchors_of[resolved] = heading_anchors(target.read_text(encoding="utf-8"))
            if unquote(anchor) not in anchors_of[resolved]:
                problems.append(
                    f"{where}: no heading of {_shown(target, root)} has the anchor `#{anchor}`"
                )
    return problems


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def key_problems(pages: Sequence[Path], keys: Mapping[str, Iterable[str]]) -> list[str]:
    """One line per key (by kind) that no page mentions as `key`, in backticks."""
    text = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    return [
        f"{kind} `{key}` is not mentioned (as `{key}`) in README.md or docs/"
        for kind, names in keys.items()
        for key in sorted(names)
        if f"`{key}`" not in text
    ]


def profile_class_keys() -> set[str]:
    """Every key the profile takes: the profile class's fields, dbt-spark's inherited ones
    included, and the catalog keys."""
    from dbt.adapters.s3tables.credentials import S3TablesCredentials

    return {f.name for f in fields(S3TablesCredentials)}


def pinned_iceberg_version() -> str:
    from dbt.adapters.s3tables.catalogs.jars import ICEBERG_VERSION

    return ICEBERG_VERSION


_TABLE_ROW_KEYS = re.compile(r"^\| ([^|]+) \|", re.MULTILINE)
_RUN_OPERATION = re.compile(r"\bdbt run-operation\s+([A-Za-z_]\w*)")
_MAKE_COMMAND = re.compile(r"`make ([a-z][\w-]*)|^make ([a-z][\w-]*)", re.MULTILINE)
_CONSOLE_SCRIPT = re.compile(r"\b(dbt-s3tables-[a-z]+)\b")
_MACRO = re.compile(r"{%-?\s*macro\s+(\w+)")
_MAKE_TARGET = re.compile(r"^([a-zA-Z][\w-]*)\s*:(?!=)", re.MULTILINE)
_ICEBERG_JAR = re.compile(r"\b(iceberg-(?:spark-runtime-[\w.]+|aws-bundle)):(\d+\.\d+\.\d+)")
_DEVELOPMENT_LOG = re.compile(r"\bissue \d+\b|\bthe issue's\b|\bthis session\b", re.IGNORECASE)


def code_problems(
    pages: Sequence[Path], root: Path, profile_keys: set[str], iceberg_version: str
) -> list[str]:
    """What the docs name that the code does not have (see the module docstring)."""
    problems: list[str] = []
    macros = {
        name
        for path in (root / "dbt" / "include").rglob("*.sql")
        for name in _MACRO.findall(path.read_text(encoding="utf-8"))
    }
    makefile, pyproject = root / "Makefile", root / "pyproject.toml"
    targets = (
        set(_MAKE_TARGET.findall(makefile.read_text(encoding="utf-8")))
        if makefile.exists()
        else set()
    )
    project = (
        tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        if pyproject.exists()
        else {}
    )
    # The commands, and the distribution's own name (which is no command).
    scripts = set(project.get("scripts", {})) | {project.get("name", "")}
    for page in pages:
        text = page.read_text(encoding="utf-8")
        shown = _shown(page, root)
        if page.name == "profile.md":
            for cell in _TABLE_ROW_KEYS.findall(text):
                for key in re.findall(r"`([a-z_]+)`", cell):
                    if key not in profile_keys:
                        problems.append(f"{shown}: profile key `{key}` is not a profile key")
        for name in sorted(set(_RUN_OPERATION.findall(text)) - macros):
            problems.append(f"{shown}: `run-operation {name}` names no macro of the adapter")
        for target in sorted({a or b for a, b in _MAKE_COMMAND.findall(text)} - targets):
            problems.append(f"{shown}: `make {target}` is no target of the Makefile")
        for script in sorted(set(_CONSOLE_SCRIPT.findall(text)) - scripts):
            problems.append(f"{shown}: `{script}` is no command the adapter installs")
        for jar, version in sorted(set(_ICEBERG_JAR.findall(text))):
            if version != iceberg_version:
                problems.append(
                    f"{shown}: `{jar}:{version}` disagrees with the pinned Iceberg "
                    f"{iceberg_version}"
                )
        for number, line in enumerate(text.splitlines(), 1):
            found = _DEVELOPMENT_LOG.search(line)
            if found:
                problems.append(f"{shown}:{number}: development-log words: `{found.group(0)}`")
    return problems


# The macro files whose `s3tables_*` macros are meant for `dbt run-operation`; the others
# are called by materializations (and dispatch implementations are `s3tables__*`).
OPERATION_MACRO_FILES = ("catalog_ddl.sql", "maintenance.sql")
_OPERATION_MACRO = re.compile(r"{%-?\s*macro\s+(s3tables_[a-z]\w*)")


def undocumented_problems(pages: Sequence[Path], root: Path) -> list[str]:
    """What the code offers that no page names: an operation macro, a console script."""
    text = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    documented = set(_RUN_OPERATION.findall(text))
    problems = [
        f"operation `{name}` ({path.name}) is named after `dbt run-operation` on no page"
        for path in sorted((root / "dbt" / "include").rglob("*.sql"))
        if path.name in OPERATION_MACRO_FILES
        for name in _OPERATION_MACRO.findall(path.read_text(encoding="utf-8"))
        if name not in documented
    ]
    pyproject = root / "pyproject.toml"
    if pyproject.exists():
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        problems += [
            f"command `{script}` is mentioned on no page"
            for script in sorted(project.get("scripts", {}))
            if script not in text
        ]
    return problems


# A package named with a version; its lowercase name is its requirement's name.
_PACKAGE_VERSION = re.compile(
    r"(?<![/\w-])(Python|PySpark|pyspark|dbt-core|dbt-spark|PyIceberg|pyiceberg|dbt-tests-adapter)"
    r"[ `]+(\d+\.\d+)(?:\.(?:\d+|x))?\+?(?![\d.]*\s*(?:s|ms|MB|GB|x)\b)(?!\.\d)"
)


def requirements(pyproject: Path) -> dict[str, tuple[list[str], list[str]]]:
    """Each package's requirements, as (the base ones, the extras' ones); Python's is
    `requires-python`."""
    from packaging.requirements import Requirement

    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    found: dict[str, tuple[list[str], list[str]]] = {
        "python": ([project.get("requires-python", "")], [])
    }
    extras = [line for extra in project.get("optional-dependencies", {}).values() for line in extra]
    for lines, side in ((project.get("dependencies", []), 0), (extras, 1)):
        for line in lines:
            requirement = Requirement(line)
            found.setdefault(requirement.name.lower(), ([], []))[side].append(
                str(requirement.specifier)
            )
    return found


def pin_problems(pages: Sequence[Path], root: Path, pyproject: Path) -> list[str]:
    """A package named with a version its requirements do not allow (X.Y read as X.Y.0):
    every base requirement must allow it, and one extra naming it (a Spark line) must too."""
    from packaging.specifiers import SpecifierSet

    if not pyproject.exists():
        return []
    pins = requirements(pyproject)
    problems: list[str] = []
    for page in pages:
        for number, line in prose_lines(page.read_text(encoding="utf-8")):
            for package, version in _PACKAGE_VERSION.findall(line):
                base, extras = pins.get(package.lower(), ([], []))
                allowed = all(SpecifierSet(spec).contains(version) for spec in base) and (
                    not extras or any(SpecifierSet(spec).contains(version) for spec in extras)
                )
                if not allowed:
                    problems.append(
                        f"{_shown(page, root)}:{number}: `{package} {version}` is outside "
                        f"the requirement {' and '.join(base + extras)}"
                    )
    return problems


def doc_pages(root: Path) -> list[Path]:
    """README.md and every page of docs/."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    root = Path(arguments[0]) if arguments else Path(__file__).resolve().parents[1]
    pages = doc_pages(root)
    problems = (
        link_problems(pages, root)
        + key_problems(pages, accepted_keys())
        + code_problems(pages, root, profile_class_keys(), pinned_iceberg_version())
        + undocumented_problems(pages, root)
        + pin_problems(pages, root, root / "pyproject.toml")
    )
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
