from lrc.policies.base import Policy


class MIN(Policy):
    """Belady's MIN: evict the block accessed farthest in the future. Needs the whole future
    access sequence, so only the simulator can run it (it fills ``refs.next_access``)."""

    name = "min"
    needs_future = True

    def bind(self, refs):  # refs.next_access is filled (or installed) before binding
        na = refs.next_access
        return lambda block: -na[block]
