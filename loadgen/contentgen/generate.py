"""``generate``: Nessie's synthetic commit load, step by step as Nessie's generator does it.

Setup: resolve the default branch (created from the server's default branch if ``-D`` names a
missing one), create ``b - 1`` extra branches named by the run start, and build the key pool once.
Each commit: pick a branch; draw ``puts_per_commit`` keys with replacement and de-duplicate; read
their contents (which also gives the expected hash); add the missing ancestor namespaces to the same
commit; put new content, keeping the content id of content that exists; commit; tag the new head with
``tag_probability``; sleep ``duration / n``. A conflict aborts unless ``continue_on_error``.

Beyond Nessie: with a seed, the key pool, the random draws, the contents and (on the in-process
target) the commit times and new content ids derive from it, so a run reproduces its commit ids.
An unseeded run draws a seed for its random draws only (``drawn_seed``): its commit times, content
ids and run start stay real, and ``--seed`` with that seed replays the same draws.
"""

from __future__ import annotations

import datetime
import random
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from loadgen.contentgen.contents import check_type, new_content
from loadgen.contentgen.progress import Progress
from loadgen.contentgen.recording import Recorder
from loadgen.keygen import KeyGenerator
from persist_spi.errors import InputError
from persist_spi.versionstore.api import VersionStoreApi
from persist_spi.versionstore.content import Content, ContentKey, Namespace
from persist_spi.versionstore.errors import ReferenceConflictError, ReferenceNotFoundError
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Operation, Put
from persist_spi.versionstore.refs import NamedRef, RefKind, branch, tag
from persist_spi.versionstore.sources import SEEDED_EPOCH

#: Event action names: the Nessie Java client's API calls the step corresponds to.
GET_CONTENT = "getContent"
COMMIT = "commitMultipleOperations"
CREATE_REFERENCE = "createReference"
GET_REFERENCE = "getReference"
#: Keys of the pool checked before a run starts; a pattern whose later keys are invalid (a random
#: choice that can make an empty element) is still caught when the run reaches them.
VALIDATED_KEYS = 1000


@dataclass(frozen=True)
class GenerateOptions:
    num_commits: int = 100
    num_branches: int = 1
    default_branch: str | None = None
    num_tables: int = 1
    puts_per_commit: int = 1
    key_pattern: str | None = None
    content_type: str = "ICEBERG_TABLE"
    tag_probability: float = 0.0
    duration_s: float | None = None
    continue_on_error: bool = False
    author: str | None = None
    message: str | None = None
    seed: int | None = None
    #: An unseeded run's seed for its random draws (keys, contents, branch and key choices, tags).
    drawn_seed: int | None = None

    @property
    def draws_seed(self) -> int | None:
        """The seed of the random draws: the given one, else the drawn one."""
        return self.seed if self.seed is not None else self.drawn_seed

    def validate(self) -> None:
        """ValueError (a usage error) for options Nessie's generator refuses."""
        if self.num_commits < 1:
            raise InputError("--num-commits: must create at least one commit")
        if self.num_tables < 1:
            raise InputError("--num-tables: must use at least one table (content-key)")
        if self.num_branches < 1:
            raise InputError("--num-branches: must use at least one branch")
        if self.puts_per_commit < 1:
            raise InputError("--puts-per-commit: must put at least one key per commit")
        if not 0.0 <= self.tag_probability <= 1.0:
            raise InputError("--tag-probability: must be between 0 and 1")
        if self.duration_s is not None and self.duration_s <= 0:
            raise InputError("--duration: Duration must be absent to greater than zero.")
        check_type(self.content_type)
        if self.key_pattern is not None:
            # The first keys the run will use (the same seed draws the same pool): a pattern that
            # makes no valid key is refused before a target is opened or a run directory made.
            # KeyPatternError (with the column) or ValueError.
            sample = replace(self, num_tables=min(self.num_tables, VALIDATED_KEYS))
            key_pool(sample, run_start_label(self.seed), random.Random(self.draws_seed))


def draw_seed() -> int:
    """A seed for a run that was given none, recorded so its draws can be replayed with --seed
    (32 bits: short enough to type, and collisions between runs do not matter)."""
    return secrets.randbits(32)


def run_start_label(seed: int | None) -> str:
    """Nessie's ``yyyy-MM-dd-HH-mm-ss`` run start (local time); derived from the seed when seeded,
    so a seeded run names its branches and default keys the same every time."""
    when = (
        SEEDED_EPOCH + datetime.timedelta(seconds=seed % 1_000_000_000)
        if seed is not None
        else datetime.datetime.now()
    )
    return when.strftime("%Y-%m-%d-%H-%M-%S")


def key_pool(options: GenerateOptions, run_start: str, rng: random.Random) -> list[ContentKey]:
    if options.key_pattern is None:
        return [
            ContentKey.of(f"create-contents-{run_start}", "contents", str(i))
            for i in range(options.num_tables)
        ]
    generator = KeyGenerator(options.key_pattern, rng)
    pool = []
    for _ in range(options.num_tables):
        text = generator.generate()
        try:
            pool.append(ContentKey.from_path_string(text))
        except InputError as e:
            raise InputError(
                f"--key-pattern '{options.key_pattern}' generated '{text}', which is not a valid key: {e}"
            ) from None
    return pool


class Generator:
    def __init__(
        self,
        api: VersionStoreApi,
        options: GenerateOptions,
        recorder: Recorder,
        out: Callable[[str], None],
        err: Callable[[str], None],
        progress: Progress | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.api = api
        self.options = options
        self.recorder = recorder
        self.out = out
        self.err = err
        self.progress = progress
        self.sleep = sleep
        self.rng = random.Random(options.draws_seed)
        self.run_start = run_start_label(options.seed)

    def _default_branch(self) -> NamedRef:
        name = self.options.default_branch
        if name is None:
            return branch(self.api.default_branch())
        with self.recorder.measure(GET_REFERENCE, name):
            try:
                info = self.api.named_ref(name)
            except ReferenceNotFoundError:
                info = None
        if info is not None:
            if info.named_ref.kind is not RefKind.BRANCH:
                raise InputError(f"--default-branch {name} is a tag; commits need a branch")
            return info.named_ref
        source = self.api.reference(branch(self.api.default_branch()))
        self.out(f"Creating branch '{name}' from '{source.named_ref.name}' at {source.hash}")
        with self.recorder.measure(CREATE_REFERENCE, name):
            return self.api.create_reference(branch(name), source.hash).named_ref

    def setup(self) -> list[NamedRef]:
        default = self._default_branch()
        head = self.api.reference(default).hash
        branches = [default]
        while len(branches) < self.options.num_branches:
            new = branch(f"branch-{self.run_start}_{len(branches) - 1}")
            self.out(f"Creating branch '{new.name}' from '{default.name}' at {head}")
            with self.recorder.measure(CREATE_REFERENCE, new.name):
                self.api.create_reference(new, head)
            branches.append(new)
        return branches

    def run(self) -> int:
        """Exit code 0. A conflict aborts the run (ReferenceConflictError) unless continue_on_error;
        then it is printed and counted in the events, and the exit code stays 0, as in Nessie."""
        options = self.options
        keys = key_pool(options, self.run_start, self.rng)
        branches = self.setup()
        type_name = check_type(options.content_type)
        pause = (options.duration_s or 0.0) / options.num_commits
        known_namespaces: dict[str, set[ContentKey]] = {}
        self.out(f"Starting contents generation, {options.num_commits} commits...")
        for number in range(options.num_commits):
            target = branches[self.rng.randrange(len(branches))]
            chosen = list(
                dict.fromkeys(keys[self.rng.randrange(len(keys))] for _ in range(options.puts_per_commit))
            )
            with self.recorder.measure(GET_CONTENT, target.name):
                read = self.api.get_contents(target, chosen)
            self.out(
                f"Committing content-keys '{', '.join(str(k) for k in chosen)}' to branch "
                f"'{target.name}' at {read.hash}"
            )
            known = known_namespaces.setdefault(target.name, set())
            to_check = sorted(
                {ContentKey(k.elements[:i]) for k in chosen for i in range(1, len(k.elements))} - known
            )
            operations: list[Operation] = []
            if to_check:
                with self.recorder.measure(GET_CONTENT, target.name):
                    existing_ns = self.api.get_values(target, to_check)
                operations += [
                    Put(ns, Namespace(elements=ns.elements)) for ns in to_check if ns not in existing_ns
                ]
            for key in chosen:
                current: Content | None = read.contents.get(key)
                operations.append(Put(key, new_content(type_name, self.rng, current.id if current else None)))
            message = options.message or f"Commit #{number} of {options.num_commits} on {target.name}"
            meta = CommitMeta(message, authors=(options.author,) if options.author else ())
            try:
                with self.recorder.measure(COMMIT, target.name, puts=len(operations)) as measured:
                    result = self.api.commit(target, read.hash, meta, operations)
                    measured.attempts = result.attempts
                    measured.commit_hash = str(result.hash)
                known.update(to_check)
                if self.rng.random() < options.tag_probability:
                    new_tag = tag(f"new-tag-{self.rng.getrandbits(64) - (1 << 63)}")
                    self.out(f"Creating tag '{new_tag.name}' from '{target.name}' at {result.hash}")
                    with self.recorder.measure(CREATE_REFERENCE, new_tag.name):
                        self.api.create_reference(new_tag, result.hash)
            except ReferenceConflictError as e:
                if not options.continue_on_error:
                    raise
                self.err(f"Conflict: {e}")
            if self.progress is not None:
                self.progress.advance()
            if pause:
                self.sleep(pause)
        self.out("Done creating contents.")
        return 0
