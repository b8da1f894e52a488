"""S3 Tables end to end on ministack, started by this module on 127.0.0.1:

- the adapter's PyIceberg catalog path (REST catalog, SigV4 with signing name `s3tables`,
  exactly the settings a `table_bucket_arn` profile produces, only the endpoint pointed
  at the emulator): namespaces, tables, relations, columns, schema evolution through the
  code the materializations use, drops;
- Spark on the same catalog with AWS's production settings (Iceberg's REST catalog with
  SigV4 for `s3tables`, S3FileIO; Iceberg's AWS bundle is on the classpath), the profile
  overriding only the endpoints: `catalog_uri`, and `catalog_properties` `s3.endpoint`
  and `s3.path-style-access` (an IP address takes no bucket sub-domain). Credentials come
  from the default chain (the fake keys in the environment), the region from the ARN.
  The integration project's catalog operations are built twice (`CATALOG_OPERATIONS` in harness.py;
  the second build evolves schemas through PyIceberg with SigV4);
- what reaches the emulator: a recording reverse proxy in front of ministack shows that
  every catalog request of Spark and of PyIceberg carries a SigV4 signature by the
  environment's key for `s3tables` in the ARN's region that verifies with its secret,
  and that S3FileIO writes the data.

Emulator gaps, each worked around here and not in the adapter:
- ministack's Iceberg REST endpoint has no DELETE routes (drop table, drop namespace):
  those are done through the S3 Tables management API, as AWS's own console does;
- Java Iceberg sends `"location": null` when it creates a table without a location and
  ministack stores that null and answers `location: null`, which Java Iceberg cannot
  parse ("Cannot parse to a string value: location: null"; tried without the key): the
  test profile sets the test-only `emulator_table_location` (real S3 Tables assigns
  locations itself);
- ministack's catalog hands out S3 settings of its own (its endpoint, path-style access,
  static keys `test`) in `/v1/config` defaults and in each loaded table's config, which
  Iceberg lets win over the profile's for that table: S3FileIO signs its S3 requests with
  those keys, not the default chain's (ministack checks no signature). Nothing is set for
  this; it is why S3 data requests are not checked for the environment's key;
- ministack keeps no snapshot log (`<table>.history` is empty) and drops the properties
  sent with a table creation: the three data tests that read those are left out of the
  emulator builds (`EMULATOR_GAP_TESTS`); they run in the local builds.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, urlsplit

import boto3
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.types import StringType

from dbt.adapters.s3tables.catalogs.config import catalog_config_for
from dbt.adapters.s3tables.catalogs.ddl import CatalogDdl
from dbt.adapters.s3tables.catalogs.iceberg import IcebergCatalog
from dbt.adapters.s3tables.credentials import S3TablesCredentials
from dbt.adapters.s3tables.errors import AlreadyExists, InvalidArgument, SchemaNotEmpty
from tests.functional.emulators import (
    FAKE_AWS_ENV,
    REGION,
    fake_aws_environment,
    ministack,
)
from tests.functional.harness import (
    CATALOG_OPERATIONS_ONLY,
    INTEGRATION_PROJECT,
    dbt_in,
    local_catalog,
    node_statuses,
    passed_run_results,
    write_profiles,
    write_project,
)

PROJECT = INTEGRATION_PROJECT
BUCKET = "dbt-s3tables-test"
# Data tests reading what ministack does not keep (see the module docstring).
EMULATOR_GAP_TESTS = (
    "orders_partitioned_properties",  # tblproperties sent with the create
    "customer_tiers_upserted",  # `.history` (snapshot log)
    "orders_appended_batches",  # `.history` (snapshot log)
)


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("ministack") / "ministack.log"
    with fake_aws_environment(), ministack(log) as url:
        yield url


@pytest.fixture(scope="module")
def management(endpoint: str):
    """boto3's S3 Tables management API on the emulator."""
    return boto3.client("s3tables", endpoint_url=endpoint, region_name=REGION, **_keys())


def _keys() -> dict[str, str]:
    return {
        "aws_access_key_id": FAKE_AWS_ENV["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": FAKE_AWS_ENV["AWS_SECRET_ACCESS_KEY"],
    }


@pytest.fixture(scope="module")
def bucket_arn(management) -> str:
    return management.create_table_bucket(name=BUCKET)["arn"]


@pytest.fixture(scope="module")
def iceberg(endpoint: str, bucket_arn: str) -> Iterator[IcebergCatalog]:
    credentials = S3TablesCredentials.from_dict(
        {
            "schema": "analytics",
            "table_bucket_arn": bucket_arn,
            "catalog_uri": f"{endpoint}/iceberg",
        }
    )
    config = catalog_config_for(credentials)
    assert config.catalog_type == "s3tables"
    assert credentials.s3tables_rules is True
    with fake_aws_environment():
        yield IcebergCatalog(config)


def test_catalog_requests_are_signed_for_s3tables(iceberg: IcebergCatalog) -> None:
    properties = iceberg.config.pyiceberg_properties()
    assert properties["rest.sigv4-enabled"] == "true"
    assert properties["rest.signing-name"] == "s3tables"
    assert properties["rest.signing-region"] == REGION
    adapters = {type(a).__name__ for a in iceberg.catalog._session.adapters.values()}
    assert "SigV4Adapter" in adapters


def test_namespaces_tables_columns_and_drops(
    iceberg: IcebergCatalog, management, bucket_arn: str
) -> None:
    ddl = CatalogDdl(iceberg, s3tables_rules=True)
    ddl.create_namespace("emulated")
    assert "emulated" in iceberg.list_namespaces()
    with pytest.raises(AlreadyExists):
        ddl.create_namespace("emulated")
    with pytest.raises(InvalidArgument, match="starts with `aws`"):
        ddl.create_namespace("aws_reserved")

    ddl.create_table("emulated.events", [{"id": "bigint"}, {"ts": "timestamp"}], not_null=["id"])
    relations = iceberg.list_relations("emulated")
    assert [(r.name, r.kind) for r in relations] == [("events", "table")]
    columns = iceberg.columns("emulated", "events", "table")
    assert [(c.name, c.data_type) for c in columns] == [("id", "bigint"), ("ts", "timestamp")]

    # The schema commit incremental models make (metadata only, through REST + SigV4).
    iceberg.evolve_schema("emulated", "events", [(("note",), StringType())], [])
    assert [c.name for c in iceberg.columns("emulated", "events", "table")] == [
        "id",
        "ts",
        "note",
    ]
    ddl.add_column("emulated.events", "amount", "decimal(12,2)", comment="in euros")
    state = iceberg.table_state("emulated", "events")
    assert state.schema.find_field("amount").doc == "in euros"
    assert iceberg.set_properties_if_changed("emulated", "events", {"owner": "dbt"})
    assert iceberg.table_state("emulated", "events").properties["owner"] == "dbt"

    with pytest.raises(SchemaNotEmpty):
        ddl.drop_namespace("emulated")
    # Workaround (module docstring): no REST DELETE route on the emulator.
    management.delete_table(tableBucketARN=bucket_arn, namespace="emulated", name="events")
    assert iceberg.list_relations("emulated") == []
    management.delete_namespace(tableBucketARN=bucket_arn, namespace="emulated")
    assert "emulated" not in iceberg.list_namespaces()


def _profile(endpoint: str, bucket_arn: str, *, schema: str = "analytics") -> dict:
    """A production `table_bucket_arn` profile output with only the endpoints pointed at
    `endpoint` (the catalog's, and S3's through `catalog_properties`, which Spark's and
    PyIceberg's catalogs both get), plus the test-only `emulator_table_location`."""
    return {
        "type": "s3tables",
        "method": "session",
        "master": "local[2]",
        "schema": schema,
        "threads": 2,
        "table_bucket_arn": bucket_arn,
        "catalog_uri": f"{endpoint}/iceberg",
        "catalog_properties": {
            "s3.endpoint": endpoint,
            "s3.path-style-access": "true",
        },
        # Workaround (module docstring): ministack answers `location: null`.
        "emulator_table_location": f"s3://{BUCKET}",
    }


def _dbt(tmp_path: Path, endpoint: str, *args: str, project: Path = PROJECT) -> dict:
    """Runs dbt on `project` (the integration project); its run results."""
    # The adapter's table bucket check (boto3 `s3tables`) goes to the emulator too.
    env = {**os.environ, **FAKE_AWS_ENV, "AWS_ENDPOINT_URL_S3TABLES": endpoint}
    result = dbt_in(tmp_path, project, *args, env=env, timeout=1200)
    return passed_run_results(result, tmp_path / "target")


def _build(tmp_path: Path, endpoint: str, *extra: str) -> dict:
    return _dbt(
        tmp_path,
        endpoint,
        "build",
        *CATALOG_OPERATIONS_ONLY,
        "--exclude",
        *EMULATOR_GAP_TESTS,
        *extra,
    )


def test_integration_project_on_emulated_s3tables(
    tmp_path: Path, endpoint: str, bucket_arn: str, management
) -> None:
    write_profiles(tmp_path, "integration_tests", _profile(endpoint, bucket_arn), "ministack")
    first = _build(tmp_path, endpoint)
    # The incremental runs' commits through the catalog; the data tests ran on the first.
    second = _build(
        tmp_path, endpoint, "--vars", "{schema_phase: 2}", "--exclude-resource-type", "test"
    )
    for results in (first, second):
        statuses = node_statuses(results)
        assert set(statuses.values()) <= {"success", "pass"}, statuses
    built = {r["unique_id"].split(".")[-1] for r in first["results"]}
    assert {"orders_appended", "customers_evolving", "orders_delete_insert"} <= built
    kinds = {r["unique_id"].split(".")[0] for r in first["results"]}
    assert {"seed", "model", "test", "snapshot"} <= kinds, kinds
    # The tables are S3 Tables tables: the management API lists them.
    tables = management.list_tables(tableBucketARN=bucket_arn, namespace="analytics")["tables"]
    assert {"customers_evolving", "orders_delete_insert"} <= {t["name"] for t in tables}


# ── What reaches the catalog: a recording reverse proxy in front of ministack ──

# Headers that belong to one hop, not to the request the proxy passes on.
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "upgrade", "trailer"}


# `Authorization: AWS4-HMAC-SHA256 Credential=<key>/<date>/<region>/<service>/aws4_request,
# SignedHeaders=<names>, Signature=<hex>`.
SIGV4 = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/"
    r"(?P<service>[^/]+)/aws4_request, ?SignedHeaders=(?P<signed>[^,]+), ?"
    r"Signature=(?P<signature>[0-9a-f]{64})"
)


@dataclass(frozen=True)
class Recorded:
    method: str
    # As sent: path and query, percent-encoded.
    path: str
    # Header names in lower case.
    headers: dict[str, str]
    body: bytes

    @property
    def client(self) -> str:
        """Which client sent it: Java Iceberg's REST client (Spark), PyIceberg, S3FileIO
        (the AWS SDK for Java under Spark), else `other`."""
        if self.headers.get("x-client-version", "").startswith("Apache Iceberg"):
            return "java-iceberg"
        if self.headers.get("user-agent", "").startswith("PyIceberg/"):
            return "pyiceberg"
        if self.headers.get("user-agent", "").startswith("s3fileio/"):
            return "s3fileio"
        return "other"

    def signature_scope(self) -> tuple[str, str, str] | None:
        """(key, region, service) of its SigV4 signature, None if it has none."""
        match = SIGV4.fullmatch(self.headers.get("authorization", ""))
        if not match or match["date"] != self.headers.get("x-amz-date", "")[:8]:
            return None
        return match["key"], match["region"], match["service"]

    def signature_verifies(self, secret: str) -> bool:
        """Whether its signature is the one `secret` gives for what was received (AWS's
        SigV4 steps for a service other than S3, which encodes the path a second time)."""
        match = SIGV4.fullmatch(self.headers.get("authorization", ""))
        if not match:
            return False
        url = urlsplit(self.path)
        signed = match["signed"].split(";")
        canonical = "\n".join(
            [
                self.method,
                quote(url.path, safe="/~"),
                "&".join(sorted(url.query.split("&"))) if url.query else "",
                *(f"{name}:{' '.join(self.headers.get(name, '').split())}" for name in signed),
                "",
                match["signed"],
                # The hash of the body received (Java Iceberg sends the header
                # `x-amz-content-sha256` in base64, but signs the hex hash).
                hashlib.sha256(self.body).hexdigest(),
            ]
        )
        scope = f"{match['date']}/{match['region']}/{match['service']}/aws4_request"
        text = "\n".join(
            [
                "AWS4-HMAC-SHA256",
                self.headers.get("x-amz-date", ""),
                scope,
                hashlib.sha256(canonical.encode()).hexdigest(),
            ]
        )
        key = f"AWS4{secret}".encode()
        for part in scope.split("/"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        expected = hmac.new(key, text.encode(), hashlib.sha256).hexdigest()
        return hmac.compare_digest(expected, match["signature"])


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: RecordingProxy

    def _body(self) -> bytes | None:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0].strip(), 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline().strip():  # trailers
                pass
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else None

    def _forward(self) -> None:
        body = self._body()
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        if body is not None:
            headers["Content-Length"] = str(len(body))
        lowered = {k.lower(): v for k, v in headers.items()}
        self.server.record(Recorded(self.command, self.path, lowered, body or b""))
        # The Host header is passed on as it came: it is part of what was signed.
        upstream = http.client.HTTPConnection(self.server.upstream, timeout=120)
        try:
            upstream.request(self.command, self.path, body, headers)
            response = upstream.getresponse()
            data = response.read()
        finally:
            upstream.close()
        self.send_response_only(response.status, response.reason)
        for name, value in response.getheaders():
            if name.lower() not in HOP_BY_HOP and (
                name.lower() != "content-length" or self.command == "HEAD"
            ):
                self.send_header(name, value)
        if self.command != "HEAD":
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = _forward

    def log_message(self, format: str, *args: object) -> None:
        pass


class RecordingProxy(ThreadingHTTPServer):
    """Passes every request on to `upstream` unchanged (but for its framing) and records it."""

    daemon_threads = True

    def __init__(self, upstream: str) -> None:
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        self.upstream = urlsplit(upstream).netloc
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def record(self, request: Recorded) -> None:
        with self._lock:
            self.requests.append(request)

    def by(self, client: str) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.client == client]


@pytest.fixture
def proxy(endpoint: str) -> Iterator[RecordingProxy]:
    server = RecordingProxy(endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_spark_and_pyiceberg_sign_catalog_requests_for_s3tables(
    tmp_path: Path, endpoint: str, bucket_arn: str, proxy: RecordingProxy
) -> None:
    """One model built through the proxy (catalog and S3 endpoints both): Spark creates the
    table and S3FileIO writes it, the adapter's PyIceberg lists relations; every catalog
    request of both is signed with SigV4 for `s3tables` with the key of the default
    credentials chain, and the signature is right for its secret."""
    output = _profile(proxy.url, bucket_arn, schema="signed")
    write_profiles(tmp_path, "integration_tests", output, "ministack")
    results = _dbt(tmp_path, endpoint, "run", "--select", "recent_events")
    assert [r["status"] for r in results["results"]] == ["success"]

    key, secret = FAKE_AWS_ENV["AWS_ACCESS_KEY_ID"], FAKE_AWS_ENV["AWS_SECRET_ACCESS_KEY"]
    spark, pyiceberg = proxy.by("java-iceberg"), proxy.by("pyiceberg")
    # Spark created the table through the proxy, PyIceberg listed the namespace's tables.
    assert any(r.method == "POST" and r.path.endswith("/namespaces/signed/tables") for r in spark)
    assert any(
        r.method == "GET" and r.path.endswith("/namespaces/signed/tables") for r in pyiceberg
    )
    for request in spark + pyiceberg:
        where = (request.client, request.method, request.path)
        assert request.signature_scope() == (key, REGION, "s3tables"), where
        assert request.signature_verifies(secret), where
    # S3FileIO (not HadoopFileIO) wrote the data file, signed for S3 (with the keys
    # ministack's catalog hands out: see the module docstring).
    writes = [r for r in proxy.by("s3fileio") if r.method == "PUT"]
    assert any("/signed/recent_events/data/" in r.path for r in writes), proxy.requests
    assert all((r.signature_scope() or ("",) * 3)[1:] == (REGION, "s3") for r in writes)


def test_unsigned_or_wrongly_signed_requests_are_told_apart(
    bucket_arn: str, proxy: RecordingProxy
) -> None:
    """The checks above can fail: PyIceberg's catalog with SigV4 turned off sends unsigned
    requests, and with another secret a signature that does not verify."""
    properties = {"type": "rest", "uri": f"{proxy.url}/iceberg", "warehouse": bucket_arn}
    signing = {"rest.signing-name": "s3tables", "rest.signing-region": REGION}
    key, secret = FAKE_AWS_ENV["AWS_ACCESS_KEY_ID"], FAKE_AWS_ENV["AWS_SECRET_ACCESS_KEY"]
    with fake_aws_environment():
        load_catalog("off", **properties, **{"rest.sigv4-enabled": "false"}).list_namespaces()
    unsigned = proxy.by("pyiceberg")
    assert unsigned and all(r.signature_scope() is None for r in unsigned)
    with fake_aws_environment(AWS_SECRET_ACCESS_KEY="not-the-secret"):
        load_catalog(
            "on", **properties, **signing, **{"rest.sigv4-enabled": "true"}
        ).list_namespaces()
    signed = proxy.by("pyiceberg")[len(unsigned) :]
    assert signed and all(r.signature_scope() == (key, REGION, "s3tables") for r in signed)
    assert not any(r.signature_verifies(secret) for r in signed)
    assert all(r.signature_verifies("not-the-secret") for r in signed)


# ── catalogs.yml: the embedded catalog as the profile's, an S3 Tables bucket declared ──

MULTI_NAMESPACE = "multi"
MULTI_MODELS = {
    "events_local.sql": "{{ config(materialized='table') }}\nselect * from {{ ref('events') }}",
    "events_daily.sql": (
        "{{ config(materialized='table', catalog_name='bucket') }}\n"
        "select day, count(*) as events from {{ ref('events_local') }} group by day"
    ),
    "events_latest.sql": (
        "{{ config(materialized='incremental', catalog_name='bucket', unique_key='id',\n"
        "          on_schema_change='append_new_columns') }}\n"
        "select id, day{% if var('phase', 1) == 2 %}, upper(kind) as kind_code{% endif %}\n"
        "from {{ ref('events') }}"
    ),
}


def _bucket_keys(endpoint: str, bucket_arn: str) -> dict:
    """A catalogs.yml catalog's keys for the emulated bucket."""
    return {
        "table_bucket_arn": bucket_arn,
        "catalog_uri": f"{endpoint}/iceberg",
        "catalog_properties": {"s3.endpoint": endpoint, "s3.path-style-access": "true"},
        # Workaround (module docstring): ministack answers `location: null`.
        "emulator_table_location": f"s3://{BUCKET}",
    }


def _laptop_profile(tmp_path: Path, namespace: str) -> dict:
    """The embedded catalog as the profile's (written to `tmp_path`); the output."""
    local = {
        "type": "s3tables",
        "master": "local[2]",
        "schema": namespace,
        "warehouse": str(tmp_path / "warehouse"),
        "threads": 2,
    }
    write_profiles(tmp_path, "multi", local, target="laptop")
    return local


def _build_evolve_and_document(tmp_path: Path, endpoint: str, project: Path) -> dict:
    """`dbt build`, a run with `phase: 2`, `dbt docs generate`; the build's run results."""
    first = _dbt(tmp_path, endpoint, "build", project=project)
    _dbt(tmp_path, endpoint, "run", "--vars", "{phase: 2}", project=project)
    _dbt(tmp_path, endpoint, "docs", "generate", project=project)
    return first


def test_catalogs_yml_puts_marts_in_an_s3tables_bucket(
    tmp_path: Path, endpoint: str, bucket_arn: str, management
) -> None:
    files = {f"models/{name}": sql for name, sql in MULTI_MODELS.items()}
    files["seeds/events.csv"] = (
        "id,day,kind\n1,2024-01-01,click\n2,2024-01-01,view\n3,2024-01-02,click\n"
    )
    project = write_project(tmp_path / "project", "multi", files=files)
    bucket = _bucket_keys(endpoint, bucket_arn)
    catalogs = {
        "catalogs": [
            {
                "name": "bucket",
                "active_write_integration": "marts_bucket",
                "write_integrations": [
                    {
                        "name": "marts_bucket",
                        "catalog_type": "s3_tables",
                        "adapter_properties": bucket,
                    }
                ],
            }
        ]
    }
    (project / "catalogs.yml").write_text(json.dumps(catalogs))
    local = _laptop_profile(tmp_path, MULTI_NAMESPACE)
    first = _build_evolve_and_document(tmp_path, endpoint, project)

    statuses = {r["unique_id"].split(".")[-1]: r["status"] for r in first["results"]}
    assert statuses == dict.fromkeys(
        ["events", "events_local", "events_daily", "events_latest"], "success"
    )
    # The bucket holds the two marts (its management API lists them) and nothing else.
    tables = management.list_tables(tableBucketARN=bucket_arn, namespace=MULTI_NAMESPACE)
    assert sorted(t["name"] for t in tables["tables"]) == ["events_daily", "events_latest"]
    # dbt takes `type` and `threads` out of a profile before it builds the credentials.
    credentials = {k: v for k, v in local.items() if k not in ("type", "threads")}
    embedded = IcebergCatalog(catalog_config_for(S3TablesCredentials.from_dict(credentials)))
    assert sorted(r.name for r in embedded.list_relations(MULTI_NAMESPACE)) == [
        "events",
        "events_local",
    ]
    # Schema evolution of the bucket's table went through the bucket's catalog (SigV4).
    config = catalog_config_for(
        S3TablesCredentials.from_dict({"schema": MULTI_NAMESPACE, **bucket})
    )
    with fake_aws_environment():
        marts = IcebergCatalog(config)
        columns = [c.name for c in marts.columns(MULTI_NAMESPACE, "events_latest", "table")]
        daily = marts.load_table(MULTI_NAMESPACE, "events_daily").scan().to_arrow()
    assert columns == ["id", "day", "kind_code"]
    assert sorted(daily.column("events").to_pylist()) == [1, 2]
    docs = json.loads((tmp_path / "target" / "catalog.json").read_text())
    databases = {
        key.split(".")[-1]: node["metadata"].get("database") for key, node in docs["nodes"].items()
    }
    assert databases == {
        "events": None,
        "events_local": None,
        "events_daily": "bucket",
        "events_latest": "bucket",
    }


# ── catalogs.yml v2 (dbt 1.12): an S3 Tables bucket and an embedded catalog declared ──

V2_MODELS = {
    **MULTI_MODELS,
    # In the declared embedded catalog, addressed by its `catalog_database`.
    "events_archive.sql": (
        "{{ config(materialized='table', catalog_name='archive') }}\n"
        "select id, day from {{ ref('events_latest') }}"
    ),
}


def test_catalogs_v2_puts_marts_in_a_bucket_and_an_embedded_catalog(
    tmp_path: Path, endpoint: str, bucket_arn: str, management
) -> None:
    """The same marts as above from a catalogs.yml in dbt 1.12's v2 spec
    (`use_catalogs_v2`): an `s3_tables` catalog on ministack and a `local` one whose
    relations' database is its `catalog_database`."""
    files = {f"models/{name}": sql for name, sql in V2_MODELS.items()}
    files["seeds/events.csv"] = (
        "id,day,kind\n1,2024-01-01,click\n2,2024-01-01,view\n3,2024-01-02,click\n"
    )
    project = write_project(
        tmp_path / "project", "multi", files=files, settings={"flags": {"use_catalogs_v2": True}}
    )
    namespace = "multi_v2"
    bucket = _bucket_keys(endpoint, bucket_arn)
    archive_folder = tmp_path / "archive"
    catalogs = {
        "catalogs": [
            {
                "name": "bucket",
                "type": "s3_tables",
                "table_format": "iceberg",
                "config": {"s3tables": bucket},
            },
            {
                "name": "archive",
                "type": "local",
                "table_format": "iceberg",
                "config": {
                    "s3tables": {
                        "external_volume": str(archive_folder),
                        "catalog_database": "cold",
                    }
                },
            },
        ]
    }
    (project / "catalogs.yml").write_text(json.dumps(catalogs))
    _laptop_profile(tmp_path, namespace)
    first = _build_evolve_and_document(tmp_path, endpoint, project)

    statuses = {r["unique_id"].split(".")[-1]: r["status"] for r in first["results"]}
    assert statuses == dict.fromkeys(
        ["events", "events_local", "events_daily", "events_latest", "events_archive"], "success"
    )
    tables = management.list_tables(tableBucketARN=bucket_arn, namespace=namespace)
    assert sorted(t["name"] for t in tables["tables"]) == ["events_daily", "events_latest"]
    archive = local_catalog(archive_folder, "cold")
    assert [r.name for r in archive.list_relations(namespace)] == ["events_archive"]
    rows = archive.load_table(namespace, "events_archive").scan().to_arrow()
    assert sorted(rows.column("id").to_pylist()) == [1, 2, 3]
    docs = json.loads((tmp_path / "target" / "catalog.json").read_text())
    databases = {
        key.split(".")[-1]: node["metadata"].get("database") for key, node in docs["nodes"].items()
    }
    assert databases == {
        "events": None,
        "events_local": None,
        "events_daily": "bucket",
        "events_latest": "bucket",
        "events_archive": "cold",
    }
