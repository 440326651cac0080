"""The dashboard's guard: Host (DNS rebinding), same-origin + token writes, escaping, CSP,
path traversal in every URL parameter (HTTP level, plus raw requests to a real server)."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from serve_helpers import token_of

from eval_harness.serve.security import CSP, allowed_hosts, bad_path

SCRIPT = '<script>alert("answer")</script>'
RATIONALE = '<img src=x onerror=alert("rationale")>'
TRAVERSALS = ["..", "../../etc/passwd", "..%2F..%2Fetc%2Fpasswd", "%2e%2e%2f%2e%2e%2fetc",
              "..%5c..%5cwin.ini", "%00", "/etc/passwd", "....//....//etc"]


def _label_body(client) -> dict[str, str]:
    data = client.app.dash.cache.cached("starter")
    run = next(iter(data.runs.values()))
    return {"run": run.run_id, "case": data.case_order[0], "judge": "correct", "label": "right"}


def _post(client, body: dict, headers: dict[str, str]):
    return client.post("/e/starter/labels", content=json.dumps(body), headers=headers)


def test_wrong_host_refused(client) -> None:
    assert client.get("/", headers={"Host": "127.0.0.1:8765"}).status_code == 200
    assert client.get("/", headers={"Host": "localhost:8765"}).status_code == 200
    for host in ("evil.example:8765", "127.0.0.1:9999", "attacker.test", ""):
        r = client.get("/e/starter", headers={"Host": host})
        assert r.status_code == 421 and "Host" in r.text, host
    assert allowed_hosts("0.0.0.0", 80) is None  # wildcard bind: `serve` warns instead


def test_cross_origin_and_tokenless_writes_refused(client, runs_copy: Path) -> None:
    token = token_of(client.get("/e/starter").text)
    body = _label_body(client)
    json_h = {"Content-Type": "application/json"}
    same = {"Origin": "http://127.0.0.1:8765"}
    cases = [
        ({**json_h, "Origin": "http://evil.example", "X-CSRF-Token": token}, "cross-origin"),
        ({**json_h, "Origin": "http://127.0.0.1:9999", "X-CSRF-Token": token}, "cross-origin"),
        ({**json_h, "X-CSRF-Token": token}, "without an Origin"),
        ({**json_h, **same}, "token"),
        ({**json_h, **same, "X-CSRF-Token": "0" * 64}, "token"),
        ({"Content-Type": "application/x-www-form-urlencoded", **same, "X-CSRF-Token": token},
         "application/json"),
    ]
    for headers, why in cases:
        r = _post(client, body, headers)
        assert r.status_code == 403 and why in r.text, (headers, r.text)
    assert not (runs_copy / "starter" / "labels.jsonl").exists()
    # another session's token is refused too: tokens are bound to the session cookie
    client.cookies.clear()
    r = _post(client, body, {**json_h, **same, "X-CSRF-Token": token})
    assert r.status_code == 403
    token2 = token_of(client.get("/e/starter").text)
    assert token2 != token
    assert _post(client, body, {**json_h, **same, "X-CSRF-Token": token2}).status_code == 200
    assert _post(client, body, {**json_h, "Sec-Fetch-Site": "same-origin",
                                "X-CSRF-Token": token2}).status_code == 200


def test_security_headers(client) -> None:
    for url in ("/", "/e/starter", "/static/app.js", "/e/nope"):
        r = client.get(url)
        assert r.headers["content-security-policy"] == CSP, url
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["x-frame-options"] == "DENY"
    assert "script-src 'self'" in CSP and "unsafe-inline" not in CSP.split("style-src")[0]
    page = client.get("/e/starter").text
    assert "<script>" not in page and " on" + "click=" not in page  # no inline script at all


def _plant_markup(runs_copy: Path) -> tuple[str, str]:
    run = sorted((runs_copy / "starter").glob("*/cases/*"))[0]
    outs = json.loads((run / "outputs.json").read_text())
    outs["output"] = SCRIPT
    (run / "outputs.json").write_text(json.dumps(outs))
    rec = json.loads((run / "record.json").read_text())
    rec["scores"]["correct"]["rationale"] = RATIONALE
    (run / "record.json").write_text(json.dumps(rec))
    (run / "stderr.log").write_text(SCRIPT)
    return run.parent.parent.name, run.name


def test_markup_in_answer_and_rationale_is_escaped(client, runs_copy: Path) -> None:
    _, case = _plant_markup(runs_copy)
    page = client.get(f"/e/starter/case/{case}").text
    assert SCRIPT not in page and RATIONALE not in page
    assert "&lt;script&gt;alert(&#34;answer&#34;)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(&#34;rationale&#34;)&gt;" in page
    search = client.get("/e/starter/search?q=" + "%3Cscript%3E").text
    assert "<script>alert" not in search and f"/case/{case}" in search


@pytest.mark.parametrize("bad", TRAVERSALS)
def test_traversal_in_every_url_parameter(client, bad: str) -> None:
    client.get("/e/starter")
    data = client.app.dash.cache.cached("starter")
    cid = data.condition_ids[0]
    # in a path the client would resolve a literal ".." itself (test_real_server_* sends
    # them raw): here they arrive percent-encoded, as a hostile link can write them
    seg = bad.replace(".", "%2e").replace("/", "%2f")
    urls = [f"/e/{seg}", f"/e/starter/case/{seg}", f"/e/starter/chart/{seg}.svg",
            f"/static/{seg}", f"/e/{seg}/token", f"/e/starter/compare?a={bad}",
            f"/e/starter/compare?a={cid}&b={bad}", f"/e/starter/compare?baseline={bad}",
            f"/e/starter?verdict={bad}", f"/e/starter?judge={bad}", f"/e/starter?level={bad}",
            f"/e/starter?level=model%3D{bad}"]
    for url in urls:
        r = client.get(url)
        assert r.status_code in (400, 404), (url, r.status_code)
        assert "root:" not in r.text and "[fonts]" not in r.text
    token = token_of(client.get("/e/starter").text)
    for field in ("run", "case", "judge"):
        body = {**_label_body(client), field: bad}
        r = _post(client, body, {"Content-Type": "application/json", "X-CSRF-Token": token,
                                 "Origin": "http://127.0.0.1:8765"})
        assert r.status_code in (400, 404), (field, r.status_code)
    assert client.get("/e/starter/search?q=" + bad).status_code in (200, 400)  # text, not a path


def test_bad_path_rule() -> None:
    assert bad_path("/e/../x") and bad_path("/e/%2e%2e/x") and bad_path("/e/a%2Fb")
    assert bad_path("/static/%5c") and bad_path("/e/./x") and bad_path("/e/a%00")
    assert not bad_path("/e/starter/case/add-01") and not bad_path("/e/x..y")


def _raw(url: str, path: str, host: str | None = None) -> tuple[int, str]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    conn.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
    conn.putheader("Host", host or parts.netloc)
    conn.endheaders()
    resp = conn.getresponse()
    body = resp.read().decode("utf-8", "replace")
    conn.close()
    return resp.status, body


def test_real_server_refuses_rebinding_and_raw_traversal(runs_copy: Path) -> None:
    from eval_harness.serve.live import background_server

    with background_server([runs_copy], wait_s=120) as (url, _app):
        assert _raw(url, "/")[0] == 200
        status, text = _raw(url, "/", host="rebound.attacker.example")
        assert status == 421 and "Host" in text
        for path in ("/static/../../../../etc/passwd", "/e/starter/case/../../../../etc/passwd",
                     "/static/%2e%2e/%2e%2e/app.py", "/e/starter/case/..%2f..%2frun.json"):
            status, text = _raw(url, path)
            assert status == 400 and "root:" not in text, path
