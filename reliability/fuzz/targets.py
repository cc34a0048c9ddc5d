"""The decoders under fuzzing, each with the only errors it may raise.

A target takes one fuzzer input (bytes), decodes it the way lochkit decodes what a database or a
user hands it, and checks what must hold of the result. Raising one of its ``allowed`` errors is a
clean rejection; any other exception (an ``IndexError`` from a truncated buffer, a ``TypeError``
from a value of the wrong shape, a failed property) is a crash.

To add a decoder::

    register_decoder("key-patterns", decode_key_pattern, allowed=(KeyPatternError,), description="...")
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from loadgen.keygen.generator import KeyPatternError
from persist_spi.codec import CorruptObject
from persist_spi.errors import BackendConfigError, LochkitError

Seeds = Callable[[], list[bytes]]


class PropertyViolated(AssertionError):
    """A decoded value broke a property its decoder promises (a round trip, a redaction...)."""


@dataclass(frozen=True)
class FuzzTarget:
    name: str
    run: Callable[[bytes], None]
    allowed: tuple[type[BaseException], ...]
    description: str
    seeds: Seeds

    def check(self, data: bytes) -> None:
        """Run one input; a clean rejection returns, a crash raises."""
        with contextlib.suppress(*self.allowed):
            self.run(data)


TARGETS: dict[str, FuzzTarget] = {}


def register_decoder(
    name: str,
    run: Callable[[bytes], None],
    *,
    allowed: tuple[type[BaseException], ...],
    description: str,
    seeds: Seeds = list,
) -> FuzzTarget:
    if name in TARGETS:
        raise ValueError(f"a fuzz target named {name!r} is registered already")
    TARGETS[name] = FuzzTarget(name, run, allowed, description, seeds)
    return TARGETS[name]


def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise PropertyViolated(what)


# --- objects as stored ----------------------------------------------------------------------------


def _object_types() -> list[str]:
    from conformance.samples import all_samples

    names = sorted({o.obj_type.short_name for o in all_samples()})
    return [*names, "zz-unknown"]


_OBJECT_TYPES: list[str] = []


def decode_object(data: bytes) -> None:
    from persist_spi.codec import DEFAULT_CODEC
    from persist_spi.ids import ObjId

    if not _OBJECT_TYPES:
        _OBJECT_TYPES.extend(_object_types())
    if not data:
        return
    type_name = _OBJECT_TYPES[data[0] % len(_OBJECT_TYPES)]
    token = "v1" if data[0] & 0x80 else None
    obj = DEFAULT_CODEC.decode(ObjId(b"\x11" * 32), type_name, data[1:], 7, token)
    _expect(obj.id == ObjId(b"\x11" * 32), "the decoded object lost its id")


def _object_seeds() -> list[bytes]:
    from conformance.samples import all_samples
    from persist_spi.codec import DEFAULT_CODEC

    if not _OBJECT_TYPES:
        _OBJECT_TYPES.extend(_object_types())
    seeds = []
    for obj in all_samples():
        encoded = DEFAULT_CODEC.encode(obj)
        seeds.append(bytes([_OBJECT_TYPES.index(encoded.type_short_name)]) + encoded.data)
    return seeds


# --- the index binary format ----------------------------------------------------------------------


def decode_index(data: bytes) -> None:
    """Decoding must reject or return a usable index. Keys out of code-point order are not
    rejected: Nessie writes UTF-16 order, which lochkit reads (``lochkit check`` reports an index
    in neither order)."""
    from persist_spi.indexes.store_index import deserialize_index

    index = deserialize_index(data)
    elements = list(index)
    _expect(len(elements) == index.element_count(), "iteration and element count disagree")
    _expect(index.serialize() == data, "the index does not serialise back to its bytes")
    for element in elements:
        element.op.serialized_size()


def _index_seeds() -> list[bytes]:
    import uuid

    from persist_spi.ids import ObjId
    from persist_spi.indexes.action import Action
    from persist_spi.indexes.elements import CommitOp, IndexElement
    from persist_spi.indexes.store_index import index_from_elements
    from persist_spi.keys import key

    seeds = []
    for count in (1, 3, 20):
        elements = [
            IndexElement(
                key("ns", f"table-{i:03}"),
                CommitOp(
                    list(Action)[i % 5],
                    1 + i % 3,
                    ObjId(bytes([i]) * 32) if i % 4 else None,
                    uuid.UUID(int=i),
                ),
            )
            for i in range(count)
        ]
        seeds.append(index_from_elements(elements).serialize())
    return seeds


# --- keys and path strings ------------------------------------------------------------------------


def decode_content_key(data: bytes) -> None:
    from persist_spi.keys import serialize_key
    from persist_spi.versionstore.content import ContentKey
    from persist_spi.versionstore.keymap import from_store_key, to_store_key

    content_key = ContentKey.parse(data.decode("utf-8", "replace"))
    store_key = to_store_key(content_key)
    _expect(from_store_key(store_key) == content_key, f"{content_key!r} does not survive its store key")
    serialize_key(store_key)


def decode_store_key(data: bytes) -> None:
    from persist_spi.versionstore.keymap import from_store_key, to_store_key

    found = from_store_key(data.decode("utf-8", "replace"))
    if found is not None:
        _expect(from_store_key(to_store_key(found)) == found, f"{found!r} does not survive a round trip")


# --- reference rows -------------------------------------------------------------------------------


def decode_reference_row(data: bytes) -> None:
    """A row as a database returns it, read through the core's conversion (and its history)."""
    from backends.inmemory.adapter import InMemoryAdapter
    from persist_spi.adapter import RefRow
    from persist_spi.adapter_persist import AdapterPersist
    from persist_spi.config import StoreConfig
    from reliability.fuzz.reader import ByteReader

    reader = ByteReader(data)
    name = reader.text() or "refs/heads/x"
    row = RefRow(
        name,
        reader.sized(300),
        reader.flag(),
        reader.integer(),
        reader.sized(300) if reader.flag() else None,
        reader.rest(),
    )
    adapter = InMemoryAdapter("fuzz")
    adapter.insert_ref("r", row)
    found = AdapterPersist(adapter, StoreConfig(repository_id="r")).fetch_references([name])[0]
    _expect(found is not None and found.name == name, "the row read back is not the row stored")


def _reference_row_seeds() -> list[bytes]:
    from persist_spi.codec import encode_previous_pointers
    from persist_spi.ids import ObjId
    from persist_spi.references import PreviousPointer

    name = b"refs/heads/main"
    history = encode_previous_pointers([PreviousPointer(ObjId(b"\x02" * 32), 1_700_000_000_000_000)])
    return [
        bytes([len(name)])
        + name
        + bytes([32])
        + b"\x01" * 32
        + b"\x00"
        + (1234).to_bytes(8, "little")
        + b"\x00"
        + history,
        bytes([len(name)])
        + name
        + bytes([32])
        + b"\x01" * 32
        + b"\x01"
        + b"\x00" * 8
        + b"\x01\x20"
        + b"\x03" * 32,
    ]


# --- content values and the repository description -----------------------------------------------


def decode_content(data: bytes) -> None:
    from persist_spi.versionstore.content import content_from_bytes

    if data:
        content_from_bytes(data[0], "00000000-0000-0000-0000-000000000001", data[1:])


def _content_seeds() -> list[bytes]:
    from persist_spi.versionstore.content import UDF, DeltaLakeTable, IcebergTable, IcebergView, Namespace

    values = [
        IcebergTable(metadata_location="s3://b/t/metadata.json", snapshot_id=3),
        IcebergView(metadata_location="s3://b/v.json", sql_text="select 1", dialect="spark"),
        Namespace(elements=("a", "b"), properties={"owner": "me"}),
        DeltaLakeTable(metadata_location_history=("m1",), last_checkpoint="c1"),
        UDF(metadata_location="s3://b/f.json", version_id="1"),
    ]
    content_id = "00000000-0000-0000-0000-000000000001"
    # lochkit's earlier JSON form, which is still read.
    legacy = [b'\x01{"metadata_location":"s3://b/t.json","snapshot_id":3,"type":"ICEBERG_TABLE"}']
    return [bytes([v.PAYLOAD]) + v.to_bytes(content_id) for v in values] + legacy


def decode_repository_description(data: bytes) -> None:
    from persist_spi.logic.repository_logic import RepositoryDescription

    RepositoryDescription.from_json(data)


def _description_seeds() -> list[bytes]:
    import datetime

    from persist_spi.logic.repository_logic import RepositoryDescription

    now = datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    return [RepositoryDescription(repository_created_time=now, properties={"a": "b"}).to_json()]


# --- configuration and addresses from users ------------------------------------------------------


def decode_store_config(data: bytes) -> None:
    from persist_spi.config import StoreConfig

    try:
        doc = json.loads(data)
    except ValueError:
        return  # not JSON: the mapping's own parser is what is under test
    if isinstance(doc, dict):
        StoreConfig.from_mapping(doc)


def _store_config_seeds() -> list[bytes]:
    return [
        b'{"max-incremental-index-size": 2048, "namespace-validation": "false"}',
        b'{"commit-timeout-millis": "10", "retry-initial-sleep-millis-lower": 3}',
        b'{"repository-id": "x", "parents-per-commit": 3}',
    ]


#: Planted in every fuzzed URL: no error message may show it.
SECRET: Final = "pl4nted-S3cret"
_URL_SCHEMES: Final = ("postgresql", "cockroachdb", "mongodb", "cassandra", "scylladb", "dynamodb", "mariadb")


def decode_backend_url(data: bytes) -> None:
    from reliability.fuzz.reader import ByteReader

    reader = ByteReader(data)
    scheme = reader.choice(_URL_SCHEMES)
    before, after = reader.text(40), reader.rest().decode("utf-8", "replace")
    url = f"{scheme}://{before}user:{SECRET}@{after}"
    try:
        _parse_url(scheme, url)
    except BackendConfigError as e:
        _expect(SECRET not in str(e), f"the password shows in: {e}")
        raise


def _parse_url(scheme: str, url: str) -> object:
    if scheme in ("postgresql", "cockroachdb"):
        from backends.postgres.config import parse_settings as pg

        return pg("postgres" if scheme == "postgresql" else "cockroachdb", url)
    if scheme == "mongodb":
        from backends.mongodb.config import parse_settings as mongo

        return mongo(url)
    if scheme in ("cassandra", "scylladb"):
        from backends.cassandra.config import parse_url as cql

        return cql(scheme, url)
    if scheme == "mariadb":
        from backends.mariadb.config import parse_settings as maria

        return maria("mariadb", url)
    from backends.dynamodb.config import parse_url as dynamo

    return dynamo(url)


def _url_seeds() -> list[bytes]:
    rests = {
        "postgresql": b"127.0.0.1:5432/lochkit?pool_max=3&request_timeout=5",
        "cockroachdb": b"127.0.0.1:26257/defaultdb?sslmode=disable",
        "mongodb": b"h1:27017,h2/db?replicaSet=rs0&collection_prefix=x_",
        "cassandra": b"127.0.0.1:9042/lochkit?local_dc=dc1&replication=3",
        "scylladb": b"h1,h2:19042/ks?timeout=5",
        "dynamodb": b"127.0.0.1:8000?region=us-west-2&table_prefix=t_",
        "mariadb": b"127.0.0.1:3306/lochkit?pool_max=3&layout=nessie",
    }
    return [bytes([_URL_SCHEMES.index(scheme)]) + b"\x00" + rest for scheme, rest in rests.items()]


def decode_object_id(data: bytes) -> None:
    from persist_spi.ids import ObjId

    text = data.decode("utf-8", "replace")
    obj_id = ObjId.from_hex(text)
    _expect(str(obj_id) == text.lower(), "the id does not print as it was read")


# --- inputs of the load tool and of the REST server ----------------------------------------------


def decode_key_pattern(data: bytes) -> None:
    """The content generator's key-pattern grammar (``--key-pattern``), and a few keys from it."""
    import random

    from loadgen.keygen.generator import KeyGenerator

    generator = KeyGenerator(data.decode("utf-8", "replace"), random.Random(0))
    for _ in range(3):
        _expect(isinstance(generator.generate(), str), "a generated key is not a string")


def decode_content_info_json(data: bytes) -> None:
    """The load tool's CONTENT_INFO_JSON input files (``--input`` of delete, content-refresh)."""
    from loadgen.contentgen.maintenance import content_info_entries

    for reference, key in content_info_entries(data.decode("utf-8", "replace"), "fuzz"):
        _expect(isinstance(reference, str) and bool(key.elements), "an entry without reference or key")


def decode_rest_commit(data: bytes) -> None:
    """The body of a REST API v2 commit as ``lochkit serve`` decodes it: commit meta and operations."""
    from persist_spi.versionstore import nessie_json as nj

    doc = json.loads(data)
    if isinstance(doc, dict) and isinstance(doc.get("commitMeta"), dict):
        nj.meta_from_json(doc["commitMeta"])
    nj.commit_request_from_json(doc)


def _rest_commit_seeds() -> list[bytes]:
    from persist_spi.versionstore import nessie_json as nj
    from persist_spi.versionstore.content import ContentKey, IcebergTable, Namespace
    from persist_spi.versionstore.meta import CommitMeta
    from persist_spi.versionstore.operations import Delete, Operation, Put

    operations: list[Operation] = [
        Put(ContentKey.of("ns", "t"), IcebergTable(metadata_location="s3://b/t.json", snapshot_id=1)),
        Put(ContentKey.of("ns"), Namespace(elements=("ns",))),
        Delete(ContentKey.of("old")),
    ]
    return [
        json.dumps(
            nj.commit_request_to_json(CommitMeta("m", authors=("a",), properties={"p": "v"}), operations)
        ).encode()
    ]


register_decoder(
    "object-codec",
    decode_object,
    allowed=(CorruptObject,),
    description="stored objects of every type (msgpack, format 1) as a backend returns them",
    seeds=_object_seeds,
)
register_decoder(
    "index",
    decode_index,
    allowed=(ValueError,),
    description="Nessie's binary store-index format (v1 and v2): incremental indexes and segments",
    seeds=_index_seeds,
)
register_decoder(
    "content-keys",
    decode_content_key,
    allowed=(ValueError,),
    description="dotted content-key strings from users, and their store keys",
    seeds=lambda: [b"db.schema.table", b"a", "ns.\u00e9t\u00e9.t".encode()],
)
register_decoder(
    "store-keys",
    decode_store_key,
    allowed=(ValueError,),
    description="store keys read from an index, back to content keys",
    seeds=lambda: [b"M\x00a\x01b\x00C", b"M\x00x\x00C"],
)
register_decoder(
    "reference-rows",
    decode_reference_row,
    allowed=(ValueError, LochkitError),
    description="reference rows (pointer, flags, history blob) as a backend returns them",
    seeds=_reference_row_seeds,
)
register_decoder(
    "content-values",
    decode_content,
    allowed=(ValueError,),
    description="content values: Nessie's protobuf of every content type, and lochkit's earlier JSON",
    seeds=_content_seeds,
)
register_decoder(
    "repository-description",
    decode_repository_description,
    allowed=(ValueError,),
    description="the repository description JSON on int/repo",
    seeds=_description_seeds,
)
register_decoder(
    "store-config",
    decode_store_config,
    allowed=(ValueError,),
    description="store config mappings (Nessie's kebab-case keys) from users",
    seeds=_store_config_seeds,
)
register_decoder(
    "backend-urls",
    decode_backend_url,
    allowed=(BackendConfigError,),
    description="backend URLs and their options from users; a planted password never shows in errors",
    seeds=_url_seeds,
)
register_decoder(
    "object-ids",
    decode_object_id,
    allowed=(ValueError,),
    description="hex object ids from users",
    seeds=lambda: [b"00" * 32, b"2e1cfa82b035c26cbbbdae632cea070514eb8b773f616aaeaf668e2f0be8f10d"],
)
register_decoder(
    "key-patterns",
    decode_key_pattern,
    allowed=(KeyPatternError,),
    description="the content generator's key-pattern grammar (--key-pattern) and keys drawn from it",
    seeds=lambda: [b"db_${every,10,uuid}.tbl_${seq,0}", b"t${prob,0.5,string,8}-${int,100}$$"],
)
register_decoder(
    "content-info-json",
    decode_content_info_json,
    allowed=(ValueError,),
    description="the load tool's CONTENT_INFO_JSON input files",
    seeds=lambda: [b'[{"key": {"elements": ["ns", "t"]}, "reference": "main"}]'],
)
register_decoder(
    "rest-commit-json",
    decode_rest_commit,
    allowed=(ValueError,),
    description="REST API v2 commit bodies (commit meta, operations, contents) as lochkit serve reads them",
    seeds=_rest_commit_seeds,
)
