"""The nearest known key to a misspelt one, for "did you mean" hints (pure).

Profile keys and config keys are compared the same way: case and `-` / `_` do not count,
so `Unique-Key` is as near to `unique_key` as can be.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

# difflib's ratio below which two names are too different to suggest one for the other.
CUTOFF = 0.6


def normalized(key: str) -> str:
    return key.lower().replace("-", "_")


def nearest_key(key: str, known: Iterable[str]) -> str | None:
    """The known key most like `key`, or None when none is close."""
    by_form: dict[str, str] = {}
    for name in sorted(known):
        by_form.setdefault(normalized(name), name)
    matches = difflib.get_close_matches(normalized(key), by_form, n=1, cutoff=CUTOFF)
    return by_form[matches[0]] if matches else None


def did_you_mean(key: str, known: Iterable[str]) -> str:
    """` (did you mean `x`?)`, or nothing when no known key is close."""
    nearest = nearest_key(key, known)
    return f" (did you mean `{nearest}`?)" if nearest else ""
