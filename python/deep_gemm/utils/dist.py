"""DeepGEMM's torch.distributed helpers for multi-GPU tests (torch is imported when they are called).

The cluster comes from the environment as in DeepGEMM: MASTER_ADDR (127.0.0.1), MASTER_PORT (8361), WORLD_SIZE
(the number of nodes, 1) and RANK (this node's index, 0); each node runs ``num_local_ranks`` processes.
"""
import inspect
import os

__all__ = ['init_dist', 'uneven_all_gather', 'dist_print']

# The local rank given to init_dist, read by dist_print(once_in_node=True).
_local_rank = None


def init_dist(local_rank: int, num_local_ranks: int):
    """Joins the NCCL process group as global rank node_rank * num_local_ranks + local_rank, makes cuda:local_rank
    the current and default device; returns (rank, world size, a group of every rank)."""
    import torch
    import torch.distributed as dist
    global _local_rank
    address = os.getenv('MASTER_ADDR', '127.0.0.1')
    port = int(os.getenv('MASTER_PORT', '8361'))
    num_nodes = int(os.getenv('WORLD_SIZE', 1))
    node_rank = int(os.getenv('RANK', 0))
    _local_rank = local_rank

    options = {'backend': 'nccl', 'init_method': f'tcp://{address}:{port}',
               'world_size': num_nodes * num_local_ranks, 'rank': node_rank * num_local_ranks + local_rank}
    # Binding the group to a device (torch >= 2.3) lets NCCL set up its communicator eagerly.
    if 'device_id' in inspect.signature(dist.init_process_group).parameters:
        options['device_id'] = torch.device(f'cuda:{local_rank}')
    dist.init_process_group(**options)
    torch.set_default_device('cuda')
    torch.cuda.set_device(local_rank)
    everyone = dist.new_group(list(range(num_nodes * num_local_ranks)))
    return dist.get_rank(), dist.get_world_size(), everyone


def uneven_all_gather(tensor, dim: int = 0, group=None):
    """All-gathers tensors whose size along ``dim`` differs between ranks; the result is their concatenation
    along ``dim`` in rank order (each rank's part at its own size)."""
    import torch
    import torch.distributed as dist
    world_size = dist.get_world_size(group)
    size = torch.tensor([tensor.shape[dim]], dtype=torch.long, device=tensor.device)
    sizes = [torch.empty_like(size) for _ in range(world_size)]
    dist.all_gather(sizes, size, group=group)
    sizes = [int(s.item()) for s in sizes]

    # all_gather needs equal shapes: pad every part to the largest, then cut each back.
    largest = max(sizes)
    if tensor.shape[dim] < largest:
        pad_shape = list(tensor.shape)
        pad_shape[dim] = largest - tensor.shape[dim]
        tensor = torch.cat((tensor, tensor.new_zeros(pad_shape)), dim=dim)
    else:
        tensor = tensor.contiguous()
    parts = [torch.empty_like(tensor) for _ in range(world_size)]
    dist.all_gather(parts, tensor, group=group)
    return torch.cat([part.narrow(dim, 0, n) for part, n in zip(parts, sizes)], dim=dim)


def dist_print(s: str = '', once_in_node: bool = False) -> None:
    """Prints ``s`` (on local rank 0 only with once_in_node), then waits for every rank."""
    import torch.distributed as dist
    if _local_rank is None:
        raise RuntimeError('dist_print: init_dist must be called first (it records the local rank)')
    if not once_in_node or _local_rank == 0:
        print(s, flush=True)
    dist.barrier()
