"""A small client of Toxiproxy's HTTP API, and pointing a backend URL at a proxy.

Toxics (https://github.com/Shopify/toxiproxy#toxics) act on one direction of a proxied connection:
``downstream`` is server to client, ``upstream`` client to server.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from persist_spi.errors import InputError, LochkitError


class ToxiproxyError(LochkitError):
    pass


@dataclass(frozen=True)
class Toxic:
    """One toxic: what a scenario adds for a few seconds."""

    name: str
    type: str
    attributes: dict[str, int] = field(default_factory=dict)
    stream: str = "downstream"
    toxicity: float = 1.0

    def describe(self) -> str:
        attrs = ", ".join(f"{k}={v}" for k, v in self.attributes.items())
        return f"{self.type} {self.stream} ({attrs})" if attrs else f"{self.type} {self.stream}"


class ToxiproxyClient:
    def __init__(self, api: str) -> None:
        self.api = api.rstrip("/")

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.api}{path}", data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                raw = response.read()
        except urllib.error.HTTPError as e:
            answer = e.read().decode(errors="replace")
            raise ToxiproxyError(f"Toxiproxy {method} {path}: HTTP {e.code} {answer}") from None
        except OSError as e:
            raise ToxiproxyError(f"Toxiproxy at {self.api} does not answer ({e})") from None
        return json.loads(raw) if raw else None

    def create_proxy(self, name: str, listen_port: int, upstream: str) -> None:
        listen = f"127.0.0.1:{listen_port}"
        self._call(
            "POST", "/proxies", {"name": name, "listen": listen, "upstream": upstream, "enabled": True}
        )

    def delete_proxy(self, name: str) -> None:
        self._call("DELETE", f"/proxies/{name}")

    def set_enabled(self, name: str, enabled: bool) -> None:
        self._call("POST", f"/proxies/{name}", {"enabled": enabled})

    def add_toxic(self, proxy: str, toxic: Toxic) -> None:
        self._call(
            "POST",
            f"/proxies/{proxy}/toxics",
            {
                "name": toxic.name,
                "type": toxic.type,
                "stream": toxic.stream,
                "toxicity": toxic.toxicity,
                "attributes": toxic.attributes,
            },
        )

    def remove_toxic(self, proxy: str, name: str) -> None:
        self._call("DELETE", f"/proxies/{proxy}/toxics/{name}")

    def reset(self) -> None:
        """Every proxy enabled, every toxic removed."""
        self._call("POST", "/reset")


def host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    if parts.hostname is None or parts.port is None:
        raise InputError("the URL names no host and port")
    return parts.hostname, parts.port


def via_proxy(url: str, proxy_port: int) -> str:
    """``url`` with its host and port replaced by the proxy's (credentials and options kept)."""
    parts = urlsplit(url)
    userinfo, at, _ = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"{userinfo}{at}127.0.0.1:{proxy_port}"))
