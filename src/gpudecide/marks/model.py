"""What the marks readers hand on: runs (one training process or one tracked run, with its
job identity and its marks) and the problems found on the way, each named file:line.

A *run* is what one source knows about one training: the marks JSONL of one process, one
TensorBoard event file, one MLflow run, one folder of Hugging Face `checkpoint-N/` folders.
Its identity holds whatever job ids the source carries (none for a TensorBoard file), its
host and the names of the folders it sits in (a job id there joins it too).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from gpudecide.figure_model import StoredMessage
from gpudecide.message import english

__all__ = [
    "MAX_LISTED",
    "Identity",
    "Mark",
    "MarkKind",
    "MarkSet",
    "Problem",
    "ProblemKind",
    "Problems",
    "Run",
    "SourceKind",
    "Where",
    "host_names",
]

MarkKind = Literal["prep_start", "first_step", "checkpoint", "end", "seen"]
"""`seen`: a moment the run was alive (an MLflow run's start, a TensorBoard file's first
event): it joins a run to a job by time, and fills no field."""

SourceKind = Literal["marks", "tensorboard", "mlflow", "hf-checkpoints"]

ProblemKind = Literal[
    "not_utf8",
    "not_json",
    "too_long",
    "truncated",
    "not_a_mark",
    "bad_value",
    "no_offset",
    "duplicate",
    "backwards",
    "unreadable",
    "not_event_file",
    "no_scalar",
    "reader_missing",
    "not_mlflow",
    "too_many",
    "unknown_job",
    "no_identity",
    "ambiguous",
    "not_started",
    "before_start",
    "after_end",
]

# Problems and runs listed in full up to this many of each kind; the counts stay exact.
MAX_LISTED = 200


class Where(BaseModel):
    """A file and, where it has lines, the line (1-based)."""

    model_config = ConfigDict(frozen=True)

    path: str
    line: int | None = None

    def __str__(self) -> str:
        return self.path if self.line is None else f"{self.path}:{self.line}"


class Identity(BaseModel):
    """The job a run belongs to, as its source names it (see `gpudecide.marks.writer`)."""

    model_config = ConfigDict(frozen=True)

    job_id: str | None = None
    slurm_job_id: str | None = None
    slurm_array_job_id: str | None = None
    slurm_array_task_id: str | None = None
    slurm_restart_count: int | None = None
    cluster: str | None = None
    pod: str | None = None
    namespace: str | None = None
    sagemaker_job: str | None = None
    host: str | None = None
    node: str | None = None

    def job_ids(self) -> list[str]:
        """The ids a job log may list this job under, most specific first: the id the team
        set, the Slurm array task (`<array>_<task>`, as sacct prints it), the Slurm job id
        (an array task's own id, as JobIDRaw), the SageMaker job, the pod."""
        out: list[str] = []
        if self.job_id:
            out.append(self.job_id)
        if self.slurm_array_job_id and self.slurm_array_task_id:
            out.append(f"{self.slurm_array_job_id}_{self.slurm_array_task_id}")
        for value in (self.slurm_job_id, self.sagemaker_job, self.pod):
            if value and value not in out:
                out.append(value)
        return out

    def hosts(self) -> set[str]:
        """The names this run's machine goes by (node and host, each also without its
        domain), lower case."""
        return host_names([h for h in (self.node, self.host) if h])

    def says(self) -> str:
        """The identity in a few words, for a list of runs: the first job id, else the
        host, else `-`."""
        ids = self.job_ids()
        if ids:
            return ids[0]
        return self.node or self.host or "-"


def host_names(names: list[str]) -> set[str]:
    """Each name lower case, and also without its domain (`gpu01.cluster` -> `gpu01`)."""
    out: set[str] = set()
    for name in names:
        low = name.strip().lower()
        if low:
            out.add(low)
            out.add(low.split(".", 1)[0])
    return out


class Mark(BaseModel):
    """One moment of a run."""

    model_config = ConfigDict(frozen=True)

    kind: MarkKind
    at: AwareDatetime
    step: int | None = None
    path: str | None = None
    status: str | None = None
    where: Where


class Run(BaseModel):
    """What one source knows about one training."""

    source: SourceKind
    name: str
    identity: Identity = Field(default_factory=Identity)
    marks: list[Mark] = Field(default_factory=list)
    # the folders the source sits in, below the marks folder (a folder named after the job
    # joins it to that job)
    folders: list[str] = Field(default_factory=list)
    where: Where

    def first(self, kind: MarkKind) -> Mark | None:
        """The earliest mark of `kind`."""
        found = [m for m in self.marks if m.kind == kind]
        return min(found, key=lambda m: m.at) if found else None

    def last(self, kind: MarkKind) -> Mark | None:
        """The latest mark of `kind`."""
        found = [m for m in self.marks if m.kind == kind]
        return max(found, key=lambda m: m.at) if found else None

    def anchor(self) -> datetime | None:
        """The run's first moment of any kind: the time it is joined to a job by."""
        return min((m.at for m in self.marks), default=None)


class Problem(BaseModel):
    """Input that could not be used, where it is and why (the message, in the reader's
    language where it is shown)."""

    model_config = ConfigDict(frozen=True)

    kind: ProblemKind
    where: Where
    message: StoredMessage

    @property
    def text(self) -> str:
        """`file:line: why`, in English."""
        return f"{self.where}: {english(self.message)}"


class Problems(BaseModel):
    """Problems counted exactly and listed up to MAX_LISTED of each kind."""

    problems: list[Problem] = Field(default_factory=list)
    problem_counts: dict[ProblemKind, int] = Field(default_factory=dict)

    def add(self, problem: Problem) -> None:
        """Count a problem; list it while its kind has fewer than MAX_LISTED listed."""
        seen = self.problem_counts.get(problem.kind, 0)
        self.problem_counts[problem.kind] = seen + 1
        if seen < MAX_LISTED:
            self.problems.append(problem)

    def add_all(self, other: Problems) -> None:
        """Count and list another set's problems with these."""
        listed = Counter(p.kind for p in self.problems)
        for problem in other.problems:
            if listed[problem.kind] < MAX_LISTED:
                self.problems.append(problem)
                listed[problem.kind] += 1
        counts = Counter(self.problem_counts)
        counts.update(other.problem_counts)
        self.problem_counts = dict(counts)

    @property
    def problems_total(self) -> int:
        """How many problems were found, listed or not."""
        return sum(self.problem_counts.values())


class MarkSet(Problems):
    """Every run the readers found, the files and lines they read, and what they could not
    use."""

    runs: list[Run] = Field(default_factory=list)
    files: int = 0
    lines: int = 0

    def merge(self, other: MarkSet) -> None:
        """Add another reader's runs, counts and problems to these."""
        self.runs.extend(other.runs)
        self.add_all(other)
        self.files += other.files
        self.lines += other.lines
