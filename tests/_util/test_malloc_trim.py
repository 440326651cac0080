"""eval_harness._util.malloc_trim: with the mmap threshold fixed, freed row-sized arrays leave the
resident set; with glibc's dynamic threshold they stay (the reason for the module)."""

from __future__ import annotations

import json
import subprocess
import sys

from eval_harness._util import malloc_trim

# Frees an 8 MiB array (glibc then serves blocks up to 8 MiB from the heap unless the
# threshold is fixed), allocates 24 × 4 MiB with a 64 KiB array pinned after each (so the
# heap cannot shrink from the top), frees the big ones, reports RSS growth in MiB.
PROBE = """
import json, sys
from eval_harness._util import malloc_trim
if sys.argv[1] == "tuned":
    assert malloc_trim.tune()
import numpy as np
def rss():
    return int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) / 1024
base = rss()
first = np.ones(1 << 20); del first
big, pins = [], []
for _ in range(24):
    big.append(np.ones(1 << 19))
    pins.append(np.ones(8192))  # 64 KiB: heap, not numpy's small-block cache
del big
print(json.dumps(rss() - base))
"""


def _growth(mode: str) -> float:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True,
                         check=True)
    return float(json.loads(out.stdout))


def test_freed_arrays_leave_the_resident_set_once_tuned() -> None:
    if not sys.platform.startswith("linux") or malloc_trim._glibc() is None:
        assert malloc_trim.tune() is False  # elsewhere: a no-op that says so
        malloc_trim.trim()
        return
    assert malloc_trim.tune() and malloc_trim.tune()  # idempotent
    malloc_trim.trim()
    assert _growth("tuned") < 16  # the 96 MiB were unmapped when freed
    assert _growth("default") > 64  # glibc's dynamic threshold kept them resident


# 200 × (allocate, touch, free) a 1 MiB array: mapped afresh each time under the tuned
# threshold (256 page faults each), reused from the heap inside `heap_phase`; after the
# phase the tuned threshold is back (the growth probe above would hold again).
LOOP = """
import json, resource, sys
from eval_harness._util import malloc_trim
import numpy as np
assert malloc_trim.tune()
def faults(n=200):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(n):
        a = np.ones(1 << 17); del a
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
tuned = faults()
with malloc_trim.heap_phase():
    faults(1)
    phase = faults()
after = faults()
print(json.dumps([tuned, phase, after]))
"""


def test_heap_phase_reuses_loop_temporaries_and_restores_the_threshold() -> None:
    if not sys.platform.startswith("linux") or malloc_trim._glibc() is None:
        with malloc_trim.heap_phase():  # a no-op elsewhere
            return
    out = subprocess.run([sys.executable, "-c", LOOP], capture_output=True, text=True,
                         check=True)
    tuned, phase, after = json.loads(out.stdout)
    assert tuned > 200 * 200  # every 1 MiB temporary was a fresh mapping
    assert phase < tuned / 20  # inside the phase the heap block was reused
    assert after > 200 * 200  # the tuned threshold is back
