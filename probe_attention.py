import os, sys, torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "benchmarks"))
import gpu_attention_conv as g
ks = g.made_by(g.ninetoothed, g, g.kernels)
q, k, v = (torch.randn(2, 8, 1024, 64, device="cuda", dtype=torch.float16) for _ in range(3))
o = torch.empty_like(q)
kern = ks["attention"]
kern.pin({"ninetoothed_BLOCK_SIZE_0": 64, "ninetoothed_BLOCK_SIZE_1": 64, "num_warps": 4}) if os.environ.get("PIN") else None
kern(q, k, v, False, o)
torch.cuda.synchronize()
print("tuned", kern.tuning_report()[-1]["chosen"] if kern.tuning_report() else None, flush=True)
for _ in range(3):
    kern(q, k, v, False, o)
torch.cuda.synchronize()
print("done", flush=True)
