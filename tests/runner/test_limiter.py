"""Adaptive concurrency: a 429 storm on the billing stub, and the AIMD rule itself."""
from __future__ import annotations

import threading

from cost_helpers import records, write_cost_eval

from eval_harness.runner.limiter import AdaptiveLimiter


def test_429_storm_finishes_with_no_errored_cell_and_lower_concurrency(tmp_path, billing, cli):
    billing.delay = 0.1
    billing.storm(seconds=2.5)  # every 2nd call rejected (Retry-After: 1) for 2.5 s
    # retries: 0, so without the limiter every rejected cell would end errored (24 of 48)
    # and the stub would see 8 calls in flight throughout the storm
    cfg = write_cost_eval(tmp_path, billing, n_cases=24, execution={"retries": 0})
    code, _, err = cli("--config", str(cfg), "--runs-dir", str(tmp_path / "runs"),
                       "--no-analysis", "--concurrency", "8")
    assert code == 0, err
    recs = records(tmp_path / "runs" / "cost").values()
    assert len(recs) == 48 and all(r["status"] == "ok" for r in recs)
    log = billing.calls("runner")
    rejected = [e for e in log if e["status"] == 429]
    assert len(rejected) >= 3
    storm_start, first_429 = log[0]["t_in"], min(e["t_out"] for e in rejected)
    # calls that arrived once the first wave (launched at 8) had drained, during the storm
    during = [e["inflight"] for e in log
              if first_429 + 0.3 < e["t_in"] < storm_start + 2.5]
    assert during and max(during) < 8
    assert any("rate-limited" in " ".join(r.get("notes", [])) for r in recs)


def test_aimd_halves_once_per_epoch_and_grows_back() -> None:
    stop = threading.Event()
    lim = AdaptiveLimiter(8)
    tickets = [lim.acquire(stop) for _ in range(8)]
    assert lim.acquire.__self__.inflight == 8
    for t in tickets[:3]:  # one burst of rejections from one epoch: one halving
        assert t is not None
        lim.release(t, rate_limited=True)
    assert lim.level == 4 and lim.lowest == 4
    for t in tickets[3:]:
        assert t is not None
        lim.release(t, rate_limited=False)
    # five successes at level 4: one increase (after `level` successes)
    assert lim.level == 5
    t = lim.acquire(stop)
    assert t is not None
    lim.release(t, rate_limited=True, retry_after=0.0)
    assert lim.level == 2 and lim.epoch == 2
