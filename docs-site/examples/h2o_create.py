"""Size an H2O engine for a dataset, then create it."""

import os

import h2o_engine_manager
from h2o_engine_manager.clients.h2o_engine.size import H2OEngineSizeLimits

clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"],
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
    default_workspace_id="default",
)
h2o = clients.h2o_engine_client

# Stay within what the profile allows per node and per cluster.
limits = H2OEngineSizeLimits(
    memory_bytes_per_node_min="2Gi",
    memory_bytes_per_node_max="64Gi",
    node_count_min=1,
    node_count_max=8,
)

# A 30 GiB CSV file needs about four times its size in cluster memory.
size = h2o.calculate_h2o_engine_size_raw_dataset(
    dataset_size_bytes="30Gi", limits=limits
)
print(f"30Gi raw dataset: {size.node_count} nodes with {size.memory_bytes} each")

# 200 million rows of 50 columns, as H2O holds them once parsed and compressed.
compressed = h2o.calculate_h2o_engine_size_compressed_dataset(
    rows_count=200_000_000, columns_count=50, limits=limits
)
print(
    f"200M x 50 dataset: {compressed.node_count} nodes "
    f"with {compressed.memory_bytes} each"
)

engine = h2o.create_engine(
    engine_id="credit-risk",
    display_name="Credit risk",
    profile="workspaces/global/h2oEngineProfiles/standard",
    h2o_engine_version="workspaces/global/h2oEngineVersions/latest",
    node_count=size.node_count,
    memory_bytes=size.memory_bytes,
    cpu=8,
)
print(f"{engine.name}: {engine.state.value}")
engine.wait(timeout_seconds=600)
print(f"{engine.display_name} is {engine.state.value}: H2O Flow at {engine.login_url}")
print(f"  {engine.node_count} nodes x ({engine.cpu} cpu, {engine.memory_bytes} memory)")
print(
    f"  version {engine.h2o_engine_version}, "
    f"terminates after {engine.max_idle_duration} idle"
)

# Settings for h2o.connect() of the H2O-3 Python package (`pip install h2o`).
config = engine.get_connection_config()
print(
    f"h2o.connect(config=...) with ip {config['ip']}, "
    f"context_path {config['context_path']}"
)
