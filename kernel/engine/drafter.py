"""The drafter: a tree of T candidate tokens per request and step, from a cheap draft head.

Topology: breadth-first with `branching` children per node (node i > 0 hangs under (i - 1) // branching), so
branching 1 is a chain, 2 a binary tree, >= T - 1 a star; node i is its parent's `rank[i]`-th choice.
Tokens: the draft head is the target model without its layers (embedding -> norm -> LM head), a bigram table
read once at construction: each node's children are the table's top choices after the node's token. It
costs no forward pass, agrees with the target where the layers change little, and disagrees often enough that
every step exercises both acceptance and rejection.

Greedy acceptance (`accept_path`): start at the root (the token the previous step decided); while some child of
the current node carries the target's choice after it, move there. The path's nodes keep their KV rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from kernel.trees import mask_from_parents


@dataclass(frozen=True)
class TreeShape:
    """A fixed draft-tree topology: parents (root -1), each node's rank among its siblings, depths, masks."""

    parents: tuple[int, ...]
    ranks: tuple[int, ...]
    depths: tuple[int, ...]
    masks: tuple[int, ...]

    @property
    def nodes(self) -> int:
        return len(self.parents)

    def children(self, node: int) -> list[int]:
        return [i for i, p in enumerate(self.parents) if p == node]


def tree_shape(nodes: int, branching: int) -> TreeShape:
    """The breadth-first tree of `nodes` nodes with `branching` children per node."""
    if nodes < 1 or branching < 1:
        raise ValueError(f"tree: expected nodes >= 1 and branching >= 1, got {nodes}, {branching}")
    parents = [-1] + [(i - 1) // branching for i in range(1, nodes)]
    ranks = [0] + [(i - 1) % branching for i in range(1, nodes)]
    depths = [0] * nodes
    for i in range(1, nodes):
        depths[i] = depths[parents[i]] + 1
    return TreeShape(tuple(parents), tuple(ranks), tuple(depths), tuple(mask_from_parents(parents)))


class Drafter:
    """Proposes each request's tree tokens from a [vocab, k] table of the draft head's top-k choices."""

    def __init__(self, draft_logits: torch.Tensor, shape: TreeShape) -> None:
        k = min(max(shape.ranks) + 1, draft_logits.shape[1])
        self.shape = shape
        self.table: list[list[int]] = torch.topk(draft_logits.float().cpu(), k, dim=1).indices.tolist()

    def propose(self, root: int) -> list[int]:
        """Tree tokens for one request whose next (already decided) token is `root`."""
        tokens = [root] * self.shape.nodes
        for i in range(1, self.shape.nodes):
            choices = self.table[tokens[self.shape.parents[i]]]
            tokens[i] = choices[self.shape.ranks[i] % len(choices)]
        return tokens


def accept_path(shape: TreeShape, tokens: Sequence[int], choice: Sequence[int]) -> list[int]:
    """Greedy acceptance: node indices of the longest root path whose every step matches the target's choice
    (`choice[i]`: the target's argmax after node i). The target's choice after the last node is the bonus."""
    path = [0]
    while True:
        node = path[-1]
        nxt = next((c for c in shape.children(node) if tokens[c] == choice[node]), None)
        if nxt is None:
            return path
        path.append(nxt)
