from lrc.policies.base import Policy

INF = float("inf")


class CRD(Policy):
    """Cost-weighted Reference Distance: keep the blocks whose next miss would cost the most per
    byte of cache and per stage they must be held until then.

    Priority = (seconds a miss costs per byte) / (stages until the block's next reference), from
    ``refs.costs`` (a rebuild from lineage, or a disk re-read for a block with a disk copy) and
    the next-reference positions MRD uses (predicted jobs included online). A block with no
    future reference goes first. Equal costs reduce it to MRD; a disk copy makes a block cheap
    to lose even when it is read soon."""

    name = "crd"
    needs_order = True

    def bind(self, refs):
        get, density = refs.next_ref.get, refs.costs.density

        def priority(block):
            nxt = get(block)
            if nxt is None:
                return -INF
            return density(block) / max(1, nxt - refs.now + 1)

        return priority
