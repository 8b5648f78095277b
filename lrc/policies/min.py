from lrc.policies.base import Policy

INF = float("inf")


class MIN(Policy):
    """Belady's MIN: evict the block accessed farthest in the future. Needs the whole future
    access sequence, so only the simulator can run it (it fills ``refs.next_access``)."""

    name = "min"
    needs_future = True

    def priority(self, refs, block):
        return -refs.next_access.get(block, INF)
