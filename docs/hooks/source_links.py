"""MkDocs hook: a link from a documentation page to a file of the repository outside ``docs/``
(``[conformance/matrix.py](../conformance/matrix.py)``) works on GitHub, where the file is beside
the page, but the site has no such page. On the site such a link becomes the file's path, in code
font, so ``mkdocs build --strict`` accepts it and the reader still sees which file is meant."""

from __future__ import annotations

import posixpath
import re
from typing import Any

#: A Markdown link or image whose target is a relative path (no scheme, no anchor-only target).
_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]\n]+)\]\((?P<target>(?![a-z][a-z0-9+.-]*:|#|/)[^)\s]+)\)")


def _outside_docs(page_path: str, target: str) -> str | None:
    """The repository path ``target`` points to from the page at ``page_path`` (relative to the docs
    directory), if it lies outside the docs directory; else None."""
    path = target.split("#", 1)[0]
    if not path:
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(page_path), path))
    if not joined.startswith("../"):
        return None
    return joined.removeprefix("../")


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    def replace(match: re.Match[str]) -> str:
        source = _outside_docs(page.file.src_uri, match.group("target"))
        if source is None:
            return match.group(0)
        text = match.group("text")
        if source.rstrip("/").endswith(text.strip("`").rstrip("/")):
            return f"`{source}`"  # the link's text names the file: show its whole path
        return f"{text} (`{source}`)"

    return _LINK.sub(replace, markdown)
