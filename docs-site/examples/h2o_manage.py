"""List H2O engines, terminate one, and delete it."""

import os

import h2o_engine_manager
from h2o_engine_manager.clients.h2o_engine.state import H2OEngineState

clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"],
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
    default_workspace_id="default",
)
h2o = clients.h2o_engine_client

for engine in h2o.list_all_engines(
    filter="node_count >= 2", order_by="create_time desc"
):
    print(f"{engine.display_name}: {engine.node_count} nodes, {engine.state.value}")

engine = h2o.get_engine(engine_id="credit-risk")

# The newest lines of every node's log, under a header line per node and container.
logs = engine.download_logs()
print(logs.splitlines()[0])

# An H2O engine does not pause: terminating stops its cluster for good (its data is in
# memory).
engine.terminate()
engine.wait(timeout_seconds=600)
print(f"{engine.name}: {engine.state.value}")


# A terminated engine stays listed until it is deleted.
engine.delete()
print(f"deleting {engine.name}: {engine.state is H2OEngineState.STATE_DELETING}")
engine.wait(timeout_seconds=600)
print("remaining:", [e.display_name for e in h2o.list_all_engines()])
