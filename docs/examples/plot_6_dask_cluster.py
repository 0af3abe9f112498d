"""
Run a comparison on a dask cluster
==================================

:func:`eomcompare.compare.run` runs its cases on any
:class:`concurrent.futures.Executor`.  A dask ``Client`` provides one with
``client.get_executor()``, so a comparison spreads over a cluster without
any other change; from the command line, ``python -m eomcompare run
--scheduler tcp://host:8786`` does the same (``pip install -e
'.[cluster]'``).

To keep this page quick to build, the "cluster" is a ``LocalCluster`` of
one in-process worker; with a real scheduler address nothing else
changes.
"""

# %%
# Start (or connect to) a cluster
# -------------------------------
from dask.distributed import Client, LocalCluster

cluster = LocalCluster(
    n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
)
client = Client(cluster)
print(client)

# %%
# Run the comparison on it
# ------------------------
# Every case (system variant, formulation) is one task; rows come back as
# the tasks finish.  Agreement with the reference is computed once all
# are in, exactly as with the default process pool.
# ``get_task_stream`` records what the cluster ran, to show the work went
# there.
from dask.distributed import get_task_stream

from eomcompare import compare

with get_task_stream(client) as stream:
    result = compare.run(
        ["double_pendulum", "rotating_tube"],
        ["kane", "lagrange", "gibbs_appell"],
        executor=client.get_executor(),
        t_final=1.0,
        n_samples=51,
        progress=False,
        use_cache=False,
    )
print(result)
print(
    result.frame[
        ["system", "formulation", "status", "ops_cse", "qdd_max_rel_dev"]
    ].to_string(index=False)
)

assert len(result.frame) == 6
assert (result.frame["status"] == "ok").all()
assert (result.frame["qdd_max_rel_dev"] < 1e-10).all()

print("tasks run on the cluster:", len(stream.data))
assert len(stream.data) == 6

client.close()
cluster.close()
