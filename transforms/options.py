"""The operational options of a run: how it reads and where its tasks go (``IngestOptions``), what
documents it renders (``DocumentOptions``). Plain values, built at the edge from the command line,
``impcredit.toml`` and the environment (``flows/settings.py``) and passed down; nothing here reads
the environment. They change no amount: the interpretation register is ``transforms.settings``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_LINE_BYTES = 1 << 20
MAX_SHEET_MB = 200.0


class IngestOptions(BaseModel):
    """How a submission is read into the lake (``ingest.ingest_folder``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # the validation suites' engine: polars (compiled, vectorised) or gx (Great Expectations; Data Docs)
    validation_engine: Literal["polars", "gx"] | None = None
    # on this process: the tasks' scratch area in memory up to this much submission (MB), on disk above
    scratch_in_memory_mb: float = Field(default=256.0, ge=0)
    # on this process: tasks at once
    ingest_tasks: int = Field(default=2, ge=1)
    # on a Dask cluster: seconds without a finished task while it loses its workers before the run ends
    worker_wait_s: float = Field(default=120.0, gt=0)
    # what one file may hold: a line of a delimited file (bytes; a longer header refuses the file, a
    # longer data line is rejected) and a workbook sheet's XML uncompressed (MB; over it, refused)
    max_line_bytes: int = Field(default=MAX_LINE_BYTES, ge=1024)
    max_sheet_mb: float = Field(default=MAX_SHEET_MB, gt=0)

    @property
    def scratch_in_memory_bytes(self) -> int:
        return int(self.scratch_in_memory_mb * 2**20)


class DocumentOptions(BaseModel):
    """What documents a run renders (``products``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # the PDFs: auto (both kinds up to pdf_max documents, else their data for `impcredit documents`),
    # all, certificates (notices as HTML only) or none
    pdf: Literal["auto", "all", "certificates", "none"] = "auto"
    pdf_max: int = Field(default=1000, ge=0)
    # a second process renders half of a big run's pages (from render_helper.MIN_PAGES)
    render_helper: bool = True
    # the lines of each file a notice lists (in each of its lists), then how many more and where
    notice_lines: int = Field(default=50, ge=1)
