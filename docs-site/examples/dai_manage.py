"""Find, change, pause, resume, resize and delete Driverless AI engines."""

import os
from datetime import datetime

import h2o_engine_manager
from h2o_engine_manager.clients.dai_engine.expression import (
    CreateTime,
    Cpu,
    FilterBuilder,
    MemoryBytes,
)
from h2o_engine_manager.clients.exception import CustomApiException

clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"],
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
    default_workspace_id="default",
)
dai = clients.dai_engine_client

# A filter in the AIP-160 grammar, written by hand or composed with FilterBuilder.
page = dai.list_engines(filter="gpu > 0 OR cpu >= 8", order_by="cpu desc, name")
print(f"{page.total_size} engines:", [engine.display_name for engine in page.engines])
big = (
    FilterBuilder()
    .WithFilter(Cpu().GreaterThanOrEqualTo(4))
    .WithFilter(MemoryBytes().GreaterThan("16Gi"))
    .WithFilter(CreateTime().GreaterThan(datetime(2025, 1, 1)))
    .Build()
)
print(
    f"filter {big!r}:",
    [
        engine.display_name
        for engine in dai.list_all_engines(filter=big, order_by="display_name")
    ],
)

engine = dai.get_engine(engine_id="churn-model")

# Only the fields named in update_mask change; the profile's limits still apply.
engine.display_name = "Churn model (Q3)"
engine.cpu = 12
engine.update(update_mask="display_name,cpu")
print(f"{engine.display_name}: cpu {engine.cpu}")
engine.wait(timeout_seconds=600)  # the engine restarts with its new resources
try:
    engine.cpu = 64
    engine.update(update_mask="cpu")
except CustomApiException as error:
    print("refused:", error)

# Pausing stops the engine's pod and keeps its data.
engine.pause()
engine.wait(timeout_seconds=600)
print(f"{engine.display_name} is {engine.state.value}")

# Storage only grows; a resize may take a while (storage_resizing is True meanwhile).
engine.resize_storage(new_storage="128Gi")
print(f"storage {engine.storage_bytes}")

# Resuming starts it again, with the same data.
engine.resume()
engine.wait(timeout_seconds=600)
print(f"{engine.display_name} is {engine.state.value}")

# The newest lines of each container's log, under a header line per container.
logs = engine.download_logs()
print(logs.splitlines()[0])

engine.delete()
print(f"deleting {engine.name}: {engine.state.value}")
engine.wait(timeout_seconds=600)  # returns once the engine and its data are gone
print("remaining:", [e.display_name for e in dai.list_all_engines()])
