"""Update rounds: a stage-2 step runs every ``rho`` counted rounds (all rounds, or margin errors
only), the counter the sketched learners and their steps in auto's engine share."""

from __future__ import annotations



from okl._compiled import jit


@jit
def update_round_due(g, counter, global_round, rho, count_margin_errors):
    """Is this stage-2 round an update round? Returns (due, counter).

    ``count_margin_errors`` false: due when the 0-based ``global_round`` % rho == 0; true:
    ``counter`` counts rounds with loss derivative ``g`` != 0 and a round with g != 0 is due
    when the new counter % rho == 1.
    """
    if count_margin_errors:
        if g != 0.0:
            counter += 1
            if counter % rho == 1:
                return True, counter
        return False, counter
    return global_round % rho == 0, counter
