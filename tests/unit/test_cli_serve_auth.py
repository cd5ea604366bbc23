"""``guardrail serve`` asks for a token on a public interface; on loopback it starts without one.

The decision runs through ``guardrail.cli.main`` (exit status, stderr) with ``uvicorn.run``
replaced at its boundary, so nothing listens; the model stages are off, so nothing loads. A real
server process is in ``tests/integration/test_service_server.py``.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from guardrail.cli import main
from guardrail.cli.serve import is_loopback

uvicorn = pytest.importorskip("uvicorn", reason="the service extra is not installed")


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every ``uvicorn.run`` call the command makes, instead of serving."""
    calls: list[dict[str, Any]] = []

    def run(app: Any, **kwargs: Any) -> None:
        calls.append({"app": app, **kwargs})

    monkeypatch.setattr(uvicorn, "run", run)
    monkeypatch.delenv("GUARDRAIL_API_TOKEN", raising=False)
    return calls


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "guardrail.yaml"
    path.write_text(
        "disabled_stages: [coherence, claims, fact_validation, hallucination, correction]\n"
    )
    return path


def serve(config: Path, *flags: str) -> int:
    return main(["serve", "--config", str(config), "--log-level", "warning", *flags])


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LocalHost.", "::ffff:127.0.0.1"],
)
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize(
    "host", ["0.0.0.0", "::", "[::]", "", "192.168.1.20", "10.0.0.1", "fe80::1"]
)
def test_public_hosts(host: str) -> None:
    assert not is_loopback(host)


def test_a_name_counts_as_loopback_only_when_every_address_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    addresses = {
        "box.internal": ["127.0.1.1", "::1"],
        "mixed.internal": ["127.0.0.1", "192.168.1.20"],
        "public.example": ["203.0.113.7"],
    }

    def getaddrinfo(host: str, *args: Any, **kwargs: Any) -> list[Any]:
        if host not in addresses:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, 0)) for a in addresses[host]]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    assert is_loopback("box.internal")
    assert not is_loopback("mixed.internal")
    assert not is_loopback("public.example")
    assert not is_loopback("nowhere.invalid")  # unresolvable: not known to be loopback


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20"])
def test_a_public_host_without_a_token_refuses_to_start(
    host: str,
    served: list[dict[str, Any]],
    config: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store = tmp_path / "results.sqlite"
    assert serve(config, "--host", host, "--store", str(store)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"guardrail: error: refusing to serve on {host} without a token")
    assert "export GUARDRAIL_API_TOKEN=" in err
    assert "Authorization: Bearer <token>" in err
    assert "--no-auth" in err
    assert "Traceback" not in err
    assert served == []
    assert not store.exists()  # refused before anything is opened


def test_loopback_without_a_token_starts_as_before(
    served: list[dict[str, Any]], config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert serve(config, "--no-store") == 0
    [call] = served
    assert (call["host"], call["port"]) == ("127.0.0.1", 8000)
    err = capsys.readouterr().err
    assert "serving on http://127.0.0.1:8000/ (no store, no auth)" in err
    assert "warning" not in err


@pytest.mark.parametrize("host", ["localhost", "::1", "127.0.0.2"])
def test_other_loopback_hosts_start_without_a_token(
    host: str, served: list[dict[str, Any]], config: Path
) -> None:
    assert serve(config, "--no-store", "--host", host) == 0
    assert [c["host"] for c in served] == [host]


def test_no_auth_starts_a_public_host_open_with_a_warning(
    served: list[dict[str, Any]], config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from fastapi.testclient import TestClient

    assert serve(config, "--no-store", "--host", "0.0.0.0", "--port", "8123", "--no-auth") == 0
    [call] = served
    assert call["host"] == "0.0.0.0"
    err = capsys.readouterr().err
    assert err.startswith("guardrail: warning: --no-auth on 0.0.0.0:8123")
    assert "every stored result" in err and "anyone who reaches the port" in err
    assert "(no store, no auth (--no-auth))" in err
    assert TestClient(call["app"]).get("/metrics").status_code == 200  # open, as asked


def test_a_token_starts_a_public_host_as_before(
    served: list[dict[str, Any]],
    config: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from fastapi.testclient import TestClient

    monkeypatch.setenv("GUARDRAIL_API_TOKEN", "s3cret")
    assert serve(config, "--no-store", "--host", "0.0.0.0") == 0
    [call] = served
    assert call["host"] == "0.0.0.0"
    err = capsys.readouterr().err
    assert "(no store, bearer token required)" in err and "warning" not in err
    client = TestClient(call["app"])
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer s3cret"}).status_code == 200


def test_no_auth_beside_a_token_is_refused(
    served: list[dict[str, Any]],
    config: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("GUARDRAIL_API_TOKEN", "s3cret")
    assert serve(config, "--no-store", "--host", "0.0.0.0", "--no-auth") == 2
    err = capsys.readouterr().err
    assert "--no-auth and $GUARDRAIL_API_TOKEN contradict each other" in err
    assert served == []
