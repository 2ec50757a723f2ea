"""The up-front check of a location (``transforms.storage``): before a command reads, writes or
decides anything, one request tells whether an object store can be used, else ``StorageError``
in one line naming the location and what to set (no credentials, no bucket, no endpoint, no
access). Credentials are resolved by the standard AWS chain (botocore's), never read here."""

from __future__ import annotations

from transforms.storage import NO_CREDENTIALS, ObjectPath, StorageError, _s3_config, filesystem


def probe(loc, *, what: str = "") -> None:
    """``StorageError`` in one line naming ``loc`` and what to set when it cannot be used: no
    credentials, an endpoint that does not answer, no bucket, no access. A local folder passes
    (it is made when written). Cheap: one request."""
    if not isinstance(loc, ObjectPath):
        return
    label = f"{what} {loc}".strip()
    if loc.scheme == "s3":
        _probe_s3(loc, label)
        return
    try:
        import pyarrow.fs as pafs

        info = filesystem(loc).get_file_info(loc.bucket)
        if info.type == pafs.FileType.NotFound:
            raise StorageError(f"{label}: no bucket {loc.bucket!r}: create it, or correct the URL")
    except StorageError:
        raise
    except (OSError, ValueError) as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise StorageError(f"{label}: cannot be used ({first}): check the store's credentials "
                           "(GOOGLE_APPLICATION_CREDENTIALS) and the network") from None


def _probe_s3(loc: ObjectPath, label: str) -> None:
    import botocore.session
    from botocore import exceptions as bx
    from botocore.config import Config

    try:
        session = botocore.session.get_session()
        creds = session.get_credentials()
    except bx.ProfileNotFound as exc:
        raise StorageError(f"{label}: {exc}: set AWS_PROFILE to a profile of ~/.aws/config, or unset it") from None
    except bx.PartialCredentialsError as exc:
        raise StorageError(f"{label}: incomplete credentials ({exc}): set both AWS_ACCESS_KEY_ID and "
                           "AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)") from None
    if creds is None:
        raise StorageError(f"{label}: {NO_CREDENTIALS}")
    endpoint, region = _s3_config()
    client = session.create_client("s3", endpoint_url=endpoint, region_name=region, config=Config(
        connect_timeout=5, read_timeout=20, retries={"max_attempts": 2, "mode": "standard"}))
    where = endpoint or client.meta.endpoint_url
    try:
        client.head_bucket(Bucket=loc.bucket)
    except (bx.EndpointConnectionError, bx.ConnectTimeoutError, bx.ReadTimeoutError, bx.ConnectionClosedError) as exc:
        raise StorageError(f"{label}: cannot reach {where} ({type(exc).__name__}): set AWS_ENDPOINT_URL (or "
                           "AWS_ENDPOINT_URL_S3) to the store's address, or check the network") from None
    except bx.NoCredentialsError:
        raise StorageError(f"{label}: {NO_CREDENTIALS}") from None
    except bx.ClientError as exc:
        code = str(exc.response.get("Error", {}).get("Code", ""))
        if code in ("404", "NoSuchBucket", "NotFound"):
            raise StorageError(f"{label}: no bucket {loc.bucket!r} at {where}: create it, or correct the URL") from None
        if code in ("403", "AccessDenied", "Forbidden", "InvalidAccessKeyId", "SignatureDoesNotMatch"):
            raise StorageError(f"{label}: access denied to bucket {loc.bucket!r} at {where} (credentials from "
                               f"{creds.method}): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) "
                               "of an identity that may read and write it") from None
        raise StorageError(f"{label}: the store at {where} answered {code or 'an error'}: check the URL and "
                           "AWS_ENDPOINT_URL") from None
    except bx.BotoCoreError as exc:
        raise StorageError(f"{label}: {exc}: check AWS_ENDPOINT_URL and the credentials") from None
