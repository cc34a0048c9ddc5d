"""Example adapters that ship with the conformance kit: small, complete, written as a third party would.

The self-check (:mod:`conformance.mutants`) derives its broken adapters from them, so they must stay
correct: the whole suite runs against them in CI.
"""
