"""Keeping passwords out of messages about malformed backend URLs.

In ``scheme://user:password@host/...`` the password ends at the last ``@``. When an unencoded
``/``, ``?``, ``#`` or ``@`` comes before that ``@``, a URL parser (``urllib`` included) may take part
of the password for the host, the path or the query, and any message quoting those would show it.
Adapters refuse such URLs before parsing, without echoing anything of them.
"""

from __future__ import annotations

from typing import Final

AMBIGUOUS_PROBLEM: Final = (
    "the URL has an '@' that does not end the user name and password, or they contain an "
    "unencoded '/', '?', '#' or '@'"
)
AMBIGUOUS_FIX: Final = (
    "Percent-encode special characters in the user name, password and option values, e.g. "
    "urllib.parse.quote(password, safe='')"
)


def ambiguous_credentials(url: str) -> bool:
    _, sep, rest = url.partition("://")
    userinfo, at, _ = (rest if sep else url).rpartition("@")
    return bool(at) and any(c in userinfo for c in "/?#@")


def unshown(url: str) -> str:
    """What messages show instead of an ambiguous URL."""
    scheme, sep, _ = url.partition("://")
    return f"{scheme}://(not shown: the URL is ambiguous)" if sep else "(not shown: the URL is ambiguous)"
