"""Turning one fuzzer input into several structured values (a name, an id, a number...).

Engine-neutral (atheris has its own data provider, Hypothesis and the regression tests only have
bytes): every target takes plain ``bytes`` and reads what it needs from them here.
"""

from __future__ import annotations


class ByteReader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    @property
    def remaining(self) -> int:
        return len(self.data) - self.pos

    def byte(self) -> int:
        if self.pos >= len(self.data):
            return 0
        value = self.data[self.pos]
        self.pos += 1
        return value

    def flag(self) -> bool:
        return bool(self.byte() & 1)

    def integer(self, size: int = 8) -> int:
        chunk = self.take(size)
        return int.from_bytes(chunk, "little", signed=True) if chunk else 0

    def take(self, count: int) -> bytes:
        chunk = self.data[self.pos : self.pos + max(0, count)]
        self.pos += len(chunk)
        return chunk

    def sized(self, limit: int = 255) -> bytes:
        """A length byte (up to ``limit``), then that many bytes."""
        return self.take(min(self.byte(), limit))

    def text(self, limit: int = 255) -> str:
        return self.sized(limit).decode("utf-8", "replace")

    def rest(self) -> bytes:
        return self.take(self.remaining)

    def choice(self, options: list[str] | tuple[str, ...]) -> str:
        return options[self.byte() % len(options)]
