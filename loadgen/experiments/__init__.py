"""Experiments: load runs that answer one question and print a table (see ``docs/asymmetric.md``)."""
