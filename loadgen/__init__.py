"""Load generation and benchmarks: the commit-cost benchmark (``lochkit bench``) lives here; the
locust-based content generator joins it."""
