"""Capacity-planning reports: the storage inventory (:mod:`reports.inventory`, plain Python over the
Persist contract) and the PySpark job over load runs, inventories and conformance reports
(:mod:`reports.job`).

Nothing here imports PySpark at module level outside the Spark modules, so ``lochkit inventory``
works without a Java runtime.
"""
