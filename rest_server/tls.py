"""TLS for ``lochkit serve``: a certificate chain and its private key, as PEM files, checked before
the server listens so a wrong file is a clear error instead of a failed start."""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

from persist_spi.errors import InputError


@dataclass(frozen=True)
class Tls:
    """The server's certificate (chain) and private key files (PEM)."""

    cert: Path
    key: Path

    def check(self) -> None:
        """InputError naming the file and the fix when either cannot be read, or they do not form
        a usable certificate and key pair."""
        for option, path in (("--tls-cert", self.cert), ("--tls-key", self.key)):
            if not path.is_file():
                raise InputError(f"{option} {path}: no such file; give a PEM file")
        try:
            ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(self.cert, self.key)
        except ssl.SSLError as e:
            raise InputError(
                f"--tls-cert {self.cert} and --tls-key {self.key} are not a PEM certificate and its "
                f"private key ({e.reason or e.strerror}); give the certificate chain and the "
                "unencrypted key it was issued for"
            ) from None
        except OSError as e:
            raise InputError(f"--tls-cert / --tls-key: cannot read ({e.strerror})") from None


__all__ = ["Tls"]
