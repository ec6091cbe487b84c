"""KV pool defragmentation (plan 0002 P14-P15): Tier 0 compacts one request, Tier 1 the whole pool.

With page_size = 1 a pool that serves requests for hours scatters every request's rows and splinters its free
space. Modules, one job each: `report` (how fragmented a pool is), `plan` (which rows move where, pure: a
dropped or failed plan changes nothing), `schedule` (the order in which rows can move in place: waves of
independent moves, cycles through a scratch buffer), `move_kernel` (one Triton launch moving rows of every
layer), `execute` (the moves, then the slot lists, tables and allocator rewritten in place through the
allocator's own `owned_mask` and `reassign`) and `tiers` (both tiers end to end, for a pool or a running engine,
called from the engine's `between_steps`).

    from kernel.defrag import compact_engine
    from kernel.engine import Engine
    engine = Engine(config, backend="cuda", device="cuda", graphs=True)
    engine.between_steps = lambda engine, requests: compact_engine(engine, requests, tier=1)

Every request keeps its rows in their order (verify attention's outputs are bit for bit the same), and the
pool tensor and the table stay where they are, so captured CUDA graphs replay on the compacted pool.
"""

from kernel.defrag.execute import apply, execute_moves
from kernel.defrag.plan import DefragError, MovePlan, plan_tier0, plan_tier1
from kernel.defrag.report import Fragmentation, fragmentation, runs
from kernel.defrag.tiers import compact_engine, compact_pool, compact_request

__all__ = [
    "DefragError",
    "Fragmentation",
    "MovePlan",
    "apply",
    "compact_engine",
    "compact_pool",
    "compact_request",
    "execute_moves",
    "fragmentation",
    "plan_tier0",
    "plan_tier1",
    "runs",
]
