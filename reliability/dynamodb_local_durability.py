"""Does DynamoDB Local keep a write it acknowledged when it is SIGKILLed right after answering?

An experiment on the emulator itself, with boto3 and no lochkit code in the write path: each round
writes one new item, kills the server the moment the answer arrives, starts it again on the same
SQLite file and reads the item back strongly consistently. It is run once per request kind:
``TransactWriteItems`` (what a lochkit commit is on DynamoDB) and ``PutItem`` (what the two-step
commit uses).

Measured with DynamoDB Local 2.6: 9 of 15 transactions lost, 0 of 15 puts. The reliability
campaign's server-restart part therefore commits in two steps on DynamoDB Local
(:data:`provisioning.servers.dynamodb.TRANSACTIONS_NOT_DURABLE`).

Run: ``python -m reliability.dynamodb_local_durability --rounds 15`` (about 5 s per round).
It starts its own server under a temporary directory and removes it afterwards.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from backends.dynamodb.config import parse_url
from provisioning.base import Provisioned, ServerControl
from provisioning.servers.dynamodb import DynamoDBProvisioner

TABLE: Final = "durability_experiment"
KINDS: Final = ("TransactWriteItems", "PutItem")


@dataclass
class Losses:
    rounds: int = 0
    lost: int = 0

    def __str__(self) -> str:
        return f"{self.lost} of {self.rounds} lost"


def _client(provisioned: Provisioned) -> Any:
    assert provisioned.url is not None
    return parse_url(provisioned.url).client(sdk_retries=True)


def _write(client: Any, kind: str, key: str) -> None:
    """One new item, insert-if-absent as lochkit writes objects."""
    put = {"TableName": TABLE, "Item": {"k": {"S": key}}, "ConditionExpression": "attribute_not_exists(k)"}
    if kind == "TransactWriteItems":
        client.transact_write_items(TransactItems=[{"Put": put}])
    else:
        client.put_item(**put)


def _kept(client: Any, key: str) -> bool:
    return "Item" in client.get_item(TableName=TABLE, Key={"k": {"S": key}}, ConsistentRead=True)


def measure(rounds: int, log: Callable[[str], None] = print) -> dict[str, Losses]:
    """Rounds of write, SIGKILL, restart, read per request kind on a server of its own."""
    losses = {kind: Losses() for kind in KINDS}
    with tempfile.TemporaryDirectory(prefix="lochkit-ddb-durability-") as work:
        provisioned = DynamoDBProvisioner().restartable_process("dynamodb", Path(work))
        try:
            control: ServerControl | None = provisioned.control
            assert control is not None
            client = _client(provisioned)
            client.create_table(
                TableName=TABLE,
                KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
                AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                BillingMode="PAY_PER_REQUEST",
            )
            for n in range(rounds):
                for kind in KINDS:
                    key = f"{kind}-{n}"
                    _write(client, kind, key)  # acknowledged ...
                    control.kill()  # ... and killed at once
                    control.restart()
                    client = _client(provisioned)
                    losses[kind].rounds += 1
                    losses[kind].lost += not _kept(client, key)
                log(f"round {n + 1}/{rounds}: " + "; ".join(f"{k} {v}" for k, v in losses.items()))
        finally:
            provisioned.stop()
    return losses


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=15, help="rounds per request kind (default 15)")
    args = parser.parse_args(argv)
    losses = measure(args.rounds)
    for kind, figures in losses.items():
        print(f"{kind}: acknowledged, then SIGKILL at once: {figures}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
