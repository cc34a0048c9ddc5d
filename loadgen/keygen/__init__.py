"""Nessie's key-pattern grammar (the content generator's ``--key-pattern``).

A pattern is literals and functions: ``$$`` is a literal ``$``, ``${name,arg,...}`` a function.
Functions: ``uuid``, ``int,B``, ``string,L``, ``seq,O``, ``every,N,<function...>``,
``prob,P,<function...>``; higher-order functions take their inner function from the following
comma-separated items (``${every,5,seq,20}``). Each function is a stateful generator; all draw from
one random generator, seeded for reproducible keys. Parse errors name the column.
"""

from loadgen.keygen.generator import KeyGenerator, KeyPatternError

__all__ = ["KeyGenerator", "KeyPatternError"]
