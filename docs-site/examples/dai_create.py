"""Create Driverless AI engines from a profile and a version.

Creates a CPU engine with the "standard" profile and the version that "latest" points
at, checking the request first, and a GPU engine with the "gpu" profile.
"""

import os

import h2o_engine_manager

clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"],
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
    default_workspace_id="default",
)
dai = clients.dai_engine_client

settings = dict(
    engine_id="churn-model",
    display_name="Churn model",
    profile="workspaces/global/daiEngineProfiles/standard",
    dai_engine_version="workspaces/global/daiEngineVersions/latest",
    cpu=8,
    memory_bytes="32Gi",
    max_idle_duration="2h",
    config={"max_runtime_minutes": "600"},
    annotations={"team": "retention"},
)

# validate_only checks the request against the profile without creating anything.
preview = dai.create_engine(validate_only=True, **settings)
print(f"would create {preview.name} with {preview.storage_bytes} of storage")

engine = dai.create_engine(**settings)
print(f"{engine.name}: {engine.state.value}")

# Block until the engine runs (or fails); it checks every five seconds.
engine.wait(timeout_seconds=600)
print(f"{engine.display_name} is {engine.state.value}: open {engine.login_url}")
print(
    f"  version {engine.dai_engine_version} "
    f"(image {engine.dai_engine_version_info.image})"
)
print(
    f"  cpu {engine.cpu}, gpu {engine.gpu}, "
    f"memory {engine.memory_bytes}, storage {engine.storage_bytes}"
)
print(
    f"  pauses after {engine.max_idle_duration} idle "
    f"or {engine.max_running_duration} running"
)
print(f"  config {engine.config}")

# A GPU engine: the "gpu" profile is assigned to the gpu-users role and sets one GPU
# by default.
gpu_engine = dai.create_engine(
    engine_id="image-classifier",
    display_name="Image classifier",
    profile="workspaces/global/daiEngineProfiles/gpu",
    dai_engine_version="workspaces/global/daiEngineVersions/latest",
    gpu=2,
)
gpu_engine.wait(timeout_seconds=600)
print(
    f"{gpu_engine.name}: gpu {gpu_engine.gpu}, cpu {gpu_engine.cpu}, "
    f"memory {gpu_engine.memory_bytes}"
)
