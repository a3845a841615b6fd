"""SHARED CACHE: tunes add_one for one key; prints whether the choice came from the disk cache
(another process tuned it first) and what it is."""

import torch

from stress_kernels import add_one

x = torch.randn(54321)
y = torch.empty_like(x)
add_one(x, y)
assert torch.equal(y, x + 1)
(record,) = add_one.tuning_report()
print(f"from_disk={record['from_disk']} chosen={sorted(record['chosen'].items())}")
