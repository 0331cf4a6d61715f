"""The count-query workloads of seeds 000 and 002 (generators in :mod:`core.workload`)."""

from ..params import Param
from ..workload import seed000, seed002
from . import WorkloadKind

MAX_ATTRS = Param("max_attrs", "d", "Largest number of QI attributes in one query's condition.", 3,
                  kind="int", low=1, high=8, paper="seeds 000 and 002: up to 3")
SEED = Param("seed", "seed", "Random seed of the query generator (same seed, same queries).", 0,
             kind="int", low=0, high=2**31 - 1)

WORKLOADS = [
    WorkloadKind(
        "seed000", "Small and large counts (seed 000)", seed000, "queries",
        "Random conditions on 1 to 3 QI attributes plus one sensitive value. Half the queries aim at a true "
        "count of 1 to 10 (small sums, where error protects people), half at selectivity bands from 0.5% of "
        "the table upward (large sums, where error costs utility); a band with too few distinct queries "
        "passes its share to the others, so the split can be uneven (Adult: about 3,500 small, 1,500 large).",
        params=(Param("queries", "Q", "Number of queries (half aimed at small counts, half at large ones; "
                      "bands short of distinct queries pass their share on).", 5000, kind="int",
                      low=2, high=50_000, paper="seed 000 §6.1: pools of 5,000"), MAX_ATTRS, SEED),
        paper="seed 000 §6.1", order=10),
    WorkloadKind(
        "seed002", "Conditions x every sensitive value (seed 002)", seed002, "conditions",
        "Random conditions on 1 to 3 QI attributes, each asked for every sensitive value; errors are "
        "reported for the queries whose answer is at least 0.1%, 0.5% and 1% of the table.",
        params=(Param("conditions", "C", "Number of random conditions (each asked for every sensitive value).",
                      200, kind="int", low=1, high=5000, paper="seed 002 appendix 10.9: 200"), MAX_ATTRS, SEED),
        paper="seed 002 appendix 10.9", order=20),
]
