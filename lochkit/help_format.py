"""How every ``lochkit`` parser formats ``--help``: descriptions kept as written (plain text, no
markup), and each option's default shown where it has a meaningful one."""

from __future__ import annotations

import argparse


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Adds "(default: X)" to an option's help unless it has no default (None, False, suppressed)
    or its help already says it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            "%(default)" in text
            or "default:" in text
            or "(default" in text  # "(default 10)", "(default, as in Nessie's server)"
            or isinstance(action, argparse._StoreConstAction)  # a flag: its value says nothing
            or default is None
            or default is False
            or default == []
            or default is argparse.SUPPRESS
            or not action.option_strings
        ):
            return text
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"
