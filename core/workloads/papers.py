"""The count-query workloads of seeds 000 and 002 (generators in :mod:`core.workload`)."""

from ..params import Param
from ..workload import joint, seed000, seed002
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
    WorkloadKind(
        "joint", "Joint counts on two sensitive attributes (seed 000 Fig. 12)", joint, "queries",
        "Conditions on 1 or 2 QI attributes plus a value of the sensitive attribute AND a value of a second one "
        "(sa2, e.g. age_interval on census-2sa). Only SPLU-Gen sanitized with the same sa2 publishes both, and "
        "answers them with the 8-state reconstruction of seed 000 §5.2. Half the queries are small counts (1 to "
        "10), half are spread over selectivity bands (default seed 000 §6.4's 0.1% to 0.7%).",
        params=(Param("sa2", "S₂", "The second sensitive column (neither the sensitive attribute nor a QI); the "
                      "Query error page fills in SPLU-Gen's sa2.", None, kind="text", optional=True,
                      paper="seed 000 §6.4: Age in ten intervals"),
                Param("queries", "Q", "Number of queries (half small counts, half over the selectivity bands).",
                      2000, kind="int", low=2, high=50_000, paper="seed 000 §6.1: pools of 5,000"),
                Param("edges", "s", "Edges of the selectivity bands (fractions of the table), comma separated.",
                      "0.001,0.002,0.003,0.004,0.005,0.006,0.007", kind="text",
                      paper="seed 000 §6.4: selectivity 0.1%-0.7%"),
                Param("max_attrs", "d", "Largest number of QI attributes in one query's condition.", 2, kind="int",
                      low=1, high=8, paper="seed 000 §6.1: up to 3 (2 here: see core.workload.joint)"),
                SEED),
        paper="seed 000 §5.2, §6.4", order=15),
]
