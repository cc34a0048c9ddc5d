"""The conformance suites. Classes here are named ``*Suite`` so that pytest does not collect them
where they are defined; :mod:`conformance.all` collects every one of them."""
