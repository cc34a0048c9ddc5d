"""One request as the handlers see it: the store it runs against, its query parameters and body, and
how the references its path names resolve (Nessie's rules for which hash a read or write uses)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from persist_spi.errors import InputError
from persist_spi.ids import ObjId
from persist_spi.versionstore import nessie_json as nj
from persist_spi.versionstore.api import VersionStoreApi
from persist_spi.versionstore.commit_specs import parse_commit_spec
from persist_spi.versionstore.content import ContentKey
from persist_spi.versionstore.refs import NamedRef, ReferenceInfo
from rest_server.authorization import ALLOW_ALL, AccessChecker
from rest_server.errors import bad_request
from rest_server.principal import Principal
from rest_server.ref_path import RefAddress, parse_ref_element

#: The name Nessie gives a commit addressed by its hash alone.
DETACHED = "DETACHED"


@dataclass(frozen=True)
class ReadAt:
    """A resolved read: the commit, the reference it was reached through (None when detached), and
    Nessie's "effective reference" answer field."""

    hash: ObjId
    ref: NamedRef | None

    def effective(self) -> dict[str, Any]:
        if self.ref is None:
            return nj.detached_to_json(self.hash)
        return nj.reference_to_json(ReferenceInfo(self.ref, self.hash))

    @property
    def name(self) -> str:
        return self.ref.name if self.ref is not None else DETACHED


@dataclass
class Call:
    store: VersionStoreApi
    query: dict[str, list[str]]
    body: Any = None
    #: Who sent the request (None when the server runs without authentication).
    principal: Principal | None = None
    #: The authorization checks of this request (every check passes without rules).
    access: AccessChecker = ALLOW_ALL
    _default_branch: str | None = field(default=None, repr=False)

    # --- parameters ------------------------------------------------------------------------------

    def param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else None

    def params(self, name: str) -> list[str]:
        return list(self.query.get(name, []))

    def flag(self, name: str) -> bool:
        value = (self.param(name) or "").strip().lower()
        if value in ("", "false"):
            return False
        if value == "true":
            return True
        raise bad_request(f"Query parameter '{name}' must be true or false, not '{value}'")

    def int_param(self, name: str) -> int | None:
        raw = self.param(name)
        if raw is None or raw == "":
            return None
        try:
            return int(raw)
        except ValueError:
            raise bad_request(f"Query parameter '{name}' must be a whole number, not '{raw}'") from None

    def key_param(self, name: str) -> ContentKey | None:
        raw = self.param(name)
        return parse_key(raw, name) if raw else None

    def body_object(self, what: str) -> dict[str, Any]:
        if not isinstance(self.body, dict):
            raise bad_request(f"The request body must be a JSON object ({what})")
        return self.body

    # --- references ------------------------------------------------------------------------------

    @property
    def default_branch(self) -> str:
        if self._default_branch is None:
            self._default_branch = self.store.default_branch()
        return self._default_branch

    def address(self, element: str) -> RefAddress:
        return parse_ref_element(element, self.default_branch)

    def named(self, name: str) -> NamedRef:
        """A short name looked up as a branch, then as a tag (404 when neither exists)."""
        return self.store.named_ref(name).named_ref

    def read_at(self, address: RefAddress) -> ReadAt:
        """Where a read goes: a reference's head, a commit on it, or a detached commit, then any
        relative lookups."""
        spec = address.spec
        relative = spec.relative if spec is not None else ()
        if address.name is None or address.name == DETACHED:
            if spec is None or spec.hash is None:
                raise bad_request("A detached read needs a commit hash ('@HASH')")
            return ReadAt(self.store.hash_on_reference(None, spec.hash, relative), None)
        info = self.store.named_ref(address.name)
        if spec is None:
            return ReadAt(info.hash, info.named_ref)
        return ReadAt(self.store.hash_on_reference(info.named_ref, spec.hash, relative), info.named_ref)

    def write_target(self, address: RefAddress) -> tuple[NamedRef, ObjId]:
        """The reference a write changes and the hash it expects; writes must name both."""
        if address.name is None or address.name == DETACHED:
            raise bad_request("A write needs a branch or tag name, not a detached commit")
        if address.spec is None or address.spec.hash is None:
            raise bad_request(
                f"Expected hash must be provided: write '{address.name}@HASH' with the hash you expect "
                "the reference to be at"
            )
        ref = self.named(address.name)
        expected = address.spec.hash
        if address.spec.relative:
            expected = self.store.hash_on_reference(ref, expected, address.spec.relative)
        return ref, expected

    def source_hash(
        self, name: str | None, hash_text: str | None, what: str
    ) -> tuple[NamedRef | None, ObjId]:
        """A source named by a reference name (or DETACHED) and a hash, as merge, transplant,
        create and assign bodies give it; the hash may carry relative lookups."""
        if not hash_text:
            raise bad_request(f"{what} must be provided")
        try:
            spec = parse_commit_spec(hash_text)
        except InputError as e:
            raise bad_request(f"{what}: {e}") from None
        if spec.hash is None:
            raise bad_request(f"{what} must contain a starting commit ID")
        ref = None if not name or name == DETACHED else self.named(name)
        if spec.relative:
            return ref, self.store.hash_on_reference(None, spec.hash, spec.relative)
        return ref, spec.hash


def parse_key(raw: str, what: str) -> ContentKey:
    try:
        return ContentKey.from_path_string(raw)
    except InputError as e:
        raise bad_request(f"Invalid content key '{raw}' in '{what}': {e}") from None


__all__ = ["DETACHED", "Call", "ReadAt", "parse_key"]
