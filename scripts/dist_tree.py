"""The tree `make dist DOCS_URL=...` builds the wheels from: the repository's tracked files,
with the READMEs' relative links made absolute under DOCS_URL (a package index shows a
README without the files it links to) and `[project.urls]` added to both distributions.

    python scripts/dist_tree.py DESTINATION DOCS_URL

DOCS_URL is where the repository's files of this version can be read in a browser, e.g.
`https://github.com/acme/dbt-s3tables/blob/v0.1.0`.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

# A markdown link's destination that is a relative path (not a URL, not `#anchor` alone).
_RELATIVE_LINK = re.compile(r"(\]\()(?![A-Za-z][A-Za-z0-9+.-]*:|//|#|/)([^)\s]+)(\))")
READMES = ("README.md", "packaging/dbt-s3tables/README.md")
PYPROJECTS = ("pyproject.toml", "packaging/dbt-s3tables/pyproject.toml")


def absolute_links(markdown: str, folder: str, docs_url: str) -> str:
    """`markdown` (a file in `folder` of the repository) with its relative links made
    absolute under `docs_url`."""
    folder = folder.strip("/").removeprefix(".")
    prefix = f"{docs_url.rstrip('/')}/{folder + '/' if folder else ''}"
    return _RELATIVE_LINK.sub(lambda m: f"{m.group(1)}{prefix}{m.group(2)}{m.group(3)}", markdown)


def with_urls(pyproject: str, docs_url: str) -> str:
    """`pyproject` with a `[project.urls]` table pointing into `docs_url`."""
    if "[project.urls]" in pyproject:
        raise SystemExit("pyproject.toml already has [project.urls]: edit it there instead")
    base = docs_url.rstrip("/")
    return (
        f"{pyproject.rstrip()}\n\n[project.urls]\n"
        f'Documentation = "{base}/README.md"\n'
        f'Changelog = "{base}/CHANGELOG.md"\n'
    )


def main(argv: Sequence[str] | None = None) -> int:
    destination, docs_url = map(str, argv if argv is not None else sys.argv[1:])
    root, target = Path(__file__).resolve().parents[1], Path(destination)
    shutil.rmtree(target, ignore_errors=True)
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=root, check=True, capture_output=True, text=True
    ).stdout.split("\0")
    for name in filter(None, tracked):
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(root / name, target / name)  # a link (LICENSE) is copied as its file
    for name in READMES:
        path = target / name
        path.write_text(absolute_links(path.read_text(), str(Path(name).parent), docs_url))
    for name in PYPROJECTS:
        path = target / name
        path.write_text(with_urls(path.read_text(), docs_url))
    return 0


if __name__ == "__main__":
    sys.exit(main())
