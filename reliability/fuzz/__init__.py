"""Fuzzing every decoder of bytes that come from a database or a user.

:mod:`reliability.fuzz.targets` lists the decoders and the errors each may raise (anything else is a
crash); :mod:`reliability.fuzz.engine` runs them under atheris (coverage-guided, libFuzzer) or, where
atheris is not installed, under Hypothesis. A new decoder joins with one line::

    register_decoder("key-patterns", parse_pattern_bytes, allowed=(PatternError,), description="...")

Crashes found become files under ``tests/fuzz_regressions/<target>/``, replayed by the unit tests.
"""
