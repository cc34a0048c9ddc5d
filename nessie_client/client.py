"""A Nessie REST API v2 client that implements :class:`VersionStoreApi`.

It takes and returns the version store's own model types and raises its exceptions, so code written
against the in-process store runs unchanged against any Nessie server. JSON shapes live in
:mod:`persist_spi.versionstore.nessie_json`. HTTP goes through one keep-alive ``requests.Session``
and sends ``Nessie-Client-Spec: 2`` (without it, a server leaves conflict details out of errors).

Where the two differ (documented in ``docs/nessie-rest-client.md``):

- paging tokens: an entry's or a diff's token resumes the listing at that key (inclusive), like the
  in-process store's; a log entry's token is its commit hash, like the in-process store's;
- tags with a message, headers or a signature cannot be created over REST (InputError, a ValueError);
- a commit's ``attempts`` is always 1: a server's own retries are invisible to its clients;
- a ``validator`` runs on the client before the request is sent.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final
from urllib.parse import quote

import requests

from nessie_client.credentials import unauthorized, with_token
from persist_spi.errors import InputError, Unreachable
from persist_spi.headers import CommitHeaders
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.versionstore import nessie_json as nj
from persist_spi.versionstore.api import (
    MergeValidator,
    RefOrHash,
    Validator,
    VersionStoreApi,
    check_key_range,
)
from persist_spi.versionstore.commit_specs import RelativeSpec
from persist_spi.versionstore.content import Content, ContentKey
from persist_spi.versionstore.errors import MergeConflictError, ReferenceNotFoundError
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import MergeBehavior, MergeKeyBehavior, Operation
from persist_spi.versionstore.path_string import to_path_string_escaped
from persist_spi.versionstore.refs import DETACHED, NamedRef, ReferenceAssigned, ReferenceInfo, RefKind
from persist_spi.versionstore.results import (
    CommitResult,
    ContentsAt,
    Diff,
    KeyEntry,
    LogEntry,
    MergeResult,
    ReferenceHistory,
    ReferenceMetadata,
)

DEFAULT_URI: Final = "http://localhost:19120/api/v2"
#: Entries per page asked of the server (its own default applies when None).
PAGE_SIZE: Final = 250
#: ``-o/--nessie-option`` names this client understands (Nessie's client property names).
OPTIONS: Final = (
    "nessie.authentication.type",
    "nessie.authentication.token",
    "nessie.authentication.username",
    "nessie.authentication.password",
    "nessie.http.timeout",
)
_KEY_TOKEN: Final = "key:"


class NessieUnreachable(ConnectionError, Unreachable):
    """No Nessie server answered at the URI (names the URI and what to check)."""


class NessieRestClient:
    """A :class:`VersionStoreApi` over HTTP. ``on_request(seconds)`` is told how long each HTTP
    round trip took, so a caller can separate the server's time from the client's own."""

    def __init__(
        self,
        uri: str = DEFAULT_URI,
        *,
        options: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        on_request: Callable[[float], None] | None = None,
    ) -> None:
        self.uri = uri.rstrip("/")
        options = with_token(options or {})
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise InputError(
                f"Unknown Nessie client option(s) {', '.join(unknown)}; supported: {', '.join(OPTIONS)}"
            )
        try:
            self.timeout = float(options.get("nessie.http.timeout", 0)) / 1000 or timeout
        except ValueError:
            raise InputError(
                f"nessie.http.timeout '{options['nessie.http.timeout']}' is not a number of milliseconds"
            ) from None
        self.on_request = on_request
        self.session = requests.Session()
        self.session.headers.update({"Nessie-Client-Spec": "2", "Accept": "application/json"})
        auth = options.get("nessie.authentication.type", "NONE").upper()
        if auth == "BEARER":
            self.session.headers["Authorization"] = f"Bearer {options.get('nessie.authentication.token', '')}"
        elif auth == "BASIC":
            self.session.auth = (
                options.get("nessie.authentication.username", ""),
                options.get("nessie.authentication.password", ""),
            )
        elif auth != "NONE":
            raise InputError(f"Unsupported nessie.authentication.type '{auth}': use NONE, BEARER or BASIC")
        self._config: dict[str, Any] | None = None

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> NessieRestClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- HTTP ------------------------------------------------------------------------------------

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
    ) -> Any:
        url = self.uri + path
        started = time.perf_counter()
        try:
            response = self.session.request(method, url, params=params, json=body, timeout=self.timeout)
        except requests.ConnectionError as e:
            raise NessieUnreachable(
                f"No Nessie server answers at {self.uri} ({type(e).__name__}). Check the URI (it ends "
                "in /api/v2) and that the server is running, or let lochkit start one with "
                "--backend nessie"
            ) from None
        except requests.Timeout:
            raise NessieUnreachable(
                f"Nessie at {self.uri} did not answer {method} {path} within {self.timeout:.0f} s"
            ) from None
        finally:
            if self.on_request is not None:
                self.on_request(time.perf_counter() - started)
        if response.status_code == 401:
            raise unauthorized(
                self.uri, "Authorization" in self.session.headers or self.session.auth is not None
            )
        if response.status_code >= 400:
            try:
                doc = response.json()
            except ValueError:
                doc = {"message": response.text[:300] or response.reason}
            raise nj.error_from_json(response.status_code, doc)
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise NessieUnreachable(
                f"{url} answered HTTP {response.status_code} with something other than JSON; is this "
                "Nessie's REST API v2 (the URI ends in /api/v2)?"
            ) from None

    def config(self) -> dict[str, Any]:
        if self._config is None:
            self._config = dict(self._request("GET", "/config"))
        return self._config

    def server_version(self) -> str:
        """What the server says it is (spec version), e.g. "Nessie REST API spec 2.2.0"."""
        spec = self.config().get("specVersion")
        return f"Nessie REST API spec {spec}" if spec else "Nessie REST API v2"

    # --- addressing ------------------------------------------------------------------------------

    @staticmethod
    def _ref_path(name: str | None, hash_: ObjId | None = None) -> str:
        spec = name or ""
        if hash_ is not None:
            spec += f"@{hash_}"
        elif "/" in spec:
            spec += "@"  # a name holding '/' must be terminated, as Nessie's clients do
        return quote(spec, safe="@")

    def _where(self, where: RefOrHash) -> str:
        if isinstance(where, NamedRef):
            return self._ref_path(where.name)
        return self._ref_path(None, where)

    # --- references ------------------------------------------------------------------------------

    def default_branch(self) -> str:
        return str(self.config().get("defaultBranch") or "main")

    def named_ref(self, name: str) -> ReferenceInfo:
        doc = self._request("GET", f"/trees/{self._ref_path(name)}")
        return nj.reference_from_json(doc["reference"])

    def reference(self, ref: NamedRef) -> ReferenceInfo:
        info = self.named_ref(ref.name)
        if info.named_ref.kind is not ref.kind:
            raise ReferenceNotFoundError(f"Named reference '{ref.name}' not found")
        return info

    def list_references(
        self, kinds: Sequence[RefKind] = (RefKind.BRANCH, RefKind.TAG)
    ) -> Iterator[ReferenceInfo]:
        wanted = set(kinds)
        token: str | None = None
        while True:
            params: dict[str, Any] = {"max-records": PAGE_SIZE}
            if token:
                params["page-token"] = token
            doc = self._request("GET", "/trees", params=params)
            for each in doc.get("references") or []:
                info = nj.reference_from_json(each)
                if info.named_ref.kind in wanted:
                    yield info
            token = doc.get("token")
            if not doc.get("hasMore") or not token:
                return

    def create_reference(
        self,
        ref: NamedRef,
        target: ObjId | None = None,
        *,
        message: str | None = None,
        headers: CommitHeaders | None = None,
        signature: bytes | None = None,
    ) -> ReferenceInfo:
        if message is not None or headers is not None or signature is not None:
            raise InputError("Nessie's REST API cannot create a tag with a message, headers or a signature")
        target = EMPTY_OBJ_ID if target is None else target
        # The body names an existing source reference; the server takes the hash from it and only
        # checks that the name exists, so the default branch serves for any target.
        source = {"type": "BRANCH", "name": self.default_branch(), "hash": str(target)}
        doc = self._request(
            "POST",
            "/trees",
            params={"name": ref.name, "type": nj.ref_type_name(ref.kind)},
            body=source,
        )
        return nj.reference_from_json(doc["reference"])

    def delete_reference(self, ref: NamedRef, expected_hash: ObjId) -> ObjId:
        self._request(
            "DELETE",
            f"/trees/{self._ref_path(ref.name, expected_hash)}",
            params={"type": nj.ref_type_name(ref.kind)},
        )
        return expected_hash

    def assign(self, ref: NamedRef, expected_hash: ObjId | None, target: ObjId) -> ReferenceAssigned:
        expected = expected_hash if expected_hash is not None else self.reference(ref).hash
        body = {"type": "BRANCH", "name": self.default_branch(), "hash": str(target)}
        self._request(
            "PUT",
            f"/trees/{self._ref_path(ref.name, expected)}",
            params={"type": nj.ref_type_name(ref.kind)},
            body=body,
        )
        return ReferenceAssigned(ref, expected, target)

    def hash_on_reference(
        self, ref: NamedRef | None, hash_: ObjId | None, relative: Sequence[RelativeSpec] = ()
    ) -> ObjId:
        start = self._hash_on_reference(ref, hash_)
        # One lookup per request: Nessie 0.99 applies only the last of several lookups written
        # in one path element.
        for spec in relative:
            if start == EMPTY_OBJ_ID:
                break
            doc = self._request(
                "GET", f"/trees/{quote(f'@{start}{spec}', safe='@')}/history", params={"max-records": 1}
            )
            entries = doc.get("logEntries") or []
            start = nj.log_entry_from_json(entries[0]).hash if entries else EMPTY_OBJ_ID
        return start

    def _hash_on_reference(self, ref: NamedRef | None, hash_: ObjId | None) -> ObjId:
        if ref is None:
            if hash_ is None:
                raise InputError("Give a reference, a hash, or both")
            for entry in self.get_commits(hash_):
                return entry.hash
            raise ReferenceNotFoundError(f"Commit '{hash_}' not found")
        head = self.reference(ref).hash
        if hash_ is None or hash_ in (head, EMPTY_OBJ_ID):
            return head if hash_ is None else hash_
        # Nessie does not check that a hash is on the reference when reading at ref@hash; the
        # contract does, so walk the reference's history.
        for entry in self.get_commits(ref):
            if entry.hash == hash_:
                return hash_
        raise ReferenceNotFoundError(f"Could not find commit '{hash_}' in reference '{ref.name}'.")

    def reference_metadata(self, ref: NamedRef, base: NamedRef | None = None) -> ReferenceMetadata:
        if base is not None and base != NamedRef(self.default_branch(), RefKind.BRANCH):
            raise InputError(
                f"Nessie's REST API relates references to its default branch "
                f"'{self.default_branch()}' only, not to '{base.name}'"
            )
        doc = self._request("GET", f"/trees/{self._ref_path(ref.name)}", params={"fetch": "ALL"})
        found = doc["reference"]
        if nj.named_ref_from_json(found) != ref:
            raise ReferenceNotFoundError(f"Named reference '{ref.name}' not found")
        return nj.reference_metadata_from_json(found.get("metadata"))

    def reference_history(self, ref: NamedRef, head_commits_to_scan: int | None = None) -> ReferenceHistory:
        params = {"scan-commits": head_commits_to_scan} if head_commits_to_scan is not None else None
        doc = self._request("GET", f"/trees/{self._ref_path(ref.name)}/recent-changes", params=params)
        history = nj.reference_history_from_json(doc)
        if history.reference != ref:
            raise ReferenceNotFoundError(f"Named reference '{ref.name}' not found")
        return history

    # --- commits ---------------------------------------------------------------------------------

    def commit(
        self,
        branch: NamedRef,
        expected_hash: ObjId | None,
        meta: CommitMeta,
        operations: Sequence[Operation],
        validator: Validator | None = None,
    ) -> CommitResult:
        if validator is not None:
            validator(operations)
        expected = expected_hash if expected_hash is not None else self.reference(branch).hash
        doc = self._request(
            "POST",
            f"/trees/{self._ref_path(branch.name, expected)}/history/commit",
            body=nj.commit_request_to_json(meta, operations),
        )
        answered = nj.commit_result_from_json(doc, expected)
        return _CommitResultOverRest(
            answered.hash, None, answered.added_content_ids, answered.attempts, self._parent_of
        )

    def _parent_of(self, commit: ObjId) -> ObjId:
        for entry in self.get_commits(commit):
            return entry.parent
        raise ReferenceNotFoundError(f"Commit '{commit}' not found")

    # --- reads -----------------------------------------------------------------------------------

    def get_contents(self, where: RefOrHash, keys: Sequence[ContentKey]) -> ContentsAt:
        if not keys:
            at = self._resolve(where)
            return ContentsAt(at, {}, where if isinstance(where, NamedRef) else None)
        doc = self._request(
            "POST",
            f"/trees/{self._where(where)}/contents",
            body={"requestedKeys": [nj.key_to_json(k) for k in keys]},
        )
        contents = {
            nj.key_from_json(c["key"]): nj.content_from_json(c["content"]) for c in doc.get("contents") or []
        }
        effective = doc.get("effectiveReference") or {}
        at = nj.hash_from_json(effective["hash"]) if effective.get("hash") else self._resolve(where)
        return ContentsAt(at, contents, where if isinstance(where, NamedRef) else None)

    def _resolve(self, where: RefOrHash) -> ObjId:
        return self.hash_on_reference(where, None) if isinstance(where, NamedRef) else where

    def get_values(self, where: RefOrHash, keys: Sequence[ContentKey]) -> dict[ContentKey, Content]:
        return self.get_contents(where, keys).contents

    def get_value(self, where: RefOrHash, key: ContentKey) -> Content | None:
        return self.get_values(where, [key]).get(key)

    def get_entries(
        self,
        where: RefOrHash,
        *,
        min_key: ContentKey | None = None,
        max_key: ContentKey | None = None,
        prefix_key: ContentKey | None = None,
        key_filter: Callable[[ContentKey], bool] | None = None,
        paging_token: str | None = None,
        with_content: bool = False,
    ) -> Iterator[KeyEntry]:
        check_key_range(min_key, max_key, prefix_key)
        params: dict[str, Any] = {"content": str(with_content).lower()}
        params.update(_key_range_params(min_key, max_key, prefix_key, paging_token))
        for doc in self._pages(f"/trees/{self._where(where)}/entries", params, "entries"):
            entry = nj.entry_from_json(doc)
            if prefix_key is not None and paging_token and not entry.key.starts_with(prefix_key):
                continue
            if key_filter is None or key_filter(entry.key):
                yield KeyEntry(
                    entry.key, entry.payload, entry.content_id, entry.content, _key_token(entry.key)
                )

    def get_commits(
        self, where: RefOrHash, *, paging_token: str | None = None, with_operations: bool = False
    ) -> Iterator[LogEntry]:
        path = f"/trees/{self._where(where)}/history"
        if paging_token:
            path = f"/trees/{self._ref_path(None, ObjId.from_hex(paging_token))}/history"
        params: dict[str, Any] = {"fetch": "ALL" if with_operations else "MINIMAL"}
        for doc in self._pages(path, params, "logEntries"):
            entry = nj.log_entry_from_json(doc)
            yield LogEntry(entry.hash, entry.parent, entry.meta, entry.operations, str(entry.hash))

    def get_diffs(
        self,
        from_: RefOrHash,
        to: RefOrHash,
        *,
        min_key: ContentKey | None = None,
        max_key: ContentKey | None = None,
        prefix_key: ContentKey | None = None,
        key_filter: Callable[[ContentKey], bool] | None = None,
        paging_token: str | None = None,
    ) -> Iterator[Diff]:
        check_key_range(min_key, max_key, prefix_key)
        params = _key_range_params(min_key, max_key, prefix_key, paging_token)
        path = f"/trees/{self._where(from_)}/diff/{self._where(to)}"
        for doc in self._pages(path, params, "diffs"):
            diff = nj.diff_from_json(doc)
            if prefix_key is not None and paging_token and not diff.key.starts_with(prefix_key):
                continue
            if key_filter is None or key_filter(diff.key):
                yield Diff(diff.key, diff.from_content, diff.to_content, _key_token(diff.key))

    def _pages(self, path: str, params: dict[str, Any], field: str) -> Iterator[Any]:
        params = {**params, "max-records": PAGE_SIZE}
        while True:
            doc = self._request("GET", path, params=params)
            yield from doc.get(field) or []
            token = doc.get("token")
            if not doc.get("hasMore") or not token:
                return
            params["page-token"] = token

    # --- merge and transplant --------------------------------------------------------------------

    def merge(
        self,
        source: RefOrHash,
        target: NamedRef,
        expected_hash: ObjId | None = None,
        *,
        source_hash: ObjId | None = None,
        default_behavior: MergeBehavior = MergeBehavior.NORMAL,
        key_behaviors: Sequence[MergeKeyBehavior] = (),
        dry_run: bool = False,
        meta: CommitMeta | None = None,
        raise_on_conflict: bool = True,
        validator: MergeValidator | None = None,
    ) -> MergeResult:
        if isinstance(source, NamedRef):
            from_name = source.name
            from_hash = self.hash_on_reference(source, source_hash)
        else:
            from_name, from_hash = DETACHED, source
        expected = expected_hash if expected_hash is not None else self.reference(target).hash
        body: dict[str, Any] = {
            "fromRefName": from_name,
            "fromHash": str(from_hash),
            "defaultKeyMergeMode": default_behavior.value,
            "keyMergeModes": [nj.merge_behavior_to_json(k) for k in key_behaviors],
            "isDryRun": dry_run,
            "isReturnConflictAsResult": True,
        }
        if meta is not None:
            body["commitMeta"] = nj.meta_to_json(meta)
        path = f"/trees/{self._ref_path(target.name, expected)}/history/merge"
        return _conflict_checked(self._merge_request(path, body, dry_run, validator), raise_on_conflict)

    def transplant(
        self,
        target: NamedRef,
        expected_hash: ObjId | None,
        sequence: Sequence[ObjId],
        *,
        default_behavior: MergeBehavior = MergeBehavior.NORMAL,
        key_behaviors: Sequence[MergeKeyBehavior] = (),
        dry_run: bool = False,
        raise_on_conflict: bool = True,
        message: str | None = None,
        validator: MergeValidator | None = None,
    ) -> MergeResult:
        if not sequence:
            raise InputError("No hashes to transplant")
        if message is not None and len(sequence) != 1:
            raise InputError(
                f"A message can replace the message of one transplanted commit, not of {len(sequence)}"
            )
        expected = expected_hash if expected_hash is not None else self.reference(target).hash
        body = {
            "fromRefName": target.name,  # Nessie only checks that the name exists
            "hashesToTransplant": [str(h) for h in sequence],
            "defaultKeyMergeMode": default_behavior.value,
            "keyMergeModes": [nj.merge_behavior_to_json(k) for k in key_behaviors],
            "isDryRun": dry_run,
            "isReturnConflictAsResult": True,
        }
        if message is not None:
            body["message"] = message
        path = f"/trees/{self._ref_path(target.name, expected)}/history/transplant"
        result = self._merge_request(path, body, dry_run, validator)
        if result.applied and result.resultant_target_hash is not None:
            # The answer names the new head only: the commits in between are the transplanted ones,
            # and those with a source commit's id were reused, not created (a fast-forward).
            reused = set(sequence)
            result.created_commits = [
                c
                for c in self._commits_since(result.resultant_target_hash, result.effective_target_hash)
                if c not in reused
            ]
        return _conflict_checked(result, raise_on_conflict)

    def _merge_request(
        self,
        path: str,
        body: dict[str, Any],
        dry_run: bool,
        validator: MergeValidator | None,
    ) -> MergeResult:
        """A merge or transplant request. A ``validator`` runs on the client, on the result of a
        dry run sent first: the server decides the details, so the client cannot see them sooner
        (unlike the store, where it runs inside the merge, nothing here keeps the target from moving
        between the two requests)."""
        if validator is not None:
            planned = nj.merge_result_from_json(
                self._request("POST", path, body={**body, "isDryRun": True}), True
            )
            validator(planned)
        return nj.merge_result_from_json(self._request("POST", path, body=body), dry_run)

    def _commits_since(self, head: ObjId, base: ObjId | None) -> list[ObjId]:
        """First-parent commits from ``base`` (exclusive) up to ``head``, oldest first."""
        created: list[ObjId] = []
        for entry in self.get_commits(head):
            if entry.hash == base:
                break
            created.append(entry.hash)
        return created[::-1]


class _CommitResultOverRest(CommitResult):
    """A commit result whose ``parent`` is asked of the server on first use.

    Nessie's commit response names the new commit but not its parent, which differs from the
    expected hash when the server rebased the commit onto a newer head. Reading the parent costs a
    request, which load runs measuring commits must not pay; so it is read only when used."""

    def __init__(
        self,
        hash_: ObjId,
        parent: ObjId | None,
        added: dict[ContentKey, str],
        attempts: int,
        load_parent: Callable[[ObjId], ObjId],
    ) -> None:
        self.__dict__["_load_parent"] = load_parent
        super().__init__(hash_, parent, added, attempts)  # type: ignore[arg-type]

    @property
    def parent(self) -> ObjId:
        if self.__dict__.get("_parent") is None:
            self.__dict__["_parent"] = self.__dict__["_load_parent"](self.hash)
        parent: ObjId = self.__dict__["_parent"]
        return parent

    @parent.setter
    def parent(self, value: ObjId | None) -> None:
        # The frozen dataclass's __init__ assigns every field through object.__setattr__.
        self.__dict__["_parent"] = value


def _conflict_checked(result: MergeResult, raise_on_conflict: bool) -> MergeResult:
    conflicted = sorted(k for k, d in result.details.items() if d.conflict is not None)
    if conflicted and raise_on_conflict:
        keys = ", ".join(f"'{k}'" for k in conflicted)
        raise MergeConflictError(f"The following keys have been changed in conflict: {keys}", result)
    return result


def _key_token(key: ContentKey) -> str:
    return _KEY_TOKEN + to_path_string_escaped(key.elements)


def _key_range_params(
    min_key: ContentKey | None, max_key: ContentKey | None, prefix_key: ContentKey | None, token: str | None
) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if prefix_key is not None:
        params["prefix-key"] = to_path_string_escaped(prefix_key.elements)
    if min_key is not None:
        params["min-key"] = to_path_string_escaped(min_key.elements)
    if max_key is not None:
        params["max-key"] = to_path_string_escaped(max_key.elements)
    if token:
        if not token.startswith(_KEY_TOKEN):
            raise InputError(f"Invalid paging token '{token}': expected a token a listing returned")
        # Resume at that key, inclusive: a minimum key (with the prefix checked on the client).
        params.pop("prefix-key", None)
        params["min-key"] = token[len(_KEY_TOKEN) :]
    return params


def as_api(client: NessieRestClient) -> VersionStoreApi:
    """The client as the shared contract (mypy checks here that it satisfies it)."""
    return client


__all__ = ["DEFAULT_URI", "NessieRestClient", "NessieUnreachable"]
