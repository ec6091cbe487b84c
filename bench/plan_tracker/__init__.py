"""The tracker's own benchmarks (the kernel's are ``python -m bench``): scripts, each run from the repository root.

    python bench/plan_tracker/speed.py            # tracker status / update --check / report / show ... wall times
    python bench/plan_tracker/verify_overhead.py  # tracker verify against plain pytest
    python bench/plan_tracker/verdict_noise.py    # how often noise makes a bench gate's verdict lie

They write result files (schema ``tracker-bench-result``) into bench/results/ (see bench/README.md).
"""
