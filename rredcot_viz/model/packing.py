"""Packing many continuations after many prefixes of one sequence into a few forward passes.

The sequence's key/value cache is computed once. Each continuation becomes a *block*
``[ids[cut-1]] + context + target[:-1]`` placed after the cached sequence, with a custom attention mask: block
tokens see the cached positions ``< cut-1`` and the earlier tokens of their own block, and take the
positions ``cut-1, cut, ...`` they would have had in a re-encoded prefix. Repeating the prefix's last token
costs one token per block and makes the first target token's log-prob come out of the same pass (it is
predicted by that repeated token), so nothing of the long prefix pass has to be kept but its cache. The last
target token only needs to be predicted, never read, so it is not in the block: a block costs exactly as many
tokens as it has context and target tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Continuation:
    """Score ``target`` after ``ids[:cut] + context``; ``cut`` counts tokens of the full sequence (>= 1)."""

    cut: int
    context: tuple[int, ...]
    target: tuple[int, ...]

    @property
    def block_length(self) -> int:
        """Tokens in the block: the repeated prefix token, the context and the target but its last token."""
        return len(self.context) + max(len(self.target), 1)


@dataclass
class PackedChunk:
    """One forward pass worth of blocks."""

    members: list[int]  # indices into the request list
    input_ids: torch.Tensor  # (1, L)
    position_ids: torch.Tensor  # (1, L)
    attention_mask: torch.Tensor  # (1, 1, L, past + L), additive float
    keep: torch.Tensor  # (N,) chunk positions whose logits predict target tokens
    target_ids: torch.Tensor  # (N,) the tokens those logits must predict
    target_slices: list[slice]  # per member, its slice of ``keep`` / ``target_ids``


def plan_chunks(requests: list[Continuation], max_tokens: int) -> list[list[int]]:
    """Group request indices into chunks of at most ``max_tokens`` block tokens, longest prefixes first.

    Requests are taken by decreasing cut, so a chunk holds neighbouring cuts and needs only the cache up to
    its largest cut; processing chunks in this order lets the cache be cropped monotonically (no copies).
    A block longer than ``max_tokens`` gets a chunk of its own.
    """
    chunks: list[list[int]] = []
    current: list[int] = []
    used = 0
    for index in sorted(range(len(requests)), key=lambda i: -requests[i].cut):
        request = requests[index]
        length = request.block_length
        if current and used + length > max_tokens:
            chunks.append(current)
            current, used = [], 0
        current.append(index)
        used += length
    if current:
        chunks.append(current)
    return chunks


def chunk_past_length(requests: list[Continuation], members: list[int]) -> int:
    """How much of the cached sequence a chunk can see: everything before its largest repeated token."""
    return max(requests[index].cut for index in members) - 1


def build_chunk(
    ids: list[int], requests: list[Continuation], members: list[int], past_length: int, dtype: torch.dtype
) -> PackedChunk:
    tokens: list[int] = []
    positions: list[int] = []
    starts: list[int] = []
    for index in members:
        request = requests[index]
        starts.append(len(tokens))
        block = [ids[request.cut - 1], *request.context, *request.target][: request.block_length]
        tokens.extend(block)
        positions.extend(range(request.cut - 1, request.cut - 1 + len(block)))
    length = len(tokens)
    allowed = torch.zeros(length, past_length + length, dtype=torch.bool)
    keep: list[int] = []
    targets: list[int] = []
    slices: list[slice] = []
    for start, index in zip(starts, members, strict=True):
        request = requests[index]
        end = start + request.block_length
        allowed[start:end, : request.cut - 1] = True  # the cached prefix before the repeated token
        block = torch.ones(end - start, end - start, dtype=torch.bool).tril()
        allowed[start:end, past_length + start : past_length + end] = block
        first = start + len(request.context)  # the position predicting the first target token
        slices.append(slice(len(keep), len(keep) + len(request.target)))
        keep.extend(range(first, first + len(request.target)))
        targets.extend(request.target)
    mask = torch.zeros(allowed.shape, dtype=dtype).masked_fill_(~allowed, torch.finfo(dtype).min)
    return PackedChunk(
        members=members,
        input_ids=torch.tensor([tokens]),
        position_ids=torch.tensor([positions]),
        attention_mask=mask[None, None],
        keep=torch.tensor(keep, dtype=torch.long),
        target_ids=torch.tensor(targets, dtype=torch.long),
        target_slices=slices,
    )
