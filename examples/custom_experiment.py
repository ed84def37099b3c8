"""A custom regret experiment from TOML: three private successive-elimination variants.

Run: ``python examples/custom_experiment.py [OUT]`` (seconds). The same file runs as
``dp-regret run experiment.toml --out OUT``; a killed run resumes where it stopped.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from learners.experiment import load_config, plot_results, run_experiment

CONFIG = """
name = "my-experiment"
seed = 7
repetitions = 4
horizon = 20_000
epsilons = [0.5, 1.0]

[instance]
kind = "bernoulli"
arms = 5

[[algorithms]]
name = "dist-dp-se"

[[algorithms]]
name = "dist-rdp-se"
params = { scale = 10 }

[[algorithms]]
name = "ldp-se"
"""

out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "my-experiment"
out.parent.mkdir(parents=True, exist_ok=True)
toml = out.parent / "my-experiment.toml"
toml.write_text(CONFIG)
folder = run_experiment(load_config(toml), out, progress=False)
summary = json.loads((folder / "summary.json").read_text())
print(f"results in {folder}")
print(json.dumps(summary, indent=1)[:1200])
print("plots:", [str(p) for p in plot_results(folder)])
