"""Where files live: a local folder, or a place in an object store (``s3://bucket/prefix``).

A location is a ``pathlib.Path`` for a local folder (every local code path is unchanged) or an
``ObjectPath`` for an object store, which offers the part of ``Path`` the lake and the outputs
use (``/``, ``name``, ``parent``, ``exists``, ``is_file``, ``glob``, ``rglob``, ``unlink``,
``read_text``, ``open``, ...) over pyarrow's filesystem (``pyarrow.fs``), and the Parquet reads
go through Polars' own object-store IO (``read_parquet``, ``scan_parquet`` here). DuckDB never
reads the lake (it keeps the ledger and allocates over frames), so its httpfs extension is not
needed.

Credentials come from the standard AWS chain only (the environment's ``AWS_ACCESS_KEY_ID`` and
``AWS_SECRET_ACCESS_KEY``, ``AWS_PROFILE``, ``~/.aws/credentials`` and ``~/.aws/config``),
which each library resolves itself: nothing here holds, passes or writes a secret. What is passed
on is not secret: the endpoint (``AWS_ENDPOINT_URL_S3`` or ``AWS_ENDPOINT_URL``, or the
profile's ``endpoint_url``: an S3-compatible store) and the region. A URL carrying credentials
(``s3://KEY:SECRET@bucket``) is refused: a location is written in run records.

An object store has no rename: a PUT is the atomic step (an object appears whole or not at all),
so a file is written to a local temporary file and uploaded in one request (``upload``), and
what commits a set of objects is the one written last (the lake's manifest, the outputs'
``manifest.json``).
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Union

import polars as pl

URL = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?P<rest>.*)$", re.IGNORECASE)
SCHEMES = ("s3", "gs")  # Amazon S3 and S3-compatible stores (tested); Google Cloud Storage
NO_CREDENTIALS = ("no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, a profile "
                  "in ~/.aws/config and ~/.aws/credentials)")


class StorageError(OSError):
    """A location cannot be used (no credentials, no bucket, no endpoint): one line naming the
    location and what to set."""


def is_url(text: str | os.PathLike) -> bool:
    return isinstance(text, str) and URL.match(text) is not None and not re.match(r"^[a-z]:[\\/]", text, re.I)


def location(text: str | os.PathLike) -> Location:
    """A local folder (``Path``) or an object-store place (``ObjectPath``) from what a user gave."""
    if isinstance(text, ObjectPath | Path):
        return text
    m = URL.match(str(text))
    if not m:
        return Path(text)
    scheme, rest = m["scheme"].lower(), m["rest"]
    if scheme == "file":
        return Path(rest)
    if scheme in ("s3a", "s3n"):
        scheme = "s3"
    if scheme not in SCHEMES:
        raise StorageError(f"{text}: {scheme}:// is not a storage this program reads; give a local folder, "
                           "s3://bucket/prefix or gs://bucket/prefix")
    bucket = rest.split("/", 1)[0]
    if "@" in bucket or ":" in bucket or "?" in rest or "#" in rest:
        raise StorageError(f"{scheme}://{bucket.rpartition('@')[2]}/...: a location may not carry credentials or "
                           "options (it is written in run records); set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                           "(or AWS_PROFILE) instead")
    parts = [p for p in rest.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        raise StorageError(f"{text}: name a bucket and a prefix, like {scheme}://bucket/impcredit/lake")
    return ObjectPath(scheme, "/".join(parts))


@dataclass(frozen=True, order=True)
class ObjectPath:
    """A place in an object store: ``scheme://bucket/key``. Holds no filesystem and no secret
    (it pickles as its URL); the filesystem is looked up when used."""

    scheme: str
    path: str  # bucket/key, no leading or trailing slash

    def __str__(self) -> str:
        return f"{self.scheme}://{self.path}"

    def __truediv__(self, other: str | PurePosixPath) -> ObjectPath:
        extra = [p for p in str(other).split("/") if p and p != "."]
        if ".." in extra:
            raise ValueError(f"{other}: no '..' in an object key")
        return ObjectPath(self.scheme, "/".join([self.path, *extra]))

    @property
    def bucket(self) -> str:
        return self.path.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def suffix(self) -> str:
        return PurePosixPath(self.name).suffix

    @property
    def parent(self) -> ObjectPath:
        return ObjectPath(self.scheme, self.path.rsplit("/", 1)[0]) if "/" in self.path else self

    @property
    def parents(self) -> tuple[ObjectPath, ...]:
        out, p = [], self
        while "/" in p.path:
            p = p.parent
            out.append(p)
        return tuple(out)

    def with_name(self, name: str) -> ObjectPath:
        return self.parent / name

    def as_posix(self) -> str:
        return str(self)

    def resolve(self) -> ObjectPath:
        return self

    def relative_to(self, other: ObjectPath) -> PurePosixPath:
        if not isinstance(other, ObjectPath) or other.scheme != self.scheme or not (
                self.path == other.path or self.path.startswith(other.path + "/")):
            raise ValueError(f"{self} is not under {other}")
        return PurePosixPath(self.path[len(other.path):].lstrip("/") or ".")

    # --- what is there -------------------------------------------------------------------------

    def _info(self):
        return _call(self, lambda fs: fs.get_file_info(self.path))

    def exists(self) -> bool:
        import pyarrow.fs as pafs

        return self._info().type != pafs.FileType.NotFound

    def is_file(self) -> bool:
        import pyarrow.fs as pafs

        return self._info().type == pafs.FileType.File

    def is_dir(self) -> bool:
        """True when objects exist under this prefix (an object store has no empty folders)."""
        import pyarrow.fs as pafs

        return self._info().type == pafs.FileType.Directory

    def size(self) -> int:
        return int(self._info().size or 0)

    def _listing(self) -> list[str]:
        """The keys of every object under this prefix, relative to it."""
        import pyarrow.fs as pafs

        sel = pafs.FileSelector(self.path, recursive=True, allow_not_found=True)
        infos = _call(self, lambda fs: fs.get_file_info(sel))
        return sorted(i.path[len(self.path) + 1:] for i in infos if i.type == pafs.FileType.File)

    def glob(self, pattern: str) -> list[ObjectPath]:
        """Objects and implied folders matching ``pattern`` segment by segment (as ``Path.glob``)."""
        want = pattern.split("/")
        found = set()
        for key in self._listing():
            segs = key.split("/")
            if len(segs) >= len(want) and all(fnmatch.fnmatchcase(s, w) for s, w in zip(segs, want, strict=False)):
                found.add("/".join(segs[:len(want)]))
        return [self / k for k in sorted(found)]

    def rglob(self, pattern: str) -> list[ObjectPath]:
        """Objects whose name matches ``pattern``, at any depth (folders are implied, not listed)."""
        return [self / k for k in self._listing() if fnmatch.fnmatchcase(k.rsplit("/", 1)[-1], pattern)]

    # --- reading and writing -------------------------------------------------------------------

    def open(self, mode: str = "rb"):
        if mode != "rb":
            raise ValueError("an object is opened for reading only; write through upload")
        return _call(self, lambda fs: fs.open_input_stream(self.path))

    def read_bytes(self) -> bytes:
        with self.open() as fh:
            return fh.read()

    def read_text(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        return self.read_bytes().decode(encoding, errors)

    def write_bytes(self, data: bytes) -> None:
        def put(fs):
            with fs.open_output_stream(self.path) as fh:
                fh.write(data)
        _call(self, put)

    def write_text(self, text: str, encoding: str = "utf-8") -> None:
        self.write_bytes(text.encode(encoding))

    def upload(self, local: Path) -> None:
        """The local file ``local`` as this object, in one PUT (multipart for a big file, which
        appears only when complete)."""
        import pyarrow.fs as pafs

        _call(self, lambda fs: pafs.copy_files(str(local), self.path, source_filesystem=pafs.LocalFileSystem(),
                                               destination_filesystem=fs))

    def unlink(self, missing_ok: bool = False) -> None:
        try:
            _call(self, lambda fs: fs.delete_file(self.path))
        except FileNotFoundError:
            if not missing_ok:
                raise

    def mkdir(self, parents: bool = False, exist_ok: bool = False) -> None:
        """Nothing to do: an object store has no folders."""

    def rmdir(self) -> None:
        """Nothing to do: a prefix without objects is gone."""


Location = Union[Path, ObjectPath]  # noqa: UP007 (a runtime alias)


def is_remote(loc) -> bool:
    return isinstance(loc, ObjectPath)


# --- the filesystems and Polars' options (nothing secret) ------------------------------------------

_FILESYSTEMS: dict[tuple, object] = {}


_CONFIGS: dict[tuple, tuple[str | None, str | None]] = {}


def _s3_config() -> tuple[str | None, str | None]:
    """(endpoint URL, region) as the AWS chain resolves them (environment, then the profile); the
    endpoint is None for AWS itself. Resolved once per environment."""
    key = _env_key()
    if key not in _CONFIGS:
        _CONFIGS[key] = _resolve_s3_config()
    return _CONFIGS[key]


def _resolve_s3_config() -> tuple[str | None, str | None]:
    import botocore.session

    session = botocore.session.get_session()
    endpoint = (os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
                or _profile_value(session, "endpoint_url"))
    region = session.get_config_variable("region")
    return endpoint or None, region or None


def _profile_value(session, name: str) -> str | None:
    try:
        cfg = session.get_scoped_config()
    except Exception:  # an unknown profile: the probe says so
        return None
    s3 = cfg.get("s3") if isinstance(cfg.get("s3"), dict) else {}
    return s3.get(name) or cfg.get(name)


# the AWS SDK's own configuration that changes where and as whom a store is reached (its chain)
AWS_CHAIN = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE",
             "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_ACCESS_KEY_ID")


def _env_key() -> tuple:
    return tuple(os.environ.get(n) for n in AWS_CHAIN)  # the key id is no secret; it keys a new login


def s3_client():
    """botocore's S3 client for the AWS chain's endpoint and region (credentials: the chain's own)."""
    import botocore.session
    from botocore.config import Config

    endpoint, region = _s3_config()
    return botocore.session.get_session().create_client("s3", endpoint_url=endpoint, region_name=region, config=Config(
        connect_timeout=5, read_timeout=30, retries={"max_attempts": 2, "mode": "standard"}))


def filesystem(loc: ObjectPath):
    """pyarrow's filesystem for ``loc``'s store (credentials: its own AWS chain)."""
    import pyarrow.fs as pafs

    key = (loc.scheme, _env_key())
    if key not in _FILESYSTEMS:
        if loc.scheme == "s3":
            endpoint, region = _s3_config()
            opts = {"connect_timeout": 5, "request_timeout": 60,
                    "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=3)}
            if endpoint:
                opts["endpoint_override"] = endpoint
            if region:
                opts["region"] = region
            _FILESYSTEMS[key] = pafs.S3FileSystem(**opts)
        else:
            _FILESYSTEMS[key] = pafs.FileSystem.from_uri(f"{loc.scheme}://{loc.bucket}")[0]
    return _FILESYSTEMS[key]


def storage_options(loc: ObjectPath) -> dict[str, str] | None:
    """Polars' options for ``loc``: the endpoint and region, never a credential (Polars resolves
    those through the AWS chain itself, with boto3)."""
    if loc.scheme != "s3":
        return None
    endpoint, region = _s3_config()
    opts = {}
    if endpoint:
        opts["aws_endpoint_url"] = endpoint
        if endpoint.startswith("http://"):
            opts["allow_http"] = "true"  # a client option (not "aws_..."): Polars keeps its AWS credential chain
    if region:
        opts["aws_region"] = region
    return opts


def _call(loc: ObjectPath, fn):
    """``fn(filesystem)``; a missing object is ``FileNotFoundError``, any other failure an
    ``OSError`` naming the object."""
    try:
        return fn(filesystem(loc))
    except FileNotFoundError:
        raise
    except OSError as exc:
        text = str(exc)
        if "NoSuchKey" in text or "Path does not exist" in text or "does not exist" in text.lower():
            raise FileNotFoundError(f"{loc}: no such object") from None
        raise OSError(f"{loc}: {text.splitlines()[0] if text else type(exc).__name__}") from None


# --- Parquet through Polars ------------------------------------------------------------------------

def read_parquet(source, **kwargs) -> pl.DataFrame:
    if isinstance(source, ObjectPath):
        return pl.read_parquet(str(source), storage_options=storage_options(source), **kwargs)
    return pl.read_parquet(source, **kwargs)


def scan_parquet(sources, **kwargs) -> pl.LazyFrame:
    many = sources if isinstance(sources, list | tuple) else [sources]
    if many and isinstance(many[0], ObjectPath):
        urls = [str(s) for s in many]
        return pl.scan_parquet(urls if isinstance(sources, list | tuple) else urls[0],
                               storage_options=storage_options(many[0]), **kwargs)
    return pl.scan_parquet(sources, **kwargs)
